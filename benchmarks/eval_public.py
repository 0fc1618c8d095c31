"""Mine eval cases from small public Python projects and evaluate eyeful on them.

    python benchmarks/eval_public.py --source cachetools=/path/to/cachetools.git \
        --source toolz=/path/to/toolz.git --source itsdangerous=/path/to/itsdangerous.git \
        [--bug-commits 300 --bugs 4 --clean-commits 40 --cleans 2] [--out DIR] [--skip-mine]

Each source is a local git repository (a clone or a snapshot; nothing fetched is stored here).
The script clones it to OUT, writes an `.eyeful.toml` (pytest through the running Python, with
`src/` and the root on pytest's `pythonpath`: a PYTHONPATH in the command would hide eyeful's
probe, and the mined `fails` texts are read from its record), confirms it in a temporary XDG
directory and runs `eyeful eval mine --only bug` over the newest --bug-commits commits and
`--only clean` over the newest --clean-commits (stage 1, skipped with --skip-mine).
Then it copies every case to OUT/cases with its findings as `findings.json` in the case, named
relative to it (stage 2): for a bug (or feature) case, the fix's own test as the reproduction
(mine's reference findings); for a clean case, a bait: a finding claiming the change breaks an
existing test of the repository (the strongest oracle, `derived` from an existing test), with one
of that test's own assert lines as the fails text. Stage 3 runs `eyeful eval` on every case under
`execution` and `no_oracle_rule`, writes OUT/eval.json and OUT/eval.md, and prints the table and
the figures: verified and reported recall over the bug cases that are fixes (mine labels a commit
whose test only misses a name it adds `feature-`; those are counted apart), false-blocking.
Everything is written under OUT; nothing in this repository changes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

from eyeful.evaluate.runner import EvalResult
from eyeful.evaluate.table import to_markdown

PYTEST = "python -m pytest -q -p no:cacheprovider -o addopts='' -o 'pythonpath=src .'"
# The suite stops at its first failure (-x keeps runs short); `test_one` runs one file, where -x
# would hide what its other tests' exceptions said (mining's and the gates' evidence).
CONFIG = f'timeout = 300\n\n[commands]\ntest = "{PYTEST} -x"\ntest_one = "{PYTEST} {{test}}"\n'


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, text=True, capture_output=True, check=False)


def mine(name: str, path: str, args: argparse.Namespace, env: dict[str, str]) -> None:
    repo = args.out / "repos" / name
    proc = run(["git", "clone", "-q", path, str(repo)], args.out, env)
    if proc.returncode != 0:
        raise SystemExit(f"{name}: cannot clone: {proc.stderr}")
    pyproject = repo / "pyproject.toml"
    if pyproject.is_file() and "[tool.eyeful" in pyproject.read_text():
        raise SystemExit(f"{name}: configures eyeful itself")
    (repo / ".eyeful.toml").write_text(CONFIG)
    # A history shorter than asked (jmespath: 235 first-parent commits): all of it but the root.
    depth = run(["git", "rev-list", "--first-parent", "--count", "HEAD"], repo, env).stdout
    for kind, commits, limit in (
        ("bug", args.bug_commits, args.bugs),
        ("clean", args.clean_commits, args.cleans),
    ):
        # Features too: they are counted apart from the fixes.
        since = f"HEAD~{min(commits, int(depth) - 1)}"
        argv = [sys.executable, "-m", "eyeful", "eval", "mine", "--yes", "--only", kind,
                "--include-features", "--limit", str(limit), "--rev-range",
                f"{since}..HEAD", str(args.out / "mined" / f"{name}.{kind}")]  # fmt: skip
        proc = run(argv, repo, env)
        print(f"## {name}, {kind} cases\n\n{proc.stdout}{proc.stderr if proc.returncode else ''}",
              flush=True)  # fmt: skip


def _git(bundle: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(bundle), *args], capture_output=True, text=True, check=True
    ).stdout


def bait(case: Path, work: Path) -> list[dict]:
    """A false claim for a clean case: an existing test of the changed module now fails."""
    text = (case / "case.toml").read_text()
    base = re.search(r'^base = "(\w+)"', text, re.M).group(1)
    change = re.search(r'^change = "(\w+)"', text, re.M).group(1)
    clone = work / f"bait-{case.name}.git"
    if not clone.exists():
        subprocess.run(
            ["git", "clone", "-q", "--bare", str(case / "repo.bundle"), str(clone)],
            check=True,
            capture_output=True,
        )
    changed = [p for p in _git(clone, "diff", "--name-only", base, change).split()
               if p.endswith(".py") and not p.startswith(("doc", "tests/"))
               and "/tests/" not in p]  # fmt: skip
    tests = [
        p
        for p in _git(clone, "ls-tree", "-r", "--name-only", change).split()
        if PurePosixPath(p).name.startswith("test_") and p.endswith(".py")
    ]
    if not changed or not tests:
        return []
    target = changed[0]
    stem = PurePosixPath(target).stem.lstrip("_")
    ordered = sorted(tests, key=lambda t: stem not in PurePosixPath(t).stem)
    for test in ordered:  # the first test file of the module that asserts anything
        code = _git(clone, "show", f"{change}:{test}")
        asserts = [line.strip() for line in code.splitlines()
                   if line.strip().startswith(("assert ", "self.assert"))]  # fmt: skip
        if asserts:
            break
    else:
        return []
    return [{
        "id": "bait", "expert": "skeptic", "severity": "error", "evidence": "test",
        "path": target, "line": 1, "title": f"The change breaks {test}",
        "body": "The edited code no longer does what the existing test expects.",
        "oracle": {"kind": "derived"},
        "repro": {"path": test, "fails": asserts[0]},
    }]  # fmt: skip


def point_at_findings(args: argparse.Namespace) -> Path:
    """Copy every mined case into one flat directory, each with its findings file in it."""
    cases = args.out / "cases"
    if cases.exists():
        shutil.rmtree(cases)
    cases.mkdir()
    for case in sorted((args.out / "mined").glob("*/*")):
        if not (case / "case.toml").is_file():
            continue
        name = f"{case.parent.name.split('.')[0]}-{case.name}"
        target = cases / name
        shutil.copytree(case, target)
        reference = case / "reference-findings.json"
        if reference.is_file():
            findings = json.loads(reference.read_text())
        else:
            findings = bait(case, args.out)
        if not findings:
            continue
        (target / "findings.json").write_text(json.dumps(findings, indent=1) + "\n")
        text = re.sub(r"^findings = .*\n", "", (target / "case.toml").read_text(), flags=re.M)
        line = 'findings = ["findings.json"]\n'
        (target / "case.toml").write_text(text.replace("\nbase = ", f"\n{line}base = ", 1))
    return cases


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", action="append", default=[], help="name=path")
    parser.add_argument("--bug-commits", type=int, default=300, help="commits searched for bugs")
    parser.add_argument("--bugs", type=int, default=4, help="bug cases per project")
    parser.add_argument("--clean-commits", type=int, default=40)
    parser.add_argument("--cleans", type=int, default=2, help="clean cases per project")
    parser.add_argument("--out", type=Path, default=Path("/tmp/eyeful-eval-public"))
    parser.add_argument("--skip-mine", action="store_true", help="reuse OUT/mined")
    parser.add_argument("--condition", action="append", default=None,
                        help="eval conditions (default: execution and no_oracle_rule; "
                        "selected: select = affected)")  # fmt: skip
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["XDG_CONFIG_HOME"] = str(args.out / "xdg")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    if not args.skip_mine:
        if args.out.exists():
            shutil.rmtree(args.out)
        args.out.mkdir(parents=True)
        for source in args.source:
            name, path = source.split("=", 1)
            mine(name, path, args, env)
    cases = point_at_findings(args)
    conditions = args.condition or ["execution", "no_oracle_rule"]
    argv = [sys.executable, "-m", "eyeful", "eval", str(cases), "--yes", "-j", "2", "--format",
            "json", *(f"--condition={c}" for c in conditions)]  # fmt: skip
    proc = run(argv, args.out, env)
    print(proc.stderr[-3000:], file=sys.stderr)
    if not proc.stdout.startswith("{"):
        return proc.returncode or 1
    (args.out / "eval.json").write_text(proc.stdout)
    result = EvalResult.model_validate_json(proc.stdout)
    table = to_markdown(result)
    (args.out / "eval.md").write_text(table)
    print(table)
    print(figures(result, conditions))
    return proc.returncode


def figures(result: EvalResult, conditions: list[str]) -> str:
    """Recall over the mined fixes (features apart) and false-blocking, per condition."""
    lines = []
    for condition in conditions:
        rows = [r for r in result.results if r.condition == condition]
        for label, kind in (("fixes", "-bug-"), ("features", "-feature-")):
            mine = [r for r in rows if kind in r.case and r.required_total]
            total = sum(r.required_total for r in mine)
            if not total:
                continue
            verified = sum(r.required_verified for r in mine)
            met = sum(r.required_met for r in mine)
            lines.append(
                f"{condition}, {label} ({len(mine)} cases): verified recall "
                f"{verified / total:.2f} ({verified}/{total}), reported recall "
                f"{met / total:.2f} ({met}/{total})"
            )
        totals = {t.condition: t for t in result.totals}
        if condition in totals:
            t = totals[condition]
            shown = "-" if t.false_blocking is None else f"{t.false_blocking:.2f}"
            lines.append(
                f"{condition}: false-blocking {shown} ({t.false_blocked}/"
                f"{t.false_blocking_cases} cases)"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
