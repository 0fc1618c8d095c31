#!/usr/bin/env python3
"""Does `select = "affected"` miss regressions? Mutants of public projects (issue 32, point 6).

For each --source NAME=PATH (a local git repository: a clone or a snapshot; nothing fetched is
stored here) the project is cloned into a temp dir, given an `.eyeful.toml` (pytest through this
venv's Python with `src/` and the root on pytest's `pythonpath`, `select = "affected"`), confirmed
in a temporary XDG directory, and reviewed once with a harmless staged change: there is no map
yet, so that full review runs the whole suite and records the map; the change is committed (its
tree has the map). Then, for each mutant of the project's source (generated with `ast`, seeded:
a flipped comparison, an integer constant off by one, a returned value replaced by None, a
deleted statement), the mutant is written and staged, and

  * the full suite runs (plain pytest, with a small plugin that records each test's outcome):
    the tests that fail with the mutant and passed without it are the regressions;
  * eyeful's core (`eyeful.affected.select`, as a review calls it) says which tests the staged
    tree's run would hold.

A regression whose test the selection would not run is a missed one; a mutant is unseen when
the selection runs none of its failing tests (the review would not see it at all). Mutants are
interleaved across projects (a partial run stays balanced); each result is appended to
OUT/results.jsonl as it comes, and the table is printed at the end (`--table OUT` prints it
again).

The map's recording cost: the test command run with eyeful's probe loaded, the map on against
off (as a review that selects runs it against one that does not), --repeat times each,
alternating, in CPU time of the child processes; the map on again with the parsed sources of
its import graph kept from an earlier run (what a review's cache holds), in brackets.

Never touches the real user's configuration (HOME, XDG_CONFIG_HOME point into the temp dir).
A measurement, not a test: exit 0 unless it breaks.

    .venv/bin/python benchmarks/bench_selection_safety.py \
        --source sqlparse=$MIRRORS/andialbrecht+sqlparse/repo:40 \
        --source tinydb=$MIRRORS/msiemens+tinydb/repo:90 \
        --source cachetools=$MIRRORS/tkem+cachetools/repo:90 [--seed 32] [--out DIR]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import resource
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "benchmarks"))

import pygit2  # noqa: E402
from public_regressions import clean_env  # noqa: E402

from eyeful import affected, pytest_records  # noqa: E402
from eyeful.cache import Cache  # noqa: E402
from eyeful.config import load_config  # noqa: E402
from eyeful.environment import environment_key  # noqa: E402
from eyeful.gitutil import find_repo  # noqa: E402

PYTEST = "python -m pytest -q -p no:cacheprovider -o addopts='' -o 'pythonpath=src .'"
CONFIG = f'select = "affected"\ntimeout = 600\n\n[commands]\ntest = "{PYTEST}"\n'
COST_GOAL = 1.15
NOT_SOURCE = ("tests", "test", "testing", "docs", "examples", "benchmarks", "scripts")
KINDS = ("compare", "constant", "return", "delete")
FLIP: dict[type, type] = {
    ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt, ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In,
}  # fmt: skip
OUTCOMES = """import json, os, time
_seen = {}
def pytest_runtest_logreport(report):
    entry = _seen.setdefault(report.nodeid, {"outcome": "passed", "seconds": 0.0})
    entry["seconds"] += report.duration
    if report.failed:
        entry["outcome"] = "failed"
    elif report.skipped and report.when == "setup":
        entry["outcome"] = "skipped"
def pytest_collectreport(report):
    if report.failed:
        _seen[report.nodeid or "<collection>"] = {"outcome": "failed", "seconds": 0.0}
def pytest_sessionfinish(session):
    with open(os.environ["BENCH_OUTCOMES"], "w") as out:
        json.dump(_seen, out)
