#!/usr/bin/env python3
"""What a failing change costs: `git eyeful` against the suite's own time, focused base runs on.

Builds a throwaway repository with a synthetic suite of about 60 s x --scale (parametrised tests
that sleep) and stages a change that breaks 3 of them. Then, each time with `--no-cache` on warm
worktrees:

  1. `test_one` configured, `reruns` as given (default 3): the suite runs on the change, then only
     the 3 failing tests run, alone, `reruns` times on each side (the focused base run and the
     live confirmation are the same runs);
  2. the same with `reruns = 1`;
  3. no `test_one`: the whole suite runs on the base too (the fallback, and what every failing
     change cost before the focused base run).

For each: the wall time of the whole `git eyeful` run as a ratio to the change's suite run in the
same report (goal for 1: < 1.2x), and the seconds of the `test_one` runs (the confirmation).

Never touches the real user's configuration (HOME, XDG_CONFIG_HOME point into the temp dir). Exit
code 0 unless the benchmark breaks: it is a measurement, not a test.

    .venv/bin/python benchmarks/bench_focused.py [--scale 1.0] [--reruns 3] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT / "benchmarks"))

from public_regressions import clean_env  # noqa: E402

TARGET = 1.2
TESTS = 300
SUITE_SECONDS = 60.0
BROKEN = 3


def _python() -> str:
    venv = PROJECT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _env(home: Path) -> dict[str, str]:
    return clean_env(home, Path(_python()).parent)


def _git(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _config(pytest: str, test_one: bool, reruns: int) -> str:
    lines = ["[tool.eyeful]", f"reruns = {reruns}", "[tool.eyeful.commands]", f"test = {pytest!r}"]
    if test_one:
        lines.append(f"test_one = {pytest + ' {test}'!r}")
    return "\n".join(lines) + "\n"


def _suite(scale: float) -> str:
    pause = SUITE_SECONDS * scale / TESTS
    return f"""import time

import pytest

from pkg import value


@pytest.mark.parametrize("i", range({TESTS}))
def test_value(i):
    time.sleep({pause!r})
    assert value(i) == i
"""


def _make_repo(root: Path, env: dict[str, str], scale: float) -> tuple[Path, str]:
    repo = root / "repo"
    (repo / "tests").mkdir(parents=True)
    pytest = f"{shlex.quote(_python())} -m pytest -q -p no:cacheprovider"
    (repo / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    (repo / "pkg.py").write_text("def value(i):\n    return i\n")
    (repo / "tests" / "test_slow.py").write_text(_suite(scale))
    (repo / "pyproject.toml").write_text(_config(pytest, True, 3))
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", "-A")
    _git(repo, env, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base")
    broken = f"def value(i):\n    return i + (1 if i < {BROKEN} else 0)\n"
    (repo / "pkg.py").write_text(broken)
    _git(repo, env, "add", "pkg.py")
    return repo, pytest


def _measure(repo: Path, env: dict[str, str], jobs: int) -> dict[str, float | int]:
    subprocess.run(["git", "eyeful", "confirm", "--yes"], cwd=repo, env=env, check=True,
                   capture_output=True)  # fmt: skip
    started = time.monotonic()
    proc = subprocess.run(
        ["git", "eyeful", "--format", "json", "--no-cache", "-j", str(jobs)],
        cwd=repo, env=env, capture_output=True, text=True,
    )  # fmt: skip
    wall = time.monotonic() - started
    report = json.loads(proc.stdout)
    runs = report["runs"]
    suite = next(r["duration"] for r in runs if r["side"] == "change" and r["name"] == "test")
    one = [r["duration"] for r in runs if r["name"] == "test_one"]
    base = [r["duration"] for r in runs if r["side"] == "base" and r["name"] == "test"]
    return {
        "exit": proc.returncode,
        "blocking": report["blocking"],
        "wall": wall,
        "suite": suite,
        "ratio": wall / suite,
        "test_one_runs": len(one),
        "test_one_seconds": sum(one),
        "base_suite_seconds": sum(base),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="suite time / 60 s")
    parser.add_argument("--reruns", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="eyeful-bench-focused-") as tmp:
        root = Path(tmp)
        env = _env(root / "home")
        repo, pytest = _make_repo(root, env, args.scale)
        # Warm the worktrees (created, checked out once) so the figures are the runs.
        (repo / "pyproject.toml").write_text(_config(pytest, True, 1))
        _measure(repo, env, args.jobs)
        results = {}
        for name, test_one, reruns in (
            (f"focused, reruns={args.reruns}", True, args.reruns),
            ("focused, reruns=1", True, 1),
            ("no test_one: whole suite on the base", False, args.reruns),
        ):
            (repo / "pyproject.toml").write_text(_config(pytest, test_one, reruns))
            results[name] = _measure(repo, env, args.jobs)
    print(f"suite: {TESTS} tests, ~{SUITE_SECONDS * args.scale:.0f} s; the change breaks {BROKEN}")
    print(f"{'variant':40} {'exit':>4} {'wall s':>7} {'suite s':>7} {'ratio':>6} "
          f"{'test_one':>8} {'t1 s':>6} {'base s':>6}")  # fmt: skip
    for name, r in results.items():
        print(f"{name:40} {r['exit']:>4} {r['wall']:>7.1f} {r['suite']:>7.1f} {r['ratio']:>5.2f}x "
              f"{r['test_one_runs']:>8} {r['test_one_seconds']:>6.1f} "
              f"{r['base_suite_seconds']:>6.1f}")  # fmt: skip
    first = next(iter(results.values()))
    verdict = "met" if first["ratio"] < TARGET else "MISSED"
    print(f"goal: focused run < {TARGET}x the suite's own time: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
