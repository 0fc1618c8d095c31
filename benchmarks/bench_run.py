#!/usr/bin/env python3
"""How much time `git eyeful` adds to the project's own test command.

Builds a throwaway repository (about --files files: a Python package in several directories, data
and text files, a fast pytest suite, `[tool.eyeful]` in pyproject.toml), confirms its commands and
measures, side by side:

  1. the test command alone, run directly in the repository;
  2. a cold `git eyeful` (no .git/eyeful state) on a staged change that keeps the tests passing;
  3. a warm `git eyeful` (worktree and setup exist; the cache does not hold the change);
  4. `git eyeful` again on an unchanged change (served from the cache, no command runs).

Targets: warm overhead = (3) - (1) < 0.5 s; unchanged rerun < 1 s; warm ratio (3) / (1) <= 1.3x
in CPU time (user + system of every process each one ran: load skews wall time far more). The
issue-37 figure is `--files 10000 --tests 200`. `--profile` (also done on its own when a target is
missed) prints where a warm review's time goes: its CPU by process (eyeful's own: start-up,
imports, work; its children: the test command, the probe, git, the interpreters asked;
benchmarks/run_cpu.py), start-up and imports (subprocesses), the phases of one real review
in-process under cProfile, then the same steps one by one outside a review.

Never touches the real user's configuration: HOME and XDG_CONFIG_HOME point into the temp dir,
GIT_CONFIG_NOSYSTEM is set and inherited GIT_* variables are dropped. Exit code 0 unless the
benchmark itself breaks: it is a measurement, not a test.

    .venv/bin/python benchmarks/bench_run.py [--files 2000] [--repeat 3] [--setup] [--profile]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from eyeful.runs import Progress

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
WARM_TARGET = 0.5
WARM_RATIO_GOAL = 1.3  # warm review / test command alone, CPU (issue 37)
RERUN_TARGET = 1.0
N_TEST_FILES = 8
T = TypeVar("T")
SUBPACKAGES = ("core", "io", "models", "services", "utils", "api", "storage", "plugins")


def _reexec_with_eyeful_python() -> None:
    """Run under a Python with eyeful and pytest (the project's venv) when this one lacks them."""
    try:
        import pytest  # noqa: F401

        import eyeful  # noqa: F401
    except ImportError:
        venv_python = PROJECT / ".venv" / "bin" / "python"
        in_venv = Path(sys.prefix).resolve() == venv_python.parent.parent.resolve()
        if venv_python.exists() and not in_venv:
            os.execv(str(venv_python), [str(venv_python), *sys.argv])
        raise SystemExit(
            "bench_run.py: this Python lacks eyeful or pytest; use the project's .venv/bin/python"
        ) from None


# --------------------------------------------------------------------------------------------
# The throwaway repository


def _module_text(index: int, revision: int = 0) -> str:
    return f'''# revision: {revision}
"""Generated module {index} for the eyeful benchmark."""

from __future__ import annotations

from dataclasses import dataclass

CONSTANT = {index}
NAMES = ("alpha", "beta", "gamma", "delta", "epsilon")


def compute(x: int) -> int:
    """A small deterministic computation."""
    total = 0
    for k in range(x % 7 + 1):
        total += (k * CONSTANT) % 13
    return total + CONSTANT


def label(x: int) -> str:
    return f"{{NAMES[x % len(NAMES)]}}-{index}-{{x}}"


def window(values: list[int], size: int = 3) -> list[int]:
    return [sum(values[i : i + size]) for i in range(max(0, len(values) - size + 1))]


@dataclass
class Thing:
    value: int
    tags: tuple[str, ...] = ()

    def doubled(self) -> int:
        return self.value * 2

    def describe(self) -> str:
        return f"Thing{index}({{self.value}}, tags={{len(self.tags)}})"

    def merged(self, other: "Thing") -> "Thing":
        return Thing(self.value + other.value, self.tags + other.tags)
'''


def _test_text(modules: Sequence[str], tests_per_file: int) -> str:
    lines = ["import importlib", "", "import pytest", "", f"MODULES = {list(modules)!r}", ""]
    lines += [
        "",
        "@pytest.mark.parametrize('name', MODULES)",
        "def test_compute_is_at_least_constant(name):",
        "    mod = importlib.import_module(name)",
        "    assert mod.compute(5) >= mod.CONSTANT",
        "",
    ]
    extra = max(0, tests_per_file - len(modules))
    for i in range(extra):
        mod = modules[i % len(modules)]
        lines += [
            "",
            f"def test_thing_{i}():",
            f"    mod = importlib.import_module({mod!r})",
            f"    thing = mod.Thing({i}, ('x',))",
            f"    assert thing.doubled() == {2 * i}",
            f"    assert thing.merged(thing).value == {2 * i}",
            "    assert mod.window([1, 2, 3, 4]) == [6, 9]",
            "",
        ]
    return "\n".join(lines) + "\n"


def _data_text(index: int) -> tuple[str, str]:
    kind = index % 4
    if kind == 0:
        rows = [
            {"id": index * 10 + k, "name": f"item-{k}", "score": (k * 37) % 101} for k in range(20)
        ]
        return "json", json.dumps(rows, indent=2) + "\n"
    if kind == 1:
        lines = [f"{index * 10 + k},item-{k},{(k * 37) % 101}" for k in range(40)]
        return "csv", "id,name,score\n" + "\n".join(lines) + "\n"
    if kind == 2:
        body = "Some documentation text for the benchmark. " * 30
        return "md", f"# Note {index}\n\n{body}\n"
    return "txt", "\n".join(f"line {k} of fixture {index}" for k in range(60)) + "\n"


@dataclass
class Bench:
    root: Path  # temp dir
    repo: Path
    env: dict[str, str]
    python: str
    eyeful_bin: Path
    modules: list[Path] = field(default_factory=list)
    test_cmd: str = ""
    revision: int = 0

    def run(
        self, argv: Sequence[str], cwd: Path | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            list(argv),
            cwd=cwd or self.repo,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if check and proc.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def git(self, *args: str) -> str:
        return self.run(["git", *args]).stdout

    def stage_change(self) -> str:
        """Edit the revision comment of one module and stage it: a tree no run has seen."""
        self.revision += 1
        module = self.modules[(self.revision * 7919) % len(self.modules)]
        text = module.read_text(encoding="utf-8")
        module.write_text(
            re.sub(r"^# revision: \d+", f"# revision: {self.revision}", text), encoding="utf-8"
        )
        self.git("add", "--", str(module.relative_to(self.repo)))
        return str(module.relative_to(self.repo))


def make_env(root: Path, eyeful_bin: Path) -> dict[str, str]:
    home, xdg = root / "home", root / "xdg"
    home.mkdir()
    xdg.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = eyeful bench\n\temail = bench@eyeful.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        "[advice]\n\tdetachedHead = false\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(xdg),
        GIT_CONFIG_NOSYSTEM="1",
        PATH=f"{eyeful_bin.parent}{os.pathsep}{env.get('PATH', '')}",
        NO_COLOR="1",
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both sides keep their __pycache__, as usual
    env.pop("PRE_COMMIT", None)
    env.pop("PRE_COMMIT_FROM_REF", None)
    env.pop("PRE_COMMIT_TO_REF", None)
    return env


def build_repo(bench: Bench, n_files: int, n_tests: int, setup: bool) -> None:
    repo = bench.repo
    repo.mkdir()
    python = shlex.quote(bench.python)
    bench.test_cmd = f"{python} -m pytest -q -p no:cacheprovider"
    commands = [f"test = {json.dumps(bench.test_cmd)}"]
    if setup:
        sleep = f"{python} -c {shlex.quote('import time; time.sleep(1)')}"
        commands.insert(0, f"setup = {json.dumps(sleep)}")
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "benchapp"\nversion = "0.1.0"\n\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n\n'
        "[tool.eyeful.commands]\n" + "\n".join(commands) + "\n",
        encoding="utf-8",
    )
    (repo / ".gitignore").write_text(
        "__pycache__/\n*.pyc\n.pytest_cache/\n.venv/\n", encoding="utf-8"
    )
    (repo / "README.md").write_text(
        "# benchapp\n\nA generated project for eyeful's benchmark.\n", encoding="utf-8"
    )
    fixed = 3 + 1 + 1 + N_TEST_FILES  # the files above, app/__init__, tests/conftest, test files
    budget = max(40, n_files - fixed)
    n_data = budget // 4
    n_modules_and_inits = budget - n_data
    # Every subpackage directory holds an __init__.py and ~30 modules.
    per_dir = 30
    n_dirs = max(1, n_modules_and_inits // (per_dir + 1))
    n_modules = n_modules_and_inits - n_dirs
    pkg = repo / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""benchapp."""\n', encoding="utf-8")
    dirs: list[Path] = []
    for d in range(n_dirs):
        top = SUBPACKAGES[d % len(SUBPACKAGES)]
        path = pkg / top / f"part{d // len(SUBPACKAGES)}"
        path.mkdir(parents=True, exist_ok=True)
        if not (pkg / top / "__init__.py").exists():
            (pkg / top / "__init__.py").write_text("", encoding="utf-8")
            n_modules -= 1
        (path / "__init__.py").write_text("", encoding="utf-8")
        dirs.append(path)
    names: list[str] = []
    for i in range(n_modules):
        path = dirs[i % len(dirs)] / f"mod_{i:04d}.py"
        path.write_text(_module_text(i), encoding="utf-8")
        bench.modules.append(path)
        names.append(".".join(path.relative_to(repo).with_suffix("").parts))
    data = repo / "data"
    for i in range(n_data):
        ext, text = _data_text(i)
        sub = data / f"set{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"fixture_{i:04d}.{ext}").write_text(text, encoding="utf-8")
    tests = repo / "tests"
    tests.mkdir()
    (tests / "conftest.py").write_text("", encoding="utf-8")
    per_file = max(1, n_tests // N_TEST_FILES)
    imported_per_file = max(1, per_file // 2)
    for f in range(N_TEST_FILES):
        chosen = [names[(f * 131 + k * 17) % len(names)] for k in range(imported_per_file)]
        (tests / f"test_part{f}.py").write_text(_test_text(chosen, per_file), encoding="utf-8")
    bench.git("init", "-q")
    bench.git("add", "-A")
    bench.git("commit", "-q", "-m", "benchapp: initial")
    bench.git("repack", "-adq")  # packed, like a clone: loose objects make checkouts slower
    bench.run([str(bench.eyeful_bin), "confirm", "--yes"])


# --------------------------------------------------------------------------------------------
# Measuring


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def children_cpu() -> float:
    """CPU seconds (user + system) of every child this process has waited for so far: the
    difference around one measurement is that measurement's CPU, its subprocesses included."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cpu_timed(fn: Callable[[], object]) -> tuple[float, float, object]:
    """Wall and CPU seconds of ``fn`` (which runs subprocesses) and its value."""
    before = children_cpu()
    seconds, value = timed(fn)
    return seconds, children_cpu() - before, value


@dataclass
class Row:
    name: str
    times: list[float]
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.times)


def run_eyeful(bench: Bench) -> tuple[float, dict[str, object]]:
    seconds, proc = timed(lambda: bench.run(["git", "eyeful", "--format", "json"], check=False))
    assert isinstance(proc, subprocess.CompletedProcess)
    if proc.returncode != 0:
        raise RuntimeError(f"git eyeful exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    report = json.loads(proc.stdout)
    if report.get("outcome") != "clean":
        raise RuntimeError(f"expected a clean review, got {report.get('outcome')}:\n{proc.stdout}")
    return seconds, report


def _runs(report: dict[str, object]) -> list[dict[str, object]]:
    runs = report.get("runs")
    assert isinstance(runs, list)
    return runs


def reset_state(bench: Bench) -> None:
    shutil.rmtree(bench.repo / ".git" / "eyeful", ignore_errors=True)
    bench.git("worktree", "prune")


def _check_warm(runs: list[dict[str, object]]) -> None:
    names = [r["name"] for r in runs]
    if names != ["test"] or runs[0]["cached"] or runs[0]["status"] != "PASSED":
        raise RuntimeError(f"warm run: expected one uncached passing test run, got {runs}")


def measure(bench: Bench, repeat: int, setup: bool) -> tuple[list[Row], dict[str, float]]:
    """Cold runs first; then rounds of (1) direct, (3) warm, (4) rerun, interleaved so that a
    change in machine load hits all three alike; the warm overhead is the median of the rounds'
    own differences."""
    argv = ["/bin/sh", "-c", bench.test_cmd]
    junit = shlex.quote(str(bench.root / "junit.xml"))
    argv_junit = ["/bin/sh", "-c", f"{bench.test_cmd} --junitxml={junit} -o junit_family=xunit1"]
    bench.run(argv)  # once to write __pycache__, as a developer's checkout has it

    cold: list[float] = []
    cold_test: list[float] = []
    for _ in range(repeat):
        reset_state(bench)
        bench.stage_change()
        seconds, report = run_eyeful(bench)
        runs = _runs(report)
        test = runs[-1]
        if test["name"] != "test" or test["cached"] or test["status"] != "PASSED":
            raise RuntimeError(f"cold run: unexpected runs {runs}")
        if setup and not any(r["name"] == "setup" and not r["cached"] for r in runs):
            raise RuntimeError(f"cold run with --setup: setup did not run: {runs}")
        cold.append(seconds)
        cold_test.append(float(test["duration"]))  # type: ignore[arg-type]

    direct: list[float] = []
    direct_cpu: list[float] = []
    warm_cpu: list[float] = []
    direct_junit: list[float] = []
    version: list[float] = []
    warm: list[float] = []
    warm_test: list[float] = []
    rerun: list[float] = []
    n_cached = 0
    for _ in range(repeat):
        seconds, cpu, _ = cpu_timed(lambda: bench.run(argv))
        direct.append(seconds)
        direct_cpu.append(cpu)
        direct_junit.append(timed(lambda: bench.run(argv_junit))[0])
        version.append(timed(lambda: bench.run(["git", "eyeful", "--version"]))[0])
        bench.stage_change()
        before = children_cpu()
        seconds, report = run_eyeful(bench)
        warm_cpu.append(children_cpu() - before)
        runs = _runs(report)
        _check_warm(runs)
        warm.append(seconds)
        warm_test.append(float(runs[0]["duration"]))  # type: ignore[arg-type]
        seconds, report = run_eyeful(bench)
        runs = _runs(report)
        if not runs or not all(r["cached"] for r in runs):
            raise RuntimeError(f"unchanged rerun: a command ran: {runs}")
        n_cached = len(runs)
        rerun.append(seconds)

    rows = [
        Row("1. test command alone (in the repository)", direct),
        Row("   same + --junitxml (what eyeful runs)", direct_junit, "diagnostic"),
        Row("   `git eyeful --version` (startup floor)", version, "diagnostic"),
        Row("2. cold `git eyeful` (no .git/eyeful)", cold, "setup ran" if setup else ""),
        Row("   test run inside the cold review", cold_test, "diagnostic: Run.duration"),
        Row("3. warm `git eyeful` (new change)", warm, "setup skipped" if setup else ""),
        Row("   test run inside the warm review", warm_test, "diagnostic: Run.duration"),
        Row("   CPU: test command alone", direct_cpu, "user + system, its processes"),
        Row("   CPU: warm `git eyeful`", warm_cpu, "user + system, the test run's included"),
        Row("4. unchanged rerun (all cached)", rerun, f"{n_cached} run(s), all cached"),
    ]
    figures = {
        "direct": statistics.median(direct),
        "warm": statistics.median(warm),
        "warm_overhead": statistics.median(w - d for w, d in zip(warm, direct, strict=True)),
        "rerun": statistics.median(rerun),
        "warm_ratio": statistics.median(w / d for w, d in zip(warm, direct, strict=True)),
        "warm_cpu_ratio": statistics.median(
            w / d for w, d in zip(warm_cpu, direct_cpu, strict=True)
        ),
        "cold": statistics.median(cold),
    }
    return rows, figures


def print_table(rows: list[Row], figures: dict[str, float]) -> tuple[bool, bool]:
    width = max(len(r.name) for r in rows)
    print(f"{'measurement':<{width}}  {'median':>8}  {'min':>8}  {'max':>8}  runs  note")
    print("-" * (width + 50))
    for row in rows:
        print(
            f"{row.name:<{width}}  {row.median:>7.3f}s  {min(row.times):>7.3f}s  "
            f"{max(row.times):>7.3f}s  {len(row.times):>4}  {row.note}"
        )
    print()
    overhead = figures["warm_overhead"]
    warm_ok = overhead < WARM_TARGET
    rerun_ok = figures["rerun"] < RERUN_TARGET
    print(
        f"warm overhead  (3) - (1) = {overhead:6.3f}s   target < {WARM_TARGET}s   "
        f"{'PASS' if warm_ok else 'MISS'}   (median of per-round differences)"
    )
    print(
        f"unchanged rerun      (4) = {figures['rerun']:6.3f}s   target < {RERUN_TARGET}s   "
        f"{'PASS' if rerun_ok else 'MISS'}"
    )
    print(f"cold overhead  (2) - (1) = {figures['cold'] - figures['direct']:6.3f}s   (no target)")
    ratio_ok = figures["warm_cpu_ratio"] <= WARM_RATIO_GOAL
    print(
        f"warm ratio     (3) / (1) = {figures['warm_cpu_ratio']:6.2f}x CPU, "
        f"{figures['warm_ratio']:.2f}x wall   goal <= {WARM_RATIO_GOAL}x (CPU: load skews wall)   "
        f"{'PASS' if ratio_ok else 'MISS'}   (median of per-round ratios)"
    )
    return warm_ok and ratio_ok, rerun_ok


# --------------------------------------------------------------------------------------------
# Profile: the phases of a warm review, timed in-process with eyeful's own functions


def _subprocess_median(bench: Bench, argv: list[str], repeat: int) -> float:
    return statistics.median(timed(lambda: bench.run(argv))[0] for _ in range(repeat))


def _imports_by_package(bench: Bench, modules: str, count: int = 10) -> list[tuple[int, str]]:
    """Import self-time (-X importtime) summed per top-level package, the largest first."""
    proc = bench.run([bench.python, "-X", "importtime", "-c", f"import {modules}"])
    totals: dict[str, int] = {}
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|\s*(\S+)", line)
        if match:
            root = match.group(3).split(".")[0]
            totals[root] = totals.get(root, 0) + int(match.group(1))
    return sorted(((t, n) for n, t in totals.items()), reverse=True)[:count]


class Phases:
    """Timings by phase name, in the order first seen."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}

    def __call__(self, name: str, fn: Callable[[], T]) -> T:
        started = time.perf_counter()
        value = fn()
        self.times.setdefault(name, []).append(time.perf_counter() - started)
        return value

    def print(self) -> None:
        for name, times in self.times.items():
            print(f"  {name:<52} {statistics.median(times) * 1000:8.1f} ms")


def _warm_iteration(bench: Bench, phase: Phases) -> None:
    """The steps `git eyeful` takes on a new change with a warm worktree, one timed phase each."""
    from eyeful.cache import Cache, cache_key
    from eyeful.config import load_config
    from eyeful.gitutil import find_repo, git
    from eyeful.report import Report, SideInfo
    from eyeful.results import parse_junit
    from eyeful.runs import setup_key
    from eyeful.shell import run_command
    from eyeful.snapshot import _staged_side, gitlinks, open_repository, take_snapshot
    from eyeful.trust import TrustStore
    from eyeful.worktrees import WorktreePool, snapshot_commit

    bench.stage_change()
    paths = phase("find_repo (git rev-parse)", lambda: find_repo(Path.cwd()))
    config = phase("load_config", lambda: load_config(paths.root))
    snap = phase("take_snapshot (total)", lambda: take_snapshot(paths))
    repo = open_repository(paths)
    phase("  of which: index -> tree (_staged_side)", lambda: _staged_side(repo, paths))
    phase("  of which: gitlinks walk of the change tree", lambda: gitlinks(repo, snap.head.tree))
    phase("TrustStore.is_confirmed", lambda: TrustStore().is_confirmed(paths.root, config))
    repo = phase("open_repository (pygit2)", lambda: open_repository(paths))
    tree = snap.head.tree
    cache = Cache(paths.state_dir / "cache")

    def lookup() -> object:
        skey = setup_key(repo, tree, config)
        key = cache_key(
            tree=tree,
            test=config.commands.test,
            setup=skey,
            junit=config.junit,
            timeout=config.timeout,
        )
        return cache.get("runs", key, dict)

    phase("setup_key + cache_key + cache.get", lookup)
    pool = WorktreePool(paths, repo, size=max(2, os.cpu_count() or 2))
    report_path = paths.state_dir / "tmp" / "bench-junit.xml"
    report_path.parent.mkdir(parents=True, exist_ok=True)
    command = (
        f"{config.commands.test} --junitxml={shlex.quote(str(report_path))} -o junit_family=xunit1"
    )
    with pool.acquire() as worktree:
        where = worktree.path
        commit = phase("snapshot_commit (pygit2)", lambda: snapshot_commit(repo, tree))
        phase(
            "git checkout --force --detach",
            lambda: git("checkout", "--quiet", "--force", "--detach", commit, cwd=where),
        )
        phase("git clean -ffdq", lambda: git("clean", "-ffdq", cwd=where))
        result = phase(
            "test command in the worktree (run_command + junit)",
            lambda: run_command(command, where, timeout=600),
        )
        assert result.status == "PASSED", result.tail
        phase("parse_junit", lambda: parse_junit(report_path))
        report_path.unlink()
    phase(
        "same test command in the repository (run_command)",
        lambda: run_command(command, paths.root, timeout=600),
    )
    phase("cache.put", lambda: cache.put("runs", "0" * 64, {"bench": True}))
    phase(
        "Report JSON",
        lambda: (
            Report(base=SideInfo.of(snap.base), head=SideInfo.of(snap.head))
            .finish()
            .model_dump_json(indent=2)
        ),
    )


# Where a real warm review's time goes: eyeful's own functions, cumulative, from cProfile of one
# review run in this process (the command line's prepare, reviewed, render), in the order a
# review reaches them. "(waits)" marks time spent waiting on a subprocess.
REVIEW_PHASES = (
    ("prepare: config, snapshot, trust (cli/reviewcmd.py)", "cli/reviewcmd.py", "prepare"),
    ("  load_config", "config.py", "load_config"),
    ("  take_snapshot (index -> tree)", "snapshot.py", "take_snapshot"),
    ("  TrustStore.is_confirmed", "trust.py", "is_confirmed"),
    ("review() (review.py)", "review.py", "review"),
    ("  the interpreters asked (environment.py, waits)", "environment.py", "value"),
    ("  setup_key (setup inputs hashed)", "runs.py", "setup_key"),
    ("  worktree acquire (pool lock, worktree add)", "worktrees.py", "acquire"),
    ("  worktree checkout + clean + stamp", "worktrees.py", "checkout"),
    ("  the test command (shell.py run_command, waits)", "shell.py", "run_command"),
    ("  the probe's record read (pytest_records.py)", "pytest_records.py", "read_pytest"),
    ("  the run cached (cache.put)", "cache.py", "put"),
    ("render the report", "cli/reviewcmd.py", "render"),
)


class _Staging(Protocol):
    def stage_change(self) -> str: ...


def profile_review(bench: _Staging, progress: Progress | None = None) -> None:
    """One warm review of a new change, in-process under cProfile: the phases it spends on
    (``progress`` hears the review's own phase reports, as the terminal's display would). Run it
    inside the project's environment and directory (:func:`inside`)."""
    import cProfile
    import pstats

    from eyeful.cli.reviewcmd import ReviewOptions, prepare, render, reviewed
    from eyeful.cli.terminal import Stderr
    from eyeful.runs import Silent

    bench.stage_change()
    options = ReviewOptions(output_format="json")
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    report = reviewed(prepare(options, Stderr(), None), options, progress or Silent())
    render(report, options)
    profiler.disable()
    total = time.perf_counter() - started
    runs = [run for run in report.runs if not run.cached]
    stats: dict[tuple[str, int, str], tuple[int, int, float, float, object]]
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    print("\nPhases of a real warm review (one review in this process, cProfile; imports and")
    print("interpreter start-up are the subprocess figures above)")
    print("-" * 72)
    for label, path, function in REVIEW_PHASES:
        cumulative = sum(
            row[3]
            for (file, _, name), row in stats.items()
            if name == function and file.replace(os.sep, "/").endswith("eyeful/" + path)
        )
        print(f"  {label:<60} {cumulative * 1000:8.1f} ms")
    tests = sum(run.duration for run in runs if run.name == "test")
    print(f"  {'of the test command: its own duration (Run.duration)':<60} {tests * 1000:8.1f} ms")
    print(f"  {'the whole review in-process (profiled)':<60} {total * 1000:8.1f} ms")


@contextlib.contextmanager
def inside(env: dict[str, str], cwd: Path) -> Iterator[None]:
    """This process with ``env`` as its whole environment and ``cwd`` as its directory, as
    `git eyeful` would run there (for a review in-process); both restored afterwards."""
    saved = dict(os.environ)
    old_cwd = Path.cwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(saved)


def profile(bench: Bench, repeat: int) -> None:
    from run_cpu import profile_cpu  # beside this file

    profile_cpu(bench, repeat)
    print("\nProfile of a warm review (median of", repeat, "iterations)")
    print("-" * 72)
    py = bench.python
    review_imports = "eyeful.cli.app, eyeful.review, eyeful.report, eyeful.snapshot"
    startup = {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import eyeful.cli.app'": [py, "-c", "import eyeful.cli.app"],
        "python -c 'import eyeful.cli.app + review path'": [py, "-c", f"import {review_imports}"],
        "git eyeful --version": ["git", "eyeful", "--version"],
    }
    for name, argv in startup.items():
        seconds = _subprocess_median(bench, argv, repeat)
        print(f"  {name:<52} {seconds * 1000:8.1f} ms  (subprocess wall)")
    print("  import self-time by top-level package (-X importtime, one run):")
    for micros, name in _imports_by_package(bench, review_imports):
        print(f"    {name:<50} {micros / 1000:8.1f} ms")

    phases = Phases()
    with inside(bench.env, bench.repo):
        profile_review(bench)
        print("\nThe same steps one by one, outside a review (median of", repeat, "iterations)")
        for _ in range(repeat):
            _warm_iteration(bench, phases)
    phases.print()
    core = sum(
        statistics.median(t)
        for n, t in phases.times.items()
        if not n.startswith(("  ", "test command", "same"))
    )
    print(f"  {'sum of eyeful core phases (excluding the test run)':<52} {core * 1000:8.1f} ms")
    profile_cold(bench, repeat)


def profile_cold(bench: Bench, repeat: int) -> None:
    """What a cold review adds: a new worktree, a full checkout, a test run without __pycache__."""
    print("\nCold-only phases (a throwaway worktree, median of", repeat, "iterations)")
    print("-" * 72)
    phases = Phases()
    head = bench.git("rev-parse", "HEAD").strip()
    for i in range(repeat):
        _cold_iteration(bench, phases, bench.root / f"cold-wt-{i}", head)
    phases.print()


def _cold_iteration(bench: Bench, phase: Phases, path: Path, head: str) -> None:
    from eyeful.shell import run_command

    add = ["git", "worktree", "add", "--force", "--detach", "--no-checkout", str(path), head]
    phase("git worktree add --no-checkout", lambda: bench.run(add))
    checkout = ["git", "checkout", "--quiet", "--force", "--detach", head]
    phase("first git checkout --force (all files)", lambda: bench.run(checkout, cwd=path))
    phase("git clean -ffdq", lambda: bench.run(["git", "clean", "-ffdq"], cwd=path))
    phase(
        "first test run (no __pycache__)",
        lambda: run_command(bench.test_cmd, path, timeout=600),
    )
    phase(
        "second test run (__pycache__ warm)",
        lambda: run_command(bench.test_cmd, path, timeout=600),
    )
    bench.git("worktree", "remove", "--force", str(path))


# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="files in the repository")
    parser.add_argument("--tests", type=int, default=80, help="pytest tests in the suite")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--setup", action="store_true", help="add a 1 s setup command")
    parser.add_argument("--profile", action="store_true", help="always time the warm phases")
    parser.add_argument("--keep", action="store_true", help="keep the temp dir, print its path")
    args = parser.parse_args(argv)
    _reexec_with_eyeful_python()

    eyeful_bin = Path(sys.executable).parent / "git-eyeful"
    if not eyeful_bin.exists():
        found = shutil.which("git-eyeful")
        if found is None:
            raise SystemExit("bench_run.py: git-eyeful not found next to this Python or on PATH")
        eyeful_bin = Path(found)

    root = Path(tempfile.mkdtemp(prefix="eyeful-bench-"))
    try:
        bench = Bench(
            root=root,
            repo=root / "repo",
            env=make_env(root, eyeful_bin),
            python=sys.executable,
            eyeful_bin=eyeful_bin,
        )
        seconds, _ = timed(lambda: build_repo(bench, args.files, args.tests, args.setup))
        n_files = len(bench.git("ls-files").splitlines())
        summary = bench.run(["/bin/sh", "-c", bench.test_cmd]).stdout
        passed = re.search(r"(\d+) passed", summary)
        n_tests = int(passed.group(1)) if passed else 0
        print(
            f"repository: {n_files} files, {n_tests} tests, setup={'yes' if args.setup else 'no'}, "
            f"git {bench.git('--version').split()[-1]}, Python {sys.version.split()[0]}, "
            f"{os.cpu_count()} CPUs (built in {seconds:.1f}s)"
        )
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"load average before: {load} (other work on the machine skews every figure)")
        print(f"test command: {bench.test_cmd}\n")
        rows, figures = measure(bench, max(1, args.repeat), args.setup)
        warm_ok, rerun_ok = print_table(rows, figures)
        print(f"load average after:  {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if args.profile or not (warm_ok and rerun_ok):
            profile(bench, max(1, args.repeat))
    finally:
        if args.keep:
            print(f"\nkept: {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
