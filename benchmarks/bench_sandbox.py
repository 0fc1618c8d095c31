#!/usr/bin/env python3
"""What the sandbox costs a reproduction run: the same 1 s pytest run with and without bubblewrap.

Writes a project with one test that computes for about a second, and runs
`python -m pytest -q -p no:cacheprovider` on it through eyeful's own `run_command`, alternately
without and inside the sandbox eyeful gives reproductions (eyeful/sandbox.py: read-only root,
the project and a private TMPDIR/HOME writable, no network, its own pid namespace), after one
untimed warm-up of each. Prints the min and median wall time of each and their ratios.

Goal: median ratio <= 1.1. A measurement, not a test: exits 0 unless the runs themselves break
(a run that does not pass), and 0 with a message where no sandbox can be had.

Figures on the 2-core development machine (Python 3.11, bubblewrap 0.8), `--repeat 5`,
2026-12-03, with other developers' test runs on the machine (load 4 to 5):

    without sandbox: min 1.392 s  median 1.507 s
    in the sandbox:  min 1.458 s  median 1.492 s
    ratio:           min 1.048    median 0.990   (goal <= 1.1)

2026-12-04, with every capability dropped (`--cap-drop ALL`, as root `nobody` in a user
namespace) and the record written through a descriptor, `--repeat 7`, load 9 to 10:

    without sandbox: min 2.146 s  median 2.341 s
    in the sandbox:  min 2.272 s  median 2.449 s
    ratio:           min 1.059    median 1.046   (goal <= 1.1)

    .venv/bin/python benchmarks/bench_sandbox.py [--repeat 7] [--seconds 1.0]
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from eyeful import sandbox  # noqa: E402
from eyeful.shell import project_env, run_command  # noqa: E402

TEST = """import time


def test_computes_for_a_while():
    end = time.perf_counter() + {seconds}
    n = 0
    while time.perf_counter() < end:
        n += 1
    assert n > 0
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seconds", type=float, default=1.0)
    args = parser.parse_args()
    why = sandbox.unavailable()
    if why is not None:
        print(f"no sandbox here: {why}")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as scratch:
        root = Path(scratch)
        project = root / "project"
        project.mkdir()
        (project / "test_slow.py").write_text(TEST.format(seconds=args.seconds), "utf-8")
        private = root / "private"
        jail = sandbox.Jail(private)
        command = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
        env = {**project_env(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}

        def once(sandboxed: bool) -> float:
            started = time.perf_counter()
            result = run_command(
                command, project, timeout=120, env=env, jail=jail if sandboxed else None
            )
            if result.status != "PASSED":
                raise SystemExit(f"the run did not pass (sandboxed={sandboxed}):\n{result.tail}")
            return time.perf_counter() - started

        once(False), once(True)  # warm-up
        plain: list[float] = []
        boxed: list[float] = []
        for _ in range(args.repeat):
            plain.append(once(False))
            boxed.append(once(True))
    print(f"without sandbox: min {min(plain):.3f} s  median {statistics.median(plain):.3f} s")
    print(f"in the sandbox:  min {min(boxed):.3f} s  median {statistics.median(boxed):.3f} s")
    ratio_min = min(boxed) / min(plain)
    ratio_median = statistics.median(boxed) / statistics.median(plain)
    print(f"ratio:           min {ratio_min:.3f}    median {ratio_median:.3f}   (goal <= 1.1)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