"""


@dataclass
class Mutant:
    project: str
    number: int
    kind: str
    path: str
    line: int
    before: str
    after: str


_PYTHON: list[str] = []  # --python


def _python() -> str:
    if _PYTHON:
        return _PYTHON[0]
    venv = PROJECT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _check_python() -> None:
    """Stop, saying why, where the Python the runs use lacks eyeful or pytest: every run would
    fail alike, and the costs would read as about 1.0x."""
    python = _python()
    # From "/", not here: `-c` would find this checkout's eyeful in the current directory.
    proc = subprocess.run([python, "-c", "import eyeful, pytest"], capture_output=True, text=True,
                          cwd="/", check=False)  # fmt: skip
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        raise SystemExit(
            f"bench_selection_safety.py: {python} cannot import eyeful and pytest ({last}); "
            "give --python a virtualenv's python with both installed"
        )


def _env(home: Path) -> dict[str, str]:
    return clean_env(home, Path(_python()).parent)


def _git(repo: Path, env: dict[str, str], *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True,
                          text=True)  # fmt: skip
    return proc.stdout.strip()


# --- mutants ------------------------------------------------------------------------------


def _is_source(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    return (
        path.endswith(".py")
        and not any(p in NOT_SOURCE for p in parts[:-1])
        and not name.startswith("test_")
        and name not in ("conftest.py", "setup.py", "noxfile.py", "_version.py")
    )


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        value = first.value if isinstance(first, ast.Expr) else None
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            found.add(id(first))
    return found


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _sites(source: str) -> dict[str, list[tuple[ast.AST, str]]]:
    """Each kind's places in one file: the node to replace and its replacement's text."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    sites: dict[str, list[tuple[ast.AST, str]]] = {kind: [] for kind in KINDS}
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in FLIP:
            flipped = ast.Compare(node.left, [FLIP[type(node.ops[0])]()], node.comparators)
            sites["compare"].append((node, ast.unparse(flipped)))
        elif (
            isinstance(node, ast.Constant)
            and type(node.value) is int
            and getattr(node, "end_col_offset", None) is not None
        ):
            sites["constant"].append((node, str(node.value + 1)))
        elif isinstance(node, ast.Return) and node.value is not None and not _is_none(node.value):
            sites["return"].append((node, "return None"))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for stmt in node.body:
                if id(stmt) in docs or len(node.body) < 2:
                    continue
                if isinstance(stmt, ast.Assign | ast.AugAssign | ast.Expr | ast.If | ast.Raise):
                    sites["delete"].append((stmt, "pass"))
    return sites


def _splice(source: str, node: ast.AST, text: str) -> str:
    data = source.encode()
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    lineno, col = node.lineno, node.col_offset  # type: ignore[attr-defined]
    end_line, end_col = node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
    begin = starts[lineno - 1] + col
    end = starts[end_line - 1] + end_col
    return (data[:begin] + text.encode() + data[end:]).decode()


def mutants(
    project: str, repo: Path, env: dict[str, str], count: int, seed: int
) -> list[tuple[Mutant, str]]:
    """``count`` mutants of the project's tracked source files, the kinds taken in turn, each
    with the file's mutated text."""
    rng = random.Random(f"{seed}:{project}")
    files = [p for p in _git(repo, env, "ls-files", "*.py").splitlines() if _is_source(p)]
    pool: dict[str, list[tuple[str, ast.AST, str]]] = {kind: [] for kind in KINDS}
    texts: dict[str, str] = {}
    for path in sorted(files):
        texts[path] = (repo / path).read_text()
        try:
            found = _sites(texts[path])
        except SyntaxError:
            continue
        for kind, places in found.items():
            pool[kind].extend((path, node, text) for node, text in places)
    for places in pool.values():
        rng.shuffle(places)
    chosen: list[tuple[Mutant, str]] = []
    turn = 0
    while len(chosen) < count and any(pool.values()):
        kind = KINDS[turn % len(KINDS)]
        turn += 1
        if not pool[kind]:
            continue
        path, node, text = pool[kind].pop()
        source = texts[path]
        mutated = _splice(source, node, text)
        try:
            compile(mutated, path, "exec")
        except SyntaxError:
            continue
        before = ast.get_source_segment(source, node) or ""
        mutant = Mutant(project, len(chosen) + 1, kind, path, node.lineno,  # type: ignore[attr-defined]
                        " ".join(before.split())[:80], text)  # fmt: skip
        chosen.append((mutant, mutated))
    return chosen


# --- one project ---------------------------------------------------------------------------


@dataclass
class Project:
    name: str
    repo: Path
    env: dict[str, str]
    baseline: dict[str, dict[str, object]]
    commit: str
    suite_seconds: float
    review_seconds: float


