#!/usr/bin/env python3
"""How much time `git eyeful` takes on real projects, against their own suite (issue 35, point 8).

    python benchmarks/bench_real.py --source pluggy=$MIRRORS/pytest-dev+pluggy/repo \\
        --source sqlparse=$MIRRORS/andialbrecht+sqlparse/repo \\
        --source tinydb=$MIRRORS/msiemens+tinydb/repo [--repeat 5] [--finding-repeat 3]

Each source is a local git repository (a clone or a snapshot; nothing of it is stored here, and
nothing is written to it). Per project, in one temporary directory (HOME, XDG_CONFIG_HOME and
TMPDIR point into it; it is removed at the end unless --keep):

1. a clone; one commit there adds `eyeful_bench_double` (twice its argument, untested by the
   suite) to the project's largest module, so that a later change can break it unseen;
2. a virtualenv with the project installed editable (the user's), activated; `git eyeful init
   --yes` writes and confirms the commands it proposes; the proposed setup is run in that
   virtualenv too, so the suite run directly has what eyeful's runs have;
3. a cold review and a findings review to warm eyeful's worktrees, virtualenvs and setups.

Then it measures, interleaved round by round so that a change in the machine's load hits both
sides alike (median of the rounds' ratios; CPU is user + system of every process, read with
`getrusage`; wall too):

(a) a warm review of a passing change (a comment appended to that module, staged: a tree no
    run has seen) against the confirmed test command run directly in the clone;
(b) a review of a change that breaks `eyeful_bench_double` (the suite still passes) with one
    finding: a reproduction test that fails on the change and passes on the base, and a fix
    (all six gates run) against the same suite run.

Then one more review of each kind in this process, with a listener on eyeful's own progress
reports (eyeful.runs.Progress, what the terminal's display shows): where the wall time goes, by
the review's phases, by project command (setup, the suite, one test; change, base, fix) and
checkout, and what is left for eyeful itself; for (a) also bench_run.py's cProfile phases.
Goals (issue 35): warm <= 1.3x, one finding <= 4x the suite. A measurement, not a test: it
exits 0 unless the benchmark itself breaks.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from bench_run import _reexec_with_eyeful_python, cpu_timed, inside, profile_review  # noqa: E402
from public_regressions import clean_env  # noqa: E402

if TYPE_CHECKING:
    from eyeful.runs import Run

WARM_GOAL = 1.3
FINDING_GOAL = 4.0
FUNCTION = "eyeful_bench_double"
GOOD = f'\n\ndef {FUNCTION}(value):\n    """Twice ``value``."""\n    return value + value\n'
BROKEN = GOOD.replace("value + value\n", "value + value + 1\n")
DESCRIPTION = f"{FUNCTION} returns twice its argument."
REVIEW_IMPORTS = "eyeful.cli.app, eyeful.review, eyeful.report, eyeful.snapshot"  # bench_run's
SKIPPED_PARTS = {"test", "tests", "testing", "doc", "docs", "examples", "benchmarks", "scripts"}


def sh(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=cwd, env=env, text=True, capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{shlex.join(argv)} exited {proc.returncode}:\n{proc.stdout[-3000:]}"
            f"\n{proc.stderr[-3000:]}"
        )
    return proc


# --------------------------------------------------------------------------------------------
# One project, set up as a new user would


@dataclass
class Project:
    name: str
    root: Path  # its temporary directory
    repo: Path
    env: dict[str, str]
    module: str = ""  # the file the changes edit, repository-relative
    test: str = ""  # the confirmed test command
    setup: str | None = None
    revision: int = 0
    tests_dir: str = "tests"
    lines: list[str] = field(default_factory=list)  # what it is: printed before the figures

    def git(self, *args: str) -> str:
        return sh(["git", *args], self.repo, self.env).stdout

    def stage_change(self, broken: bool = False) -> str:
        """A comment added to the module (a tree no run has seen), ``eyeful_bench_double``
        broken too when asked; staged."""
        self.revision += 1
        path = self.repo / self.module
        text = self.git("show", f"HEAD:{self.module}")
        if broken:
            text = text.replace(GOOD, BROKEN)
        # On top: the function stays the file's end, where the fix's hunk (no context) is.
        path.write_text(f"# eyeful bench revision {self.revision}\n{text}", encoding="utf-8")
        self.git("add", "--", self.module)
        return self.module

    def finding(self) -> dict[str, Any]:
        """One finding on the broken change: a new reproduction test and its fix."""
        dotted = PurePosixPath(self.module).with_suffix("").parts
        if dotted[0] == "src":
            dotted = dotted[1:]
        importable = ".".join(p for p in dotted if p != "__init__")
        code = (
            f"from {importable} import {FUNCTION}\n\n\n"
            f"def test_{FUNCTION}():\n"
            f"    assert {FUNCTION}(2) == 4, '{FUNCTION} is off by one'\n"
        )
        # GOOD's return line on the change, one line below the revision comment.
        start = len(self.git("show", f"HEAD:{self.module}").splitlines()) + 1
        diff = (
            f"--- a/{self.module}\n+++ b/{self.module}\n@@ -{start} +{start} @@\n"
            f"-    return value + value + 1\n+    return value + value\n"
        )
        return {
            "id": "off-by-one",
            "expert": "correctness",
            "severity": "error",
            "evidence": "test",
            "path": self.module,
            "line": start,
            "end_line": start,
            "title": f"{FUNCTION} adds one",
            "body": f"`{FUNCTION}(2)` is 5; the description says it returns twice its argument.",
            "oracle": {"kind": "specified", "quote": "returns twice its argument"},
            "repro": {
                "path": f"{self.tests_dir}/test_eyeful_bench_finding.py",
                "code": code,
                "fails": f"{FUNCTION} is off by one",
                "test": None,
            },
            "fix": {"diff": diff},
        }


def largest_module(project: Project) -> str:
    """The project's largest Python module outside its tests, documentation and scripts."""
    files = project.git("ls-files", "-z", "--", "*.py").split("\0")
    candidates = [
        f
        for f in files
        if f
        and not SKIPPED_PARTS.intersection(PurePosixPath(f).parts[:-1])
        and not PurePosixPath(f).name.startswith(("test_", "conftest", "setup"))
    ]
    return max(candidates, key=lambda f: (project.repo / f).stat().st_size)


