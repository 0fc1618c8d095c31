#!/usr/bin/env python3
"""What eyeful's pytest probe costs a run: 2,000 fast tests with and without it.

Generates a project of 20 modules x 100 trivial tests (a few parametrized, a few printing) in a
temp dir and runs `python -m pytest -q -p no:cacheprovider` on it, interleaved: without the probe
and with it (PYTHONPATH + PYTEST_PLUGINS=eyeful_probe + EYEFUL_PROBE_DIR, as
eyeful.pytest_records' plugin_env gives them: no tracer, as on a review's suite run), and with
`--tracers` also with each tracer eyeful turns on where a verdict needs it: the map's
(EYEFUL_PROBE_MAP, a full run of a review with `select = "affected"`) and the change's-lines
(EYEFUL_PROBE_TRACE watching every line of one test module, as a reproduction's runs watch the
lines a change touched). Several repetitions each, plus one untimed warm-up first. Third-party
plugin autoloading is off in all (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1) so that they differ by the
probe alone. Prints min and median wall and CPU time of each and the ratio to the run without.

Goal: the probe without a tracer, median ratio <= 1.05. A measurement, not a test: exits 0
unless the runs themselves break (a run that does not pass, a probe record that misses tests).

Figures on the 2-core development machine (Python 3.11, pytest 9.2), `--repeat 9`, 2026-12-04,
shared by 4-5 engineers (load 9.6 to 12.2: the wall figures mean little; CPU is the figure):

    --tests 2000:                       cpu median 2.478 s without, 2.471 s with: 0.997
    --tests 200 --tracers, cpu median ratio to the run without (0.557 s):
      probe, no tracer (a suite run)                        1.095
      probe + the map's tracer (select = "affected")        1.837
      probe + the change's-lines tracer (a reproduction)    3.023

After the merges of 2026-12-04 (the probe named through PYTEST_ADDOPTS only for a command that
sets PYTEST_PLUGINS: on every run it made this 1.15-1.20), `--repeat 9`, load 0.5:

    --tests 2000:                       cpu median 1.983 s without, 1.998 s with: 1.008

After the change's-lines tracer was limited to test modules' imports and tests' phases (pytest's
own work between them untraced), `--repeat 5`, 2026-12-04, load 2.3:

    --tests 200 --tracers, cpu median ratio to the run without (0.399 s):
      probe, no tracer (a suite run)                        1.057
      probe + the map's tracer (select = "affected")        1.732
      probe + the change's-lines tracer (a reproduction)    2.205 (3.023 before)

and a one-test reproduction run costs 0.34 s of CPU instead of 0.58 s (0.25 s without a tracer).

Tracing again from the probe's import to the run's end (helper-74: a conftest's report hook, a
plugin's hooks between tests, run the change too), 2026-12-07, a one-test run of a 100-test
module, median of 9, interleaved: 0.476 s against 0.433 s traced in the phases alone (0.228 s
untraced).

With the map of what each test could see (issue 32: fixtures, files opened or loaded by name, the
import graph), `--repeat 5`, 2026-12-05, load 7, interleaved with the version before:

    --tests 200 --tracers, the map's tracer: 1.570 and 1.525 (before: 1.504 and 1.502)
    after the merge with the coverage map, load 5: 1.609 and 1.586 (before: 1.482 and 1.421)

(its trace function reads a frame's module file, not ``f_code``: reading ``f_code`` is an audit
event from 3.11, and with the map's audit hook installed that had made it 2.07).

With the map's marks in place of its tracer before Python 3.12 (eyeful_probe_marks.py: a store at
each function's start in the repository's own modules, no sys.settrace), `--repeat 5`,
2026-12-06, load 0.8:

    --tests 200 --tracers, cpu median ratio to the run without (0.219 s):
      probe, no tracer (a suite run)                        1.042
      probe + the map's marks (select = "affected")         1.143 (1.53-1.61 with the tracer)
      probe + the change's-lines tracer (a reproduction)    1.869

On a suite of 200 fast tests the probe's fixed start-up shows (about 50 ms); the map costs, on
Python 3.11, a store per call of the repository's own functions and the parse of the import
graph (kept in eyeful's cache between runs); the change's-lines tracer a call event everywhere
and a line event in the watched files.

    .venv/bin/python benchmarks/bench_probe.py [--repeat 9] [--tests 2000] [--tracers]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from eyeful.pytest_records import MAP_VAR, TRACE_VAR, plugin_env, read_pytest  # noqa: E402

GOAL = 1.05
PER_MODULE = 100


def make_project(root: Path, tests: int) -> None:
    tests_dir = root / "tests"
    tests_dir.mkdir(parents=True)
    modules = max(1, tests // PER_MODULE)
    for number in range(modules):
        lines = ["import pytest", ""]
        for index in range(PER_MODULE - 10):
            lines += [f"def test_{index}():", f"    assert {index} + 1 == {index + 1}", ""]
        lines += [
            "@pytest.mark.parametrize('value', range(5))",
            "def test_param(value):",
            "    assert value >= 0",
            "",
            "class TestGroup:",
        ]
        for index in range(4):
            lines += [f"    def test_method_{index}(self):", "        print('a line')", ""]
        lines += ["def test_last(tmp_path_factory):", "    pass", ""]
        (tests_dir / f"test_mod{number:03d}.py").write_text("\n".join(lines), encoding="utf-8")


def run(root: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one pytest run."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert proc.stdout is not None
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"pytest failed ({proc.returncode}):\n{output[-2000:].decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime


def variants(root: Path, records: Path, base: dict[str, str]) -> dict[str, dict[str, str]]:
    """The runs compared: without the probe; with it as a review's suite run loads it (no
    tracer); with the map's watch (a full run of a review with `select = "affected"`); with the
    change's-lines tracer (a reproduction's run), watching every line of one test module."""
    probed = {**base, **plugin_env(records, base)}
    spec = root.parent / "trace.json"
    watched = root / "tests" / "test_mod000.py"
    count = len(watched.read_text(encoding="utf-8").splitlines())
    spec.write_text(json.dumps({str(watched): list(range(1, count + 1))}), encoding="utf-8")
    return {
        "without": base,
        "with": probed,
        "map": {**probed, MAP_VAR: str(root)},
        "lines": {**probed, TRACE_VAR: str(spec)},
    }


LABELS = {
    "without": "without the probe",
    "with": "probe, no tracer (a suite run)",
    "map": "probe + the map's marks or tracer (select = affected)",
    "lines": "probe + the change's-lines tracer (a reproduction)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--tracers", action="store_true", help="also time each tracer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="eyeful-bench-probe-") as tmp:
        root = Path(tmp) / "project"
        make_project(root, args.tests)
        base = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("PYTEST_", "EYEFUL_PROBE"))
        }
        base["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        base.pop("PYTHONDONTWRITEBYTECODE", None)  # rewritten test modules cached, as usual
        records = Path(tmp) / "records"
        envs = variants(root, records, base)
        if not args.tracers:
            envs = {name: envs[name] for name in ("without", "with")}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in envs}
        for turn in range(args.repeat + 1):
            order = list(envs.items())
            for name, env in order if turn % 2 else reversed(order):
                for stale in records.glob("*.jsonl"):
                    stale.unlink()
                measured = run(root, env)
                if name == "with":
                    record = read_pytest(records)
                    if record is None or len(record.tests) != len(record.collected):
                        sys.exit("the probe's record is incomplete")
                if turn:  # the first turn warms the caches
                    times[name].append(measured)
        count = len(record.tests)
    print(f"{count} tests, {args.repeat} runs each, interleaved; load {os.getloadavg()[0]:.2f}")
    for index, what in ((0, "wall"), (1, "cpu")):
        without = statistics.median(pair[index] for pair in times["without"])
        for name, pairs in times.items():
            mid = statistics.median(pair[index] for pair in pairs)
            low = min(pair[index] for pair in pairs)
            goal = f"   (goal <= {GOAL})" if name == "with" else ""
            print(f"{what:4}  {LABELS[name]:<52} min {low:.3f} s  median {mid:.3f} s  "
                  f"ratio {mid / without:.3f}{goal}")  # fmt: skip


if __name__ == "__main__":
    main()
