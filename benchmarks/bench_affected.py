#!/usr/bin/env python3
"""What `select = "affected"` saves, and what recording its map costs (issue 23, point 4).

Builds a throwaway repository of 50 modules, each with its own test file (the suite about 24 s
x --scale: tests that sleep, and call their module's function a few thousand times so that the
map's call tracing has calls to see), then:

  1. stages a change to one module and reviews it: there is no map yet, so this is the full
     review, whose full run records the map (a review with `--select all` records none); the
     change is committed (its tree has the map);
  2. stages a change to another module and reviews it with `select = "affected"`: only that
     module's tests run. The ratio of its wall time to the full review's (goal <= 0.15);
  3. runs the test command directly with eyeful's probe loaded, the map on against off
     (EYEFUL_PROBE_MAP), --repeat times each, alternating: the ratio of the medians (goal
     <= 1.15x).

Never touches the real user's configuration (HOME, XDG_CONFIG_HOME point into the temp dir). Exit
code 0 unless the benchmark breaks: it is a measurement, not a test.

    .venv/bin/python benchmarks/bench_affected.py [--scale 1.0] [--repeat 3] [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "benchmarks"))

from public_regressions import clean_env  # noqa: E402

from eyeful import pytest_records  # noqa: E402  (the probe's variables, as eyeful sets them)

MODULES = 50
TESTS_EACH = 4
SUITE_SECONDS = 24.0
CALLS = 5000
RATIO_GOAL, COST_GOAL = 0.15, 1.15


def _python() -> str:
    venv = PROJECT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _env(home: Path) -> dict[str, str]:
    return clean_env(home, Path(_python()).parent)


def _git(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _test_file(n: int, pause: float) -> str:
    return f"""import time

import pytest

from pkg import m{n:02d}


@pytest.mark.parametrize("i", range({TESTS_EACH}))
def test_value(i):
    time.sleep({pause!r})
    assert sum(m{n:02d}.value(k) for k in range({CALLS})) == sum(range({CALLS})) + {CALLS} * {n}
"""


def _make_repo(root: Path, env: dict[str, str], scale: float) -> tuple[Path, str]:
    repo = root / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pkg").mkdir()
    pytest = f"{shlex.quote(_python())} -m pytest -q -p no:cacheprovider"
    (repo / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    (repo / "pkg" / "__init__.py").write_text("")
    pause = SUITE_SECONDS * scale / (MODULES * TESTS_EACH)
    for n in range(MODULES):
        (repo / "pkg" / f"m{n:02d}.py").write_text(f"def value(k):\n    return k + {n}\n")
        (repo / "tests" / f"test_m{n:02d}.py").write_text(_test_file(n, pause))
    (repo / "pyproject.toml").write_text(
        f'[tool.eyeful]\nselect = "affected"\n[tool.eyeful.commands]\ntest = {pytest!r}\n'
        f"test_one = {pytest + ' {test}'!r}\n"
    )
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-qm", "base")
    subprocess.run(["git", "eyeful", "confirm", "--yes"], cwd=repo, env=env, check=True,
                   capture_output=True)  # fmt: skip
    return repo, pytest


def _touch(repo: Path, env: dict[str, str], n: int) -> None:
    path = repo / "pkg" / f"m{n:02d}.py"
    path.write_text(path.read_text() + "# touched\n")
    _git(repo, env, "add", "-A")


def _review(repo: Path, env: dict[str, str], jobs: int, *args: str) -> tuple[float, dict]:
    started = time.monotonic()
    proc = subprocess.run(
        ["git", "eyeful", "--format", "json", "-j", str(jobs), *args],
        cwd=repo, env=env, capture_output=True, text=True,
    )  # fmt: skip
    wall = time.monotonic() - started
    if not proc.stdout:
        raise SystemExit(f"the review printed no report:\n{proc.stderr}")
    return wall, json.loads(proc.stdout)


def _suite_once(repo: Path, env: dict[str, str], pytest: str, mapped: bool, tmp: Path) -> float:
    probe = Path(tempfile.mkdtemp(dir=tmp))
    extra = pytest_records.plugin_env(probe, env)
    if mapped:
        extra[pytest_records.MAP_VAR] = str(repo)
    started = time.monotonic()
    subprocess.run(shlex.split(pytest), cwd=repo, env={**env, **extra}, check=True,
                   capture_output=True)  # fmt: skip
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="suite time x this (24 s at 1)")
    parser.add_argument("--repeat", type=int, default=3, help="runs each for the map's cost")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="eyeful-bench-affected-") as tmp:
        root = Path(tmp)
        env = _env(root / "home")
        repo, pytest = _make_repo(root, env, args.scale)

        _touch(repo, env, 0)
        full_wall, full = _review(repo, env, args.jobs)  # no map yet: the whole suite, mapped
        _git(repo, env, "commit", "-qm", "reviewed")
        _touch(repo, env, 7)
        sel_wall, selected = _review(repo, env, args.jobs)

        on: list[float] = []
        off: list[float] = []
        for _ in range(args.repeat):
            off.append(_suite_once(repo, env, pytest, False, root))
            on.append(_suite_once(repo, env, pytest, True, root))

    ratio = sel_wall / full_wall
    cost = statistics.median(on) / statistics.median(off)
    print(f"suite: {MODULES} modules x {TESTS_EACH} tests, ~{SUITE_SECONDS * args.scale:.0f} s "
          f"of sleep (--scale {args.scale}), jobs {args.jobs}")  # fmt: skip
    print(f"full review (no map yet: the whole suite, recording it): {full_wall:.1f} s, "
          f"exit {full['exit_code']}")  # fmt: skip
    chosen = selected.get("selection") or {}
    run = next((r for r in selected["runs"] if r["name"] == "test" and r["side"] == "change"), {})
    ran = sum((run.get("counts") or {}).values()) if chosen.get("ids") else "all"
    print(f"affected review: {sel_wall:.1f} s, exit {selected['exit_code']}, ran {ran} of "
          f"{chosen.get('map_tests')} tests ({chosen.get('why_all') or 'affected'})")  # fmt: skip
    print(f"ratio affected/full: {ratio:.3f} (goal <= {RATIO_GOAL})")
    print(f"test command, map off: {', '.join(f'{t:.2f}' for t in off)} s; "
          f"on: {', '.join(f'{t:.2f}' for t in on)} s")  # fmt: skip
    print(f"map cost (median on/off): {cost:.3f}x (goal <= {COST_GOAL}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