def tests_dir(project: Project) -> str:
    """The directory of the project's first test file (where the reproduction goes)."""
    files = project.git("ls-files", "-z", "--", "*test_*.py").split("\0")
    found = sorted(f for f in files if f and PurePosixPath(f).name.startswith("test_"))
    return str(PurePosixPath(found[0]).parent) if found else "tests"


def prepare(name: str, source: str, work: Path, eyeful_bin: Path) -> Project:
    root = work / name
    home = root / "home"
    venv = root / "venv"
    env = clean_env(home, eyeful_bin.parent)
    (root / "tmp").mkdir(parents=True)
    env.update(
        TMPDIR=str(root / "tmp"),
        VIRTUAL_ENV=str(venv),
        PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}",
    )
    sh(["git", "clone", "-q", source, str(root / "repo")], work, env)
    project = Project(name, root, root / "repo", env)
    project.module = largest_module(project)
    project.tests_dir = tests_dir(project)
    path = project.repo / project.module
    path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n" + GOOD, encoding="utf-8")
    project.git("commit", "-q", "-m", f"bench: {FUNCTION}", "--", project.module)

    base_python = getattr(sys, "_base_executable", sys.executable)  # not eyeful's virtualenv
    sh([base_python, "-m", "venv", str(venv)], root, env)
    pip = ["python", "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    sh([*pip, "-e", "."], project.repo, env)
    init = sh([str(eyeful_bin), "init", "--yes"], project.repo, env)
    from eyeful.config import load_config

    config = load_config(project.repo)
    project.test, project.setup = config.commands.test, config.commands.setup
    if project.setup:
        sh(["/bin/sh", "-c", project.setup], project.repo, env)
    head = project.git("log", "-1", "--format=%h %cs", "HEAD~1").strip()
    project.lines = [
        f"{name}: {source} at {head}; the changes edit {project.module}",
        *("  init: " + line for line in init.stderr.splitlines() if line.startswith("  - ")),
        f"  setup: {project.setup}",
        f"  test:  {project.test}",
    ]
    return project


# --------------------------------------------------------------------------------------------
# Measuring


def review(project: Project, *args: str) -> tuple[float, float, dict[str, Any]]:
    """`git eyeful --format json ARGS` as a user runs it: wall, CPU and the report."""
    argv = ["git", "eyeful", "--format", "json", *args]
    wall, cpu, proc = cpu_timed(
        lambda: subprocess.run(
            argv, cwd=project.repo, env=project.env, text=True, capture_output=True, check=False
        )
    )
    assert isinstance(proc, subprocess.CompletedProcess)
    if not proc.stdout.startswith("{"):
        raise RuntimeError(f"{project.name}: git eyeful exited {proc.returncode}:\n{proc.stderr}")
    return wall, cpu, json.loads(proc.stdout)


def suite(project: Project) -> tuple[float, float]:
    wall, cpu, _ = cpu_timed(lambda: sh(["/bin/sh", "-c", project.test], project.repo, project.env))
    return wall, cpu


def all_runs(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [*report["runs"], *(r for f in report["findings"] for r in f["runs"])]


def findings_file(project: Project) -> Path:
    path = project.root / "findings.json"
    path.write_text(json.dumps([project.finding()], indent=1) + "\n", encoding="utf-8")
    return path


def finding_args(project: Project) -> list[str]:
    return ["--findings", str(findings_file(project)), "-m", DESCRIPTION]


def check_warm(project: Project, report: dict[str, Any]) -> None:
    """A clean review that ran the suite on the change (and setup, if it had to: counted); a
    cached run (tinydb's skipped test, run by id on the base once) costs nothing."""
    runs = [
        (r["name"], r["side"]) for r in report["runs"] if r["name"] != "setup" and not r["cached"]
    ]
    if report["outcome"] != "clean" or runs != [("test", "change")]:
        raise RuntimeError(f"{project.name}: warm review: {report['outcome']}, runs {runs}")


def setups(report: dict[str, Any]) -> int:
    return sum(r["name"] == "setup" and not r["cached"] for r in all_runs(report))


def check_finding(project: Project, report: dict[str, Any]) -> dict[str, Any]:
    (found,) = report["findings"]
    gates = {g["name"]: g["status"] for g in found["gates"]}
    if set(gates.values()) != {"pass"}:
        raise RuntimeError(f"{project.name}: finding review: gates {gates}")
    return found


@dataclass
class Pair:
    """Interleaved measurements of one kind of review and the suite run directly."""

    suite_wall: list[float] = field(default_factory=list)
    suite_cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def ratio(self, cpu: bool) -> float:
        mine, theirs = (self.cpu, self.suite_cpu) if cpu else (self.wall, self.suite_wall)
        return statistics.median(m / t for m, t in zip(mine, theirs, strict=True))


def interleaved(project: Project, rounds: int, one: Callable[[], tuple[float, float, str]]) -> Pair:
    """``rounds`` rounds of the suite and one review, the order alternating round by round."""
    pair = Pair()
    for i in range(rounds):
        steps = [suite, one] if i % 2 == 0 else [one, suite]
        for step in steps:
            if step is suite:
                wall, cpu = suite(project)
                pair.suite_wall.append(wall)
                pair.suite_cpu.append(cpu)
            else:
                wall, cpu, note = one()
                pair.wall.append(wall)
                pair.cpu.append(cpu)
                pair.notes.append(note)
    return pair


def warm_review(project: Project) -> tuple[float, float, str]:
    project.stage_change()
    wall, cpu, report = review(project)
    check_warm(project, report)
    (test,) = [r for r in report["runs"] if r["name"] == "test"]
    return wall, cpu, f"test {test['duration']:.2f}s, {setups(report)} setups"


def finding_review(project: Project) -> tuple[float, float, str]:
    project.stage_change(broken=True)
    wall, cpu, report = review(project, *finding_args(project))
    found = check_finding(project, report)
    why = "" if found["kind"] == "fail" else f" ({found['unverified'] or found['oracle']['note']})"
    return wall, cpu, f"{found['kind']}{why}, {len(all_runs(report))} runs, {setups(report)} setups"


# --------------------------------------------------------------------------------------------
# Where the time goes: eyeful's own progress reports, heard in-process


@dataclass
class Event:
    at: float
    thread: int
    kind: str  # phase, started, finished
    text: str
    run: Run | None = None


class Timeline:
    """An eyeful.runs.Progress that keeps every report with its time and thread."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.lock = threading.Lock()
        self.start = time.perf_counter()
        self.end = self.start

    def _add(self, kind: str, text: str, run: Run | None = None) -> None:
        with self.lock:
            self.events.append(Event(time.perf_counter(), threading.get_ident(), kind, text, run))

    def phase(self, text: str) -> None:
        self._add("phase", text)

    def started(self, label: str, command: str) -> None:
        self._add("started", label)

    def finished(self, run: Run) -> None:
        self._add("finished", f"{run.name} on the {run.side}", run)

    def spans(self) -> dict[str, list[tuple[float, float]]]:
        """Per kind of work (a project command by name and side, a checkout): its intervals."""
        spans: dict[str, list[tuple[float, float]]] = {}
        checkout: dict[int, float] = {}
        started: dict[int, float] = {}
        for event in self.events:
            if event.kind == "phase" and event.text.startswith("checking out"):
                checkout[event.thread] = event.at
            elif event.kind == "started":
                began = checkout.pop(event.thread, None)
                if began is not None:
                    spans.setdefault("checkout", []).append((began, event.at))
                started[event.thread] = event.at
            elif event.kind == "finished" and event.thread in started:
                spans.setdefault(event.text, []).append((started.pop(event.thread), event.at))
        return spans

    def review_phases(self) -> list[tuple[str, float]]:
        """The review's own phases (not the checkouts), each until the next one or the end."""
        marks = [
            (e.at, e.text)
            for e in self.events
            if e.kind == "phase" and not e.text.startswith("checking out")
        ]
        marks = [(self.start, "preparing (config, snapshot, trust)"), *marks]
        ends = [at for at, _ in marks[1:]] + [self.end]
        return [(text, end - at) for (at, text), end in zip(marks, ends, strict=True)]


def covered(intervals: list[tuple[float, float]]) -> float:
    """Wall seconds during which at least one of the intervals ran."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def print_timeline(timeline: Timeline) -> None:
    wall = timeline.end - timeline.start
    print(f"  the review in this process: {wall:.2f}s wall")
    for text, seconds in timeline.review_phases():
        print(f"    phase: {text:<58} {seconds:7.2f}s")
    spans = timeline.spans()
    for kind, intervals in spans.items():
        busy = sum(e - s for s, e in intervals)
        print(
            f"    {kind:<40} x{len(intervals):<3} {busy:7.2f}s summed, "
            f"{covered(intervals):6.2f}s of the wall"
        )
    commands = [i for k, v in spans.items() if k != "checkout" for i in v]
    everything = [i for v in spans.values() for i in v]
    print(f"    {'a project command running':<45} {covered(commands):7.2f}s of the wall")
    print(f"    {'eyeful alone (no command, no checkout)':<45} {wall - covered(everything):7.2f}s")


def in_process(project: Project, kind: str) -> None:
    from eyeful.cli.reviewcmd import ReviewOptions, prepare, reviewed
    from eyeful.cli.terminal import Stderr

    timeline = Timeline()
    with inside(project.env, project.repo):
        if kind == "warm":
            print(f"\n{project.name}: a warm review, in this process")
            imports = [sys.executable, "-c", f"import {REVIEW_IMPORTS}"]
            floor = [cpu_timed(lambda: sh(imports, project.repo, project.env)) for _ in range(3)]
            print(
                "  start-up: Python and the review's imports (typer, pydantic, pygit2, eyeful; "
                f"issue 37) {statistics.median(f[0] for f in floor):.2f}s wall, "
                f"{statistics.median(f[1] for f in floor):.2f}s CPU, in every review"
            )
            timeline.start = time.perf_counter()
            profile_review(project, timeline)
            timeline.end = time.perf_counter()
        else:
            print(f"\n{project.name}: a review with one finding, in this process")
            project.stage_change(broken=True)
            options = ReviewOptions(
                output_format="json", findings=(findings_file(project),), message=DESCRIPTION
            )
            timeline.start = time.perf_counter()
            reviewed(prepare(options, Stderr(), None), options, timeline)
            timeline.end = time.perf_counter()
    print_timeline(timeline)


# --------------------------------------------------------------------------------------------


def measure(project: Project, rounds: int, finding_rounds: int) -> dict[str, Pair]:
    # Warm eyeful up: worktrees, their virtualenvs and setups, __pycache__, the findings' pool.
    suite(project)
    project.stage_change()
    review(project)
    project.stage_change(broken=True)
    _, _, report = review(project, *finding_args(project))
    check_finding(project, report)
    return {
        "warm": interleaved(project, rounds, lambda: warm_review(project)),
        "finding": interleaved(project, finding_rounds, lambda: finding_review(project)),
    }


def row(name: str, kind: str, pair: Pair, goal: float) -> str:
    cpu, wall = pair.ratio(cpu=True), pair.ratio(cpu=False)
    met = "met" if cpu <= goal else f"missed by {cpu / goal:.2f}x"
    return (
        f"| {name} | {kind} | {statistics.median(pair.suite_wall):.2f} s / "
        f"{statistics.median(pair.suite_cpu):.2f} s | {statistics.median(pair.wall):.2f} s / "
        f"{statistics.median(pair.cpu):.2f} s | **{cpu:.2f}x** | {wall:.2f}x | <= {goal}x: {met} |"
    )


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", action="append", default=[], help="NAME=PATH (repeatable)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of warm reviews")
    parser.add_argument("--finding-repeat", type=int, default=3, help="rounds of finding reviews")
    parser.add_argument("--no-profile", action="store_true", help="skip the in-process reviews")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir, print its path")
    args = parser.parse_args()
    _reexec_with_eyeful_python()
    if not args.source:
        parser.error("give at least one --source NAME=PATH")
    eyeful_bin = Path(sys.executable).parent / "git-eyeful"
    work = Path(tempfile.mkdtemp(prefix="eyeful-bench-real-"))
    rows: list[str] = []
    try:
        print(
            f"{time.strftime('%Y-%m-%d %H:%M %Z')}, {platform.node()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, load {load()}"
        )
        for source in args.source:
            name, _, path = source.partition("=")
            project = prepare(name, path, work, eyeful_bin)
            print("\n".join(project.lines), flush=True)
            pairs = measure(project, max(1, args.repeat), max(1, args.finding_repeat))
            for kind, pair in pairs.items():
                print(f"  {kind}: {', '.join(pair.notes)}")
            rows.append(row(name, "warm review, passing change", pairs["warm"], WARM_GOAL))
            rows.append(row(name, "review with one finding", pairs["finding"], FINDING_GOAL))
            print("\n".join(rows[-2:]), flush=True)
            if not args.no_profile:
                in_process(project, "warm")
                in_process(project, "finding")
        print(f"\nload after: {load()}\n")
        print(
            "| project | review | suite alone (wall / CPU) | eyeful (wall / CPU) | CPU ratio "
            "| wall ratio | goal |"
        )
        print("|---|---|---|---|---|---|---|")
        print("\n".join(rows))
    finally:
        if args.keep:
            print(f"\nkept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
