#!/usr/bin/env python3
"""Where the test suite's CPU goes: per module, per test and per xdist worker.

`--durations` gives wall time, which on a shared machine mostly measures the neighbours, and
misses that a test's cost is in the processes it starts (eyeful, the projects' pytest runs,
pip). tests/conftest.py writes one line per test when EYEFUL_SUITE_PROFILE names a file: the
CPU of the test's own process and of every process it started and waited for.

    EYEFUL_SUITE_PROFILE=/tmp/profile.jsonl .venv/bin/python -m pytest -n 3 -q
    .venv/bin/python benchmarks/suite_profile.py /tmp/profile.jsonl [--tests 30]

CPU seconds are comparable between runs on one machine in one state; compare two versions back
to back. The worker lines show how evenly `-n 3` shared the work (wall: the sum of the tests'
wall times on that worker; last: when its last test ended, in seconds since the first began).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--tests", type=int, default=30, help="how many of the costliest tests")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.profile.read_text().splitlines() if line.strip()]
    if not rows:
        print("no tests recorded")
        return 1
    cpu = {row["test"]: row["self"] + row["children"] for row in rows}
    total = sum(cpu.values())
    started = sum(row["children"] for row in rows)
    wall = sum(row["wall"] for row in rows)
    print(f"{len(rows)} tests, {total:.0f} s CPU ({started:.0f} s in the processes they started), "
          f"{wall:.0f} s wall summed")  # fmt: skip

    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for row in rows:
        entry = modules[row["test"].split("::")[0]]
        entry[0] += cpu[row["test"]]
        entry[1] += row["wall"]
        entry[2] += 1
    print("\nper module (CPU s, share, wall s, tests):")
    for name, (seconds, wall, count) in sorted(modules.items(), key=lambda kv: -kv[1][0]):
        print(f"  {seconds:7.1f}  {seconds / total:5.1%}  {wall:7.1f}  {int(count):4d}  {name}")

    print(f"\nthe {args.tests} costliest tests (CPU s, wall s):")
    for row in sorted(rows, key=lambda r: -cpu[r["test"]])[: args.tests]:
        print(f"  {cpu[row['test']]:6.1f}  {row['wall']:6.1f}  {row['test']}")

    start = min(row["end"] - row["wall"] for row in rows)
    workers: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for row in rows:
        entry = workers[row["worker"]]
        entry[0] += cpu[row["test"]]
        entry[1] += row["wall"]
        entry[2] = max(entry[2], row["end"] - start)
    print("\nper worker (CPU s, wall s, last):")
    for name, (seconds, wall, last) in sorted(workers.items()):
        print(f"  {name}: {seconds:7.1f}  {wall:7.1f}  {last:7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
