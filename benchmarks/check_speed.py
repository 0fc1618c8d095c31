#!/usr/bin/env python3
"""CI's speed check (.ci/run): the two budgets a regression breaks first, measured so that load
cannot make it flake.

1. The cached rerun (`git-eyeful` on a change whose review is remembered: eyeful/cli/replay.py)
   against the import floor (`python -c "import typer, pydantic, pygit2, rich"`): <= 1.5 x. And,
   exactly, the replay imports none of those four (read from `sys.modules` after a real replay),
   and it was a replay (no review ran).
2. A 200-test pytest suite run with eyeful's probe (no tracer: as a review's suite run loads it)
   against the same run without: <= 1.2 x.

CPU time (user + system of each child and what it waited for), not wall time: a loaded machine
slows both sides of a ratio alike. Interleaved, one warm-up turn, median of 5. Prints both
figures; exits 1 when either is over its limit or the replay imports a heavy module, 2 when the
measurement itself breaks.

What it measures is the eyeful beside this script (its directory's parent goes first on
PYTHONPATH of every child), so a copy of the tree with a change can be checked as it is
(tests/test_check_speed.py does that with an import of pydantic put into the replay). The
children's PATH starts with this interpreter's directory: `python` there is the interpreter
itself, so a version manager's shims on the machine's PATH (pyenv's cost about 150 ms of CPU for
each interpreter the run cache's key asks, eyeful/environment.py) are not counted against eyeful.

    .venv/bin/python benchmarks/check_speed.py [--repeat 5] [--only rerun|probe]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(SOURCE))

import bench_probe  # noqa: E402
import bench_startup  # noqa: E402

RERUN_LIMIT = 1.5
PROBE_LIMIT = 1.2
PROBE_TESTS = 200
HEAVY = ("pydantic", "typer", "rich", "pygit2")

# `git-eyeful` as its console script starts it, then what the process holds.
_REPLAY_AND_MODULES = """
import json, sys
from eyeful.cli.launch import main
code = main()
sys.stdout.flush()
held = {"replayed": "eyeful.cli.replay" in sys.modules and "eyeful.review" not in sys.modules,
        "heavy": sorted(name for name in HEAVY if name in sys.modules)}
sys.stderr.write("modules: " + json.dumps(held) + "\\n")
sys.exit(code)
""".replace("HEAVY", repr(HEAVY))


class Broken(Exception):
    """The measurement itself failed: no figure."""


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as an install does
    path = [str(SOURCE), *(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p)]
    env.update(
        HOME=str(root), XDG_CONFIG_HOME=str(root / ".config"), GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b.invalid", GIT_COMMITTER_NAME="b",
        GIT_COMMITTER_EMAIL="b@b.invalid", PYTHONPATH=os.pathsep.join(path),
        PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
    )  # fmt: skip
    return env


def _median_ratio(
    turns: int, first: Callable[[], float], second: Callable[[], float]
) -> tuple[float, float]:
    """Medians of ``first`` and ``second``, interleaved (the order alternating), after one
    warm-up turn of each."""
    samples: tuple[list[float], list[float]] = ([], [])
    for turn in range(turns + 1):
        order = [(0, first), (1, second)]
        for index, measure in order if turn % 2 else reversed(order):
            value = measure()
            if turn:
                samples[index].append(value)
    return statistics.median(samples[0]), statistics.median(samples[1])


def _replay_modules(repo: Path, env: dict[str, str]) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-c", _REPLAY_AND_MODULES], cwd=repo, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)  # fmt: skip
    lines = [line for line in proc.stderr.splitlines() if line.startswith("modules: ")]
    if proc.returncode != 0 or not lines:
        raise Broken(f"the rerun exited {proc.returncode}: {proc.stderr[-500:]}")
    held: dict[str, object] = json.loads(lines[-1].removeprefix("modules: "))
    return held


def check_rerun(repeat: int) -> bool:
    with tempfile.TemporaryDirectory(prefix="eyeful-check-speed-") as tmp:
        root = Path(tmp)
        env = _env(root)
        repo = bench_startup._project(root, env)
        held = _replay_modules(repo, env)
        eyeful = [str(bench_startup.BIN / "git-eyeful")]
        base, rerun = _median_ratio(
            repeat,
            lambda: bench_startup._cpu_of(bench_startup.BASELINE, repo, env),
            lambda: bench_startup._cpu_of(eyeful, repo, env),
        )
    ratio = rerun / base
    ok = ratio <= RERUN_LIMIT
    print(f"cached rerun: {rerun * 1000:.0f} ms CPU = {ratio:.2f} x the import floor of "
          f"{', '.join(HEAVY)} ({base * 1000:.0f} ms); limit {RERUN_LIMIT} x: "
          f"{'ok' if ok else 'OVER'}")  # fmt: skip
    if not held["replayed"]:
        print("cached rerun: NOT A REPLAY (the review ran): the figure is not the replay's")
        return False
    if held["heavy"]:
        heavy = ", ".join(str(name) for name in held["heavy"])  # type: ignore[attr-defined]
        print(f"cached rerun: the replay path imported {heavy} "
              f"(none of {', '.join(HEAVY)} may be: eyeful/cli/replay.py)")  # fmt: skip
        return False
    print(f"cached rerun: the replay imported none of {', '.join(HEAVY)}")
    return ok


def check_probe(repeat: int) -> bool:
    with tempfile.TemporaryDirectory(prefix="eyeful-check-probe-") as tmp:
        root = Path(tmp) / "project"
        bench_probe.make_project(root, PROBE_TESTS)
        plain = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EYEFUL_"))}
        plain["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        plain.pop("PYTHONDONTWRITEBYTECODE", None)
        records = Path(tmp) / "records"
        probed = {**plain, **bench_probe.plugin_env(records, plain)}

        def run(env: dict[str, str]) -> float:
            for stale in records.glob("*.jsonl"):
                stale.unlink()
            return bench_probe.run(root, env)[1]

        without, with_probe = _median_ratio(repeat, lambda: run(plain), lambda: run(probed))
        record = bench_probe.read_pytest(records)
        if record is None or len(record.tests) != len(record.collected) or not record.finished:
            raise Broken("the probe's record is incomplete")
    ratio = with_probe / without
    ok = ratio <= PROBE_LIMIT
    print(f"suite run with the probe: {with_probe * 1000:.0f} ms CPU = {ratio:.2f} x without "
          f"({without * 1000:.0f} ms, {PROBE_TESTS} tests); limit {PROBE_LIMIT} x: "
          f"{'ok' if ok else 'OVER'}")  # fmt: skip
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=("rerun", "probe"))
    args = parser.parse_args()
    # The bundled example projects are data (eyeful demo copies them): never compiled here.
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-x", "examples",
                    str(SOURCE / "eyeful")], check=True)  # fmt: skip
    try:
        checks = [check for name, check in (("rerun", check_rerun), ("probe", check_probe))
                  if args.only in (None, name)]  # fmt: skip
        results = [check(args.repeat) for check in checks]
    except (Broken, RuntimeError, subprocess.CalledProcessError, SystemExit) as err:
        print(f"check_speed: the measurement broke: {err}", file=sys.stderr)
        return 2
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
