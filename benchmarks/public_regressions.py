"""Does eyeful's regression list equal the one you get by running the suite on both trees by hand?

    python benchmarks/public_regressions.py ITSDANGEROUS_GIT JMESPATH_GIT BOLTONS_GIT \
        [--work DIR] [--keep] [--eyeful-bin DIR] > benchmarks/public_regressions.md

or with EYEFUL_PUBLIC_SOURCES="ITSDANGEROUS_GIT:JMESPATH_GIT:BOLTONS_GIT" and no arguments. Each
argument is a local git repository of that project (a clone or a snapshot; nothing fetched is
stored in this repository); its HEAD is the base.

Per case, in a temporary directory outside this repository:

1. a virtualenv with the project's test dependencies from PyPI (never the project itself, except
   in the `itsdangerous-editable` case, whose point is the editable install of the clone eyeful
   reviews);
2. a clone, an untracked `.eyeful.toml` (`test` and `test_one` through that virtualenv's python),
   `git eyeful confirm --yes` under a private HOME and XDG_CONFIG_HOME;
3. a one-line breaking change in the library's source, staged; `git eyeful --format json
   --no-cache` (this repository's eyeful), timed; eyeful's list is `report["regressions"]`;
4. by hand: two more plain clones, one at the base and one with the same change (not staged,
   no eyeful anywhere), each running the same pytest command with `-rA`; the by-hand list is the
   tests failing (FAILED or ERROR) on the change that PASSED (and had no ERROR) on the base.

It prints markdown: the commands, the snapshot commits, each change as a diff line, the table and,
for a case whose lists differ, the tests that differ with what eyeful's report says about them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PYTEST = "-m pytest -q -p no:cacheprovider"


@dataclass
class Case:
    name: str
    source: int  # index into the sources given on the command line
    deps: list[str]
    test_args: str  # after `python -m pytest -q -p no:cacheprovider`, in `test` only
    one_args: str  # in both `test` and `test_one`
    path: str  # the file the breaking change edits
    old: str  # the line it replaces (must occur exactly once)
    new: str
    editable: bool = False  # pip install -e the clone eyeful reviews into the case's venv
    prefix: str = ""  # shell text before the python in the command (an env assignment)
    note: str = ""
    by_hand_one_args: str | None = None  # by hand: one_args when they differ (editable case)
    jobs: int | None = None  # git eyeful -j (default: eyeful's, the number of cores)


CASES = [
    Case(
        "itsdangerous",
        0,
        ["pytest", "freezegun"],
        "",
        "-o pythonpath=src",
        "src/itsdangerous/signer.py",
        "        value, sig = signed_value.rsplit(self.sep, 1)",
        "        value, sig = signed_value.split(self.sep, 1)",
        note="src layout, not installed: pytest's `pythonpath` option puts `src` on sys.path",
    ),
    Case(
        "itsdangerous-editable",
        0,
        ["pytest", "freezegun"],
        "",
        "",
        "src/itsdangerous/signer.py",
        "        value, sig = signed_value.rsplit(self.sep, 1)",
        "        value, sig = signed_value.split(self.sep, 1)",
        editable=True,
        note="`pip install -e .` of the reviewed clone into the venv: every worktree's run "
        "imports the user's working tree unless eyeful puts the worktree's `src` first",
        by_hand_one_args="-o pythonpath=src",
    ),
    Case(
        "itsdangerous-PYTHONPATH",
        0,
        ["pytest", "freezegun"],
        "",
        "",
        "src/itsdangerous/signer.py",
        "        value, sig = signed_value.rsplit(self.sep, 1)",
        "        value, sig = signed_value.split(self.sep, 1)",
        prefix="PYTHONPATH=src ",
        note="the same, with `PYTHONPATH=src` written in the command (a common way to run a src "
        "layout uninstalled)",
    ),
    Case(
        "jmespath",
        1,
        ["pytest"],
        "tests",
        "",
        "jmespath/functions.py",
        "        return len(arg)",
        "        return len(arg) - 1",
        note="the project's CI runs pytest in `tests/` only (`extra/` needs hypothesis); the "
        "compliance tests are parametrized with ids holding spaces, quotes, parentheses, "
        "`@` and `\\u2713`",
    ),
    Case(
        "boltons",
        2,
        ["pytest"],
        "boltons tests",
        "--doctest-modules",
        "boltons/ioutils.py",
        "        if self.closed:",
        "        if not self.closed:",
        note="tox runs `pytest --doctest-modules boltons tests`; the broken `_checkClosed` is "
        "in `SpooledIOBase`, whose tests `BaseTestMixin` gives to two unittest classes, and "
        "two doctests use it",
    ),
    Case(
        "boltons-j1",
        2,
        ["pytest"],
        "boltons tests",
        "--doctest-modules",
        "boltons/ioutils.py",
        "        if self.closed:",
        "        if not self.closed:",
        jobs=1,
        note="the same review with `git eyeful -j 1` (one worktree for both sides)",
    ),
]


@dataclass
class Outcome:
    passed: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)  # FAILED or ERROR (setup, teardown, collection)
    collected: list[str] = field(default_factory=list)
    seconds: float = 0.0
    summary: str = ""


def sh(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(argv, cwd=cwd, env=env, text=True, capture_output=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {shlex.join(argv)}\n{proc.stderr[-3000:]}")
    return proc.stdout


def clean_env(home: Path, eyeful_bin: Path | None = None) -> dict[str, str]:
    """The environment without anything that would steer pytest, git or a virtualenv."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GIT_", "PYTEST_", "EYEFUL_", "PRE_COMMIT"))
        and k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP")
    }
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["NO_COLOR"] = "1"
    if eyeful_bin is not None:
        env["PATH"] = f"{eyeful_bin}{os.pathsep}{env.get('PATH', '')}"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("[user]\n\tname = bench\n\temail = bench@example.invalid\n")
    return env