def _run_suite(project_repo: Path, env: dict[str, str], out: Path, timeout: float) -> dict | None:
    """The full suite's outcome per test; None when it did not finish within ``timeout``."""
    extra = {"PYTHONPATH": str(out.parent), "BENCH_OUTCOMES": str(out)}
    command = [*shlex.split(PYTEST), "-p", "bench_outcomes"]
    proc = subprocess.Popen(command, cwd=project_repo, env={**env, **extra},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None
    if not out.exists():
        return {"<no report>": {"outcome": "failed", "seconds": 0.0}}
    found: dict = json.loads(out.read_text())
    out.unlink()
    return found


def prepare(name: str, source: str, root: Path) -> Project:
    repo = root / name / "repo"
    env = _env(root / name / "home")
    subprocess.run(["git", "clone", "-q", source, str(repo)], env=env, check=True)
    commit = _git(repo, env, "rev-parse", "HEAD")
    (repo / ".eyeful.toml").write_text(CONFIG)
    _git(repo, env, "add", ".eyeful.toml")
    _git(repo, env, "commit", "-qm", "eyeful configuration")
    subprocess.run(["git", "eyeful", "confirm", "--yes"], cwd=repo, env=env, check=True,
                   capture_output=True)  # fmt: skip
    # A harmless staged change: no map yet, so its review runs the whole suite and records one.
    readme = next(p for p in sorted(repo.iterdir()) if p.name.lower().startswith("readme"))
    readme.write_text(readme.read_text() + "\n")
    _git(repo, env, "add", "-A")
    started = time.monotonic()
    proc = subprocess.run(["git", "eyeful", "--format", "json", "-j", "2"], cwd=repo, env=env,
                          capture_output=True, text=True)  # fmt: skip
    review_seconds = time.monotonic() - started
    if not proc.stdout:
        raise SystemExit(f"{name}: the review printed no report:\n{proc.stderr}")
    _git(repo, env, "commit", "-qm", "reviewed: the map's tree")
    started = time.monotonic()
    baseline = _run_suite(repo, env, root / "outcomes" / f"{name}.json", 600)
    suite_seconds = time.monotonic() - started
    if baseline is None:
        raise SystemExit(f"{name}: the suite did not finish")
    return Project(name, repo, env, baseline, commit, suite_seconds, review_seconds)


def _selected(project: Project) -> affected.Selection:
    paths = find_repo(project.repo, project.env)
    repo = pygit2.Repository(str(project.repo))
    tree = _git(project.repo, project.env, "write-tree")
    config = load_config(project.repo)
    saved = dict(os.environ)  # (the map's key holds the environment `git eyeful` ran in)
    os.environ.clear()
    os.environ.update(project.env)
    try:
        isolate = config.effective_isolate == "venv"
        environment = environment_key(config.env, project.repo, isolate=isolate)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return affected.select(repo, Cache(paths.state_dir / "cache"), config,
                           str(repo.head.target), tree, environment=environment)  # fmt: skip


def _runs(test: str, ids: list[str] | None) -> bool:
    """Whether the selected run holds ``test``; a test file's id (its collection failed):
    whether the run collects that file (holds a test of it)."""
    if ids is None or test.startswith("<"):  # the whole run broke: any run sees it
        return True
    if "::" not in test:
        return any(i == test or i.startswith(test + "::") for i in ids)
    return any(test == i or test.startswith(i + "::") or test.startswith(i + "[") for i in ids)


def measure(project: Project, mutant: Mutant, text: str, root: Path) -> dict[str, object]:
    path = project.repo / mutant.path
    original = path.read_bytes()
    try:
        path.write_text(text)
        _git(project.repo, project.env, "add", mutant.path)
        selection = _selected(project)
        started = time.monotonic()
        timeout = max(60.0, 5 * project.suite_seconds)
        outcome = _run_suite(project.repo, project.env, root / "outcomes" / "m.json", timeout)
        seconds = time.monotonic() - started
    finally:
        path.write_bytes(original)
        _git(project.repo, project.env, "add", mutant.path)
    ids = selection.ids
    base = project.baseline
    total_time = sum(float(e["seconds"]) for e in base.values()) or 1.0  # type: ignore[arg-type]
    ran = [t for t in base if _runs(t, ids)]
    result: dict[str, object] = {
        **asdict(mutant),
        "why_all": selection.why_all,
        "ids": ids,
        "selected_tests": len(ran),
        "tests": len(base),
        "selected_time": sum(float(base[t]["seconds"]) for t in ran) / total_time,  # type: ignore[arg-type]
        "suite_seconds": round(seconds, 2),
    }
    if outcome is None:
        result.update(hang=True, failing=[], missed=[])
        return result
    failing = sorted(
        t for t, e in outcome.items()
        if e["outcome"] == "failed" and base.get(t, {}).get("outcome") != "failed"
    )  # fmt: skip
    result.update(hang=False, failing=failing,
                  missed=[t for t in failing if not _runs(t, ids)])  # fmt: skip
    return result


def cost(project: Project, repeat: int, root: Path) -> dict[str, list[float]]:
    """CPU seconds of the test command with the probe loaded, alternating: map off, map on
    (``on``: the first run, no parsed sources kept) and map on with the parsed sources a
    review's cache keeps (``warm``: a run before fills it, untimed)."""
    times: dict[str, list[float]] = {"off": [], "on": [], "warm": []}
    kept = Path(tempfile.mkdtemp(dir=root)) / "imports.json"
    _probed(project, root, kept)  # fills the kept parse
    for _ in range(repeat):
        for kind in times:
            imports = kept if kind == "warm" else None
            times[kind].append(_probed(project, root, imports, mapped=kind != "off"))
    return times


def _probed(project: Project, root: Path, imports: Path | None, *, mapped: bool = True) -> float:
    probe = Path(tempfile.mkdtemp(dir=root))
    extra = pytest_records.plugin_env(probe, project.env)
    if mapped:
        extra[pytest_records.MAP_VAR] = str(project.repo)
    if imports is not None:
        extra[pytest_records.IMPORTS_VAR] = str(imports)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(shlex.split(PYTEST), cwd=project.repo, env={**project.env, **extra},
                   capture_output=True, check=False)  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def review_cost(project: Project, repeat: int) -> tuple[list[float], list[float]]:
    """CPU seconds of a full review (``--no-cache``, a staged README change: the whole suite)
    with ``--select all`` (no map) and ``--select affected`` (the map recorded), alternating."""
    readme = next(p for p in sorted(project.repo.iterdir()) if p.name.lower().startswith("readme"))
    readme.write_text(readme.read_text() + "\n")
    _git(project.repo, project.env, "add", "-A")
    off: list[float] = []
    on: list[float] = []
    for _ in range(repeat):
        for select, into in (("all", off), ("affected", on)):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(["git", "eyeful", "--format", "json", "-j", "2", "--no-cache",
                            "--select", select], cwd=project.repo, env=project.env,
                           capture_output=True, check=False)  # fmt: skip
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            into.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return off, on


# --- the table ------------------------------------------------------------------------------


def table(results: list[dict], costs: dict[str, dict]) -> str:
    lines = [
        "| project | mutants | hung | killed (a test fails) | regressions (failing tests) "
        "| missed | mutants unseen | whole suite (why_all) | selected tests | selected time "
        "| map cost (CPU) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    names = sorted({r["project"] for r in results})
    for name in [*names, "all"]:
        rows = [r for r in results if name in ("all", r["project"])]
        if not rows:
            continue
        done = [r for r in rows if not r["hang"]]
        killed = [r for r in done if r["failing"]]
        failing = sum(len(r["failing"]) for r in done)
        missed = sum(len(r["missed"]) for r in done)
        unseen = sum(1 for r in killed if len(r["missed"]) == len(r["failing"]))
        whole = sum(1 for r in rows if r["why_all"])
        tests = sum(r["selected_tests"] for r in rows) / sum(r["tests"] for r in rows)
        share = sum(r["selected_time"] for r in rows) / len(rows)
        c = costs.get(name)
        warm = f" ({c['warm_ratio']:.2f}x)" if c and "warm_ratio" in c else ""
        ratio = f"{c['ratio']:.2f}x{warm}" if c else "-"
        lines.append(
            f"| {name} | {len(rows)} | {len(rows) - len(done)} | {len(killed)} | {failing} "
            f"| {missed} | {unseen} | {whole} | {tests:.1%} | {share:.1%} | {ratio} |"
        )
    return "\n".join(lines)


def missed_lines(results: list[dict]) -> list[str]:
    out = []
    for r in results:
        for test in r["missed"]:
            out.append(f"- {r['project']} #{r['number']} ({r['kind']}) `{r['path']}:{r['line']}` "
                       f"`{r['before']}` -> `{r['after']}`: missed `{test}`")  # fmt: skip
    return out


def _report(out: Path) -> None:
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    costs_path = out / "costs.json"
    costs = json.loads(costs_path.read_text()) if costs_path.exists() else {}
    print(table(results, costs))
    print("\nmissed regressions:")
    print("\n".join(missed_lines(results)) or "- none")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", action="append", default=[],
                        help="NAME=PATH[:MUTANTS] (a local git repository)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3, help="runs each for the map's cost")
    parser.add_argument("--out", type=Path, help="where results.jsonl goes (default: a temp dir)")
    parser.add_argument("--costs-only", action="store_true",
                        help="only the map's cost: the test command's and a review's")  # fmt: skip
    parser.add_argument(
        "--python",
        help="a virtualenv's python with eyeful installed "
        "(another Python version; default: this project's .venv)",
    )
    parser.add_argument("--table", type=Path, help="print the table of an earlier run's OUT")
    args = parser.parse_args()
    if args.python:
        _PYTHON.append(args.python)
    if args.table:
        _report(args.table)
        return 0
    _check_python()
    out = args.out or Path(tempfile.mkdtemp(prefix="eyeful-safety-out-"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.jsonl").write_text("")
    with tempfile.TemporaryDirectory(prefix="eyeful-bench-safety-") as tmp:
        root = Path(tmp)
        (root / "outcomes").mkdir()
        (root / "outcomes" / "bench_outcomes.py").write_text(OUTCOMES)
        projects: list[Project] = []
        queues: list[list[tuple[Mutant, str]]] = []
        costs: dict[str, dict] = {}
        for spec in args.source:
            name, _, rest = spec.partition("=")
            path, _, count = rest.rpartition(":") if rest.rpartition(":")[2].isdigit() else (
                rest, "", "70")  # fmt: skip
            project = prepare(name, path, root)
            times = cost(project, args.repeat, root)
            off = min(times["off"])
            costs[name] = {**times, "ratio": min(times["on"]) / off,
                           "warm_ratio": min(times["warm"]) / off}  # fmt: skip
            if args.costs_only:
                r_off, r_on = review_cost(project, args.repeat)
                costs[name].update(review_off=r_off, review_on=r_on,
                                   review_ratio=min(r_on) / min(r_off))  # fmt: skip
            (out / "costs.json").write_text(json.dumps(costs, indent=1))
            if args.costs_only:
                print(f"{name}: {costs[name]}", flush=True)
                continue
            made = mutants(name, project.repo, project.env, int(count), args.seed)
            print(f"{name}: commit {project.commit[:12]}, {len(project.baseline)} tests, "
                  f"suite {project.suite_seconds:.1f} s, recording review "
                  f"{project.review_seconds:.1f} s, map cost {costs[name]['ratio']:.2f}x, "
                  f"{len(made)} mutants", flush=True)  # fmt: skip
            for mutant, _text in made:
                print(f"  #{mutant.number} {mutant.kind} {mutant.path}:{mutant.line} "
                      f"{mutant.before!r} -> {mutant.after!r}", flush=True)  # fmt: skip
            projects.append(project)
            queues.append(made)
        for turn in range(max((len(q) for q in queues), default=0)):
            for project, queue in zip(projects, queues, strict=True):
                if turn >= len(queue):
                    continue
                mutant, text = queue[turn]
                result = measure(project, mutant, text, root)
                with (out / "results.jsonl").open("a") as sink:
                    sink.write(json.dumps(result) + "\n")
                print(
                    f"{project.name} #{mutant.number}: {len(result['failing'])} failing, "  # type: ignore[arg-type]
                    f"missed {result['missed']}, selected {result['selected_tests']}/"
                    f"{result['tests']}{' (hang)' if result['hang'] else ''}",
                    flush=True,
                )
    print(f"\nresults: {out / 'results.jsonl'}")
    _report(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