def make_venv(venv: Path, deps: list[str], editable: Path | None, env: dict[str, str]) -> str:
    sh([sys.executable, "-m", "venv", str(venv)], env=env)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    sh([*pip, *deps], env=env)
    if editable is not None:
        sh([*pip, "-e", str(editable)], env=env)
    freeze = sh([python, "-m", "pip", "freeze"], env=env).split()
    return ", ".join(line for line in freeze if line.split("==")[0].lower() in ("pytest", *deps))


def apply_change(repo: Path, case: Case) -> str:
    path = repo / case.path
    lines = path.read_text().split("\n")
    hits = [i for i, line in enumerate(lines) if line == case.old]
    if len(hits) != 1:
        raise SystemExit(f"{case.name}: {case.old.strip()!r} occurs {len(hits)} times")
    lines[hits[0]] = case.new
    path.write_text("\n".join(lines))
    return f"{case.path}:{hits[0] + 1}"


SUMMARY_LINE = re.compile(r"^=+ short test summary info =+$")
RESULT_LINE = re.compile(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (.*)$")


def _test_id(rest: str, known: list[str]) -> str:
    """The test id at the start of a `FAILED id - message` line: the longest collected id it
    starts with (ids may hold " - " themselves), else the text before the first " - "."""
    best = ""
    for test in known:
        if (rest == test or rest.startswith(test + " - ")) and len(test) > len(best):
            best = test
    return best or rest.split(" - ", 1)[0]


def by_hand(repo: Path, command: str, env: dict[str, str]) -> Outcome:
    """Run the suite with -rA and read pytest's own summary (no eyeful anywhere)."""
    out = Outcome()
    collect = subprocess.run(
        f"{command} --collect-only",
        shell=True,
        cwd=repo,
        env=env,
        text=True,
        capture_output=True,
        check=False,
    )
    ids = collect.stdout.split("\n\n", 1)[0].splitlines()  # the ids, then a blank line
    out.collected = [line for line in ids if "::" in line and not line[:1].isspace()]
    start = time.monotonic()
    proc = subprocess.run(
        f"{command} -rA",
        shell=True,
        cwd=repo,
        env=env,
        text=True,
        capture_output=True,
        check=False,
    )
    out.seconds = time.monotonic() - start
    lines = proc.stdout.splitlines()
    out.summary = lines[-1].strip("= ") if lines else f"(no output, exit {proc.returncode})"
    in_summary = False
    failed_or_error: set[str] = set()
    errors: set[str] = set()
    for line in lines:
        if SUMMARY_LINE.match(line):
            in_summary = True
            continue
        match = RESULT_LINE.match(line) if in_summary else None
        if not match:
            continue
        status, rest = match.groups()
        if status == "PASSED":
            out.passed.add(rest)
        elif status in ("FAILED", "ERROR"):
            test = _test_id(rest, out.collected)
            failed_or_error.add(test)
            if status == "ERROR":
                errors.add(test)
    out.passed -= errors
    out.failed = failed_or_error
    return out


def run_case(case: Case, source: Path, work: Path, eyeful_bin: Path) -> dict:
    base_dir = work / case.name
    home = base_dir / "home"
    env = clean_env(home)
    eyeful_env = clean_env(home, eyeful_bin)
    commit = sh(["git", "rev-parse", "HEAD"], cwd=source, env=env).strip()
    clones = {}
    for side in ("eyeful", "base", "change"):
        clones[side] = base_dir / side
        sh(["git", "clone", "-q", str(source), str(clones[side])], env=env)

    plain_venv = base_dir / "venv"
    versions = make_venv(plain_venv, case.deps, None, env)
    venv = plain_venv
    if case.editable:
        venv = base_dir / "venv-editable"
        make_venv(venv, case.deps, clones["eyeful"], env)
        versions += f"; `pip install -e {clones['eyeful'].name}/` in `{venv.name}`"

    def command(python: Path, one_args: str, test_args: str) -> str:
        words = [f"{case.prefix}{python} {PYTEST}", one_args, test_args]
        return " ".join(w for w in words if w)

    test = command(venv / "bin" / "python", case.one_args, case.test_args)
    test_one = command(venv / "bin" / "python", case.one_args, "{test}")
    repo = clones["eyeful"]
    (repo / ".eyeful.toml").write_text(
        f"[commands]\ntest = {json.dumps(test)}\ntest_one = {json.dumps(test_one)}\n"
    )
    with (repo / ".git" / "info" / "exclude").open("a") as exclude:
        exclude.write(".eyeful.toml\n")
    sh(["git", "eyeful", "confirm", "--yes"], cwd=repo, env=eyeful_env)
    where = apply_change(repo, case)
    sh(["git", "add", "-u"], cwd=repo, env=env)
    diff = sh(["git", "diff", "--cached", "-U0", "--no-color"], cwd=repo, env=env)
    diff_lines = [
        line
        for line in diff.splitlines()
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]

    jobs = ["-j", str(case.jobs)] if case.jobs else []
    load = os.getloadavg()[0]
    start = time.monotonic()
    proc = subprocess.run(
        ["git", "eyeful", "--format", "json", "--no-cache", *jobs],
        cwd=repo,
        env=eyeful_env,
        text=True,
        capture_output=True,
        check=False,
    )
    review_seconds = time.monotonic() - start
    load = max(load, os.getloadavg()[0])
    (base_dir / "report.json").write_text(proc.stdout)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        raise SystemExit(
            f"{case.name}: eyeful printed no JSON (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
        ) from None

    hand_args = case.one_args if case.by_hand_one_args is None else case.by_hand_one_args
    hand = command(plain_venv / "bin" / "python", hand_args, case.test_args)
    apply_change(clones["change"], case)
    base = by_hand(clones["base"], hand, env)
    change = by_hand(clones["change"], hand, env)
    hand_list = sorted(change.failed & base.passed)
    eyeful_list = sorted(r["test"] for r in report["regressions"])
    return {
        "case": case,
        "commit": commit,
        "source": source,
        "versions": versions,
        "test": test,
        "test_one": test_one,
        "hand": hand,
        "where": where,
        "diff": diff_lines,
        "report": report,
        "exit": proc.returncode,
        "review_cmd": shlex.join(["git", "eyeful", "--format", "json", "--no-cache", *jobs]),
        "review_seconds": review_seconds,
        "load": load,
        "base": base,
        "change": change,
        "hand_list": hand_list,
        "eyeful_list": eyeful_list,
        "work": base_dir,
    }


def _short(test: str, width: int = 110) -> str:
    return test if len(test) <= width else test[: width - 1] + "…"


def explain(result: dict) -> list[str]:
    """What eyeful's report says about each test on which the two lists disagree."""
    report = result["report"]
    hand, eyeful = set(result["hand_list"]), set(result["eyeful_list"])
    out: list[str] = []
    only_hand, only_eyeful = sorted(hand - eyeful), sorted(eyeful - hand)
    others = {f["test"]: f for f in report["other_failures"]}
    if only_hand:
        out.append(f"By hand only ({len(only_hand)}), what eyeful's report says:\n")
        kinds: dict[str, list[str]] = {}
        for test in only_hand:
            other = others.get(test)
            kinds.setdefault(other["kind"] if other else "(not in the report)", []).append(test)
        for kind, tests in kinds.items():
            out.append(f"- {kind}: {len(tests)}, e.g. `{_short(tests[0])}`")
            other = others.get(tests[0])
            if other:
                out.append(
                    f"  on the change: {other['on_change']}; on the base: " + other["on_base"]
                )
                if other.get("confirmation"):
                    out.append(f"  confirmation: {other['confirmation']}")
    if only_eyeful:
        out.append(f"\neyeful only ({len(only_eyeful)}):\n")
        out += [f"- `{_short(t)}`" for t in only_eyeful[:10]]
    out.append("\neyeful's runs:\n")
    for run in report["runs"]:
        counts = run.get("counts") or {}
        out.append(
            f"- {run['side']} {run['name']}: {run['status']} (exit {run['exit_code']}, "
            f"{run['duration']:.1f}s, read from {run.get('tests_from')}, {counts})"
            + (f": {run['reason']}" if run.get("reason") else "")
        )
    if report["uncertainty"]:
        out.append("\neyeful's uncertainty lines:\n")
        out += [f"- {u['text']}" for u in report["uncertainty"]]
    return out


def render(results: list[dict], args: argparse.Namespace) -> str:
    head = sh(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]).strip()
    lines = [
        "# Regressions on public projects: eyeful against the suite run by hand",
        "",
        "Generated by `benchmarks/public_regressions.py` (see its docstring for what it does):",
        "",
        "```sh",
        "python benchmarks/public_regressions.py " + " ".join(str(s) for s in args.sources),
        "```",
        "",
        "`$MIRRORS`: the directory holding the snapshots (`OWNER+NAME/repo`, bare git dirs); "
        "`$WORK`: the script's work directory (`--work`, else a temporary one).",
        "",
        f"Python {sys.version.split()[0]}, git {sh(['git', '--version']).split()[-1]}, "
        f"{sh([str(args.eyeful_bin / 'git-eyeful'), '--version']).strip()} "
        f"(this repository at `{head}`), "
        f"{os.cpu_count()} cores. Each review is `git eyeful --format json --no-cache` on the "
        "staged change (`reruns = 3`, the default), under a private HOME and XDG_CONFIG_HOME after "
        "`git eyeful confirm --yes`. By hand: the same pytest command with `-rA` in two plain "
        "clones (base, and the change unstaged), a regression being a test FAILED or ERROR on "
        "the change and PASSED (with no ERROR) on the base.",
        "",
        "## Cases",
        "",
    ]
    for r in results:
        case: Case = r["case"]
        lines += [
            f"### {case.name}",
            "",
            f"- snapshot: `{r['source']}` at `{r['commit']}`",
            f"- {case.note}" if case.note else "",
            f"- test dependencies (PyPI, in a venv of the case): {r['versions']}",
            f"- `test = {shlex.quote(r['test'])}`",
            f"- `test_one = {shlex.quote(r['test_one'])}`",
            f"- review: `{r['review_cmd']}` in the clone, the change staged",
            f"- by hand: `{r['hand']} -rA` in each clone",
            f"- the change, at `{r['where']}`:",
            "",
            "```diff",
            *r["diff"],
            "```",
            "",
        ]
    lines = [line for i, line in enumerate(lines) if line or lines[i - 1 : i] != [""]]
    lines += [
        "## Results",
        "",
        "| case | tests (base) | by-hand regressions | eyeful regressions | equal | eyeful exit "
        "| review (wall) | suite by hand: base / change | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        equal = "yes" if r["hand_list"] == r["eyeful_list"] else "**no**"
        lines.append(
            f"| {r['case'].name} | {len(r['base'].collected)} | {len(r['hand_list'])} "
            f"| {len(r['eyeful_list'])} | {equal} | {r['exit']} | {r['review_seconds']:.1f}s "
            f"| {r['base'].seconds:.1f}s / {r['change'].seconds:.1f}s | {r['load']:.1f} |"
        )
    lines += [
        "",
        f"load: the higher 1-minute load average at the review's start and end ({os.cpu_count()} "
        "cores; anything above that is other work on the machine stretching the times).",
        "",
        "pytest's own last line by hand (base; change):",
        "",
    ]
    lines += [f"- {r['case'].name}: {r['base'].summary}; {r['change'].summary}" for r in results]
    lines += ["", "## Per case", ""]
    for r in results:
        report = r["report"]
        lines += [
            f"### {r['case'].name}: {report['outcome']}, exit {r['exit']}",
            "",
            f"By-hand regressions: {len(r['hand_list'])}; eyeful's: {len(r['eyeful_list'])}; "
            f"eyeful's other failures: {len(report['other_failures'])}.",
            "",
        ]
        if r["hand_list"] == r["eyeful_list"]:
            lines.append("The lists are equal. Per file and class (tests in it; one of them):\n")
            groups: dict[str, list[str]] = {}
            for test in r["hand_list"]:
                parts = test.split("::")
                key = "::".join(parts[:2] if len(parts) > 2 else parts[:1])
                groups.setdefault(key, []).append(test)
            lines += [f"- `{k}`: {len(v)}; `{_short(v[0])}`" for k, v in groups.items()]
        else:
            lines += explain(r)
        lines.append("")
    return portable("\n".join(lines).rstrip() + "\n", args)


def portable(text: str, args: argparse.Namespace) -> str:
    """No path of this machine in the committed file: the snapshots' directory is ``$MIRRORS``
    (``$MIRRORS/OWNER+NAME/repo``), the work directory ``$WORK``."""
    for source in args.sources:
        for form in {str(source), str(Path(source).resolve())}:
            path = Path(form)
            if path.name == "repo" and "+" in path.parent.name:
                text = text.replace(str(path.parent.parent) + "/", "$MIRRORS/")
    for work in {str(args.work_dir), str(Path(args.work_dir).resolve())}:
        text = text.replace(work, "$WORK")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "sources",
        nargs="*",
        type=Path,
        help="git dirs of itsdangerous, jmespath.py, boltons (that order)",
    )
    parser.add_argument("--work", type=Path, help="keep everything in DIR (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--eyeful-bin", type=Path, help="the bin dir with git-eyeful")
    parser.add_argument("--only", action="append", help="run only this case (repeatable)")
    args = parser.parse_args()
    if not args.sources and os.environ.get("EYEFUL_PUBLIC_SOURCES"):
        args.sources = [Path(p) for p in os.environ["EYEFUL_PUBLIC_SOURCES"].split(os.pathsep)]
    if len(args.sources) != 3:
        parser.error("give the three git dirs (itsdangerous, jmespath.py, boltons)")
    if args.eyeful_bin is None:
        candidates = [ROOT / ".venv" / "bin", Path(sys.executable).parent]
        found = shutil.which("git-eyeful")
        candidates += [Path(found).parent] if found else []
        args.eyeful_bin = next(c for c in candidates if (c / "git-eyeful").exists())
    work = args.work or Path(tempfile.mkdtemp(prefix="eyeful-public-"))
    args.work_dir = work
    work.mkdir(parents=True, exist_ok=True)
    if work.resolve().is_relative_to(ROOT):
        parser.error("--work must be outside this repository")
    results = []
    try:
        for case in CASES:
            if args.only and case.name not in args.only:
                continue
            print(f"{case.name} ...", file=sys.stderr, flush=True)
            results.append(
                run_case(case, args.sources[case.source].resolve(), work, args.eyeful_bin)
            )
    finally:
        if args.work is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}", file=sys.stderr)
    sys.stdout.write(render(results, args))


if __name__ == "__main__":
    main()
