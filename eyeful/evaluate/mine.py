"""`eyeful eval mine`: cases from a repository's own history, the way BugsInPy and Defects4J were
built.

For a commit F that changes source files and adds or changes tests, where the tests F touched
fail on F with F's source change reverted and pass on F (run with the confirmed `test_one`), the
case's base is F without its changes to the test files it runs (its test helpers, conftest.py
and data kept, so the fix's test runs on the change as it ran on the reverted source) and its
change reverts F's source change: the bug comes back. Ground truth: a required finding on the
reverted hunks and `forbidden_regressions` for every test that fails on the base too. A commit
that changes code and no test, with the suite passing before and after, is a clean control case
(nothing may block).

Everything runs in a throwaway clone; each case gets a `repo.bundle` holding two commits (the base,
a root commit, and the change on it), and `reference-findings.json`: the fix's own failing test as
the reproduction of a finding on the reverted hunks. Its ``fails`` text comes from the failure the
test actually produced on the reverted source, as the runner recorded it (eyeful's pytest probe:
the exception chain, pytest's assertion explanation included): a text the exception's message
holds and the test file writes (:func:`fails_text`), so the reference can pass
``fails_as_claimed``; then the case requires ``reproduced`` (a test must show the finding). Where
no such text exists (no record, a message the test file does not spell), the case says why and
requires a question only.

A case whose test fails on the reverted source only because a name it uses is missing (an
ImportError, a module without the attribute, an unexpected keyword argument) is labelled a
feature (``feature-<commit>``, not ``bug-``): the commit added API rather than fixing behaviour.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import pygit2

from eyeful import focus
from eyeful.cache import Cache
from eyeful.config import Config
from eyeful.confine import Refused
from eyeful.errors import EyefulError
from eyeful.evaluate.clone import to_toml
from eyeful.evaluate.failtext import (
    fails_text,
    failures_of,
    feature_reason,
    one_line,
    why_no_fails,
    written_text,
)
from eyeful.failures import Failure
from eyeful.gitutil import RepoPaths, clean_env, find_repo
from eyeful.runs import Progress, Run, Runner, Silent
from eyeful.snapshot import blob_at, open_repository, tree_at
from eyeful.worktrees import WorktreePool

_CODE = {
    ".py",
    ".pyi",
    ".go",
    ".js",
    ".jsx",
    ".ts",
    ".tsx",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".rs",
    ".java",
    ".kt",
    ".rb",
    ".php",
    ".cs",
    ".swift",
    ".scala",
    ".sh",
    ".pl",
    ".lua",
    ".m",
    ".sql",
    ".pyx",
}
_TEST_DIRS = {"test", "tests", "testing", "__tests__"}
_TEST_MODULES = {"test.py", "tests.py"}
"""A project's one test module, at any level (python-slugify's top-level ``test.py``)."""
_SIGNATURE = pygit2.Signature("eyeful eval", "eval@eyeful.invalid", 1700000000, 0)


def is_test_path(path: str) -> bool:
    pure = PurePosixPath(path)
    name = pure.name
    return (
        any(part in _TEST_DIRS for part in pure.parts[:-1])
        or name.startswith("test_")
        or name in _TEST_MODULES
        or name == "conftest.py"
        or re.search(r"_test\.\w+$", name) is not None
        or re.search(r"\.(test|spec)\.\w+$", name) is not None
    )


def is_test_file(path: str) -> bool:
    """A file `test_one` can run: test_*.py, *_test.py, test.py, tests.py and the like."""
    name = PurePosixPath(path).name
    return (
        name.startswith("test_")
        or name in _TEST_MODULES
        or re.search(r"_test\.\w+$|\.(test|spec)\.\w+$", name) is not None
    )


def is_source(path: str) -> bool:
    return PurePosixPath(path).suffix.lower() in _CODE and not is_test_path(path)


@dataclass
class Tried:
    commit: str
    subject: str
    outcome: str


@dataclass
class MineReport:
    outdir: Path
    tried: list[Tried] = field(default_factory=list)
    cases: list[str] = field(default_factory=list)


class _Skip(Exception):
    pass


def _tree_with(
    repo: pygit2.Repository, tree: pygit2.Tree, source: pygit2.Tree, paths: list[str]
) -> pygit2.Oid:
    """``tree`` with ``paths`` as they are in ``source`` (absent there: removed)."""
    index = pygit2.Index()
    index.read_tree(tree)
    for path in paths:
        try:
            entry = source[path]
        except KeyError:
            if path in index:
                index.remove(path)
            continue
        index.add(pygit2.IndexEntry(path, entry.id, entry.filemode))
    return index.write_tree(repo)


def _changes(
    repo: pygit2.Repository, parent: pygit2.Commit, commit: pygit2.Commit
) -> list[tuple[str, str]]:
    diff = parent.tree.diff_to_tree(commit.tree)
    out = []
    for patch in diff:
        if patch is None:
            continue
        delta = patch.delta
        status = delta.status_char()
        out.append((status, delta.new_file.path if status != "D" else delta.old_file.path))
        if delta.old_file.path != delta.new_file.path:
            out.append(("D", delta.old_file.path))
    return out


def _hunks(repo: pygit2.Repository, old: pygit2.Oid, new: pygit2.Oid, path: str) -> list[int]:
    """[first, last] lines of ``path``'s changed hunks on the new side."""
    diff = tree_at(repo, old).diff_to_tree(tree_at(repo, new), context_lines=0)
    lines: list[int] = []
    for patch in diff:
        if patch is None or patch.delta.new_file.path != path:
            continue
        for hunk in patch.hunks:
            start = max(1, hunk.new_start)
            lines += [start, start + max(hunk.new_lines, 1) - 1]
    return [min(lines), max(lines)] if lines else [1, 1]


def _sized(repo: pygit2.Repository, old: pygit2.Oid, new: pygit2.Oid) -> dict[str, int]:
    diff = tree_at(repo, old).diff_to_tree(tree_at(repo, new))
    return {p.delta.new_file.path: p.line_stats[1] + p.line_stats[2] for p in diff if p}


class Miner:
    def __init__(
        self,
        paths: RepoPaths,
        config: Config,
        outdir: Path,
        progress: Progress,
        only: Literal["bug", "clean"] | None = None,
        include_features: bool = False,
    ) -> None:
        self.only = only
        self.include_features = include_features
        self.config = config
        self.outdir = outdir
        self.progress = progress
        self.where = Path(tempfile.mkdtemp(prefix="eyeful-mine-"))
        root = self.where / "repo"
        proc = subprocess.run(
            ["git", "clone", "-q", "--no-checkout", str(paths.root), str(root)],
            env=clean_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise EyefulError(f"cannot clone {paths.root} to mine it: {proc.stderr.strip()}")
        self.paths = find_repo(root, env=clean_env())
        self.repo = open_repository(self.paths)
        state = self.paths.state_dir
        pool = WorktreePool(self.paths, self.repo, size=2)
        self.runner = Runner(
            self.repo, config, pool, Cache(state / "cache"), state / "tmp", progress
        )

    def close(self) -> None:
        shutil.rmtree(self.where, ignore_errors=True)

    def _one(self, tree: pygit2.Oid, side: str, test: str) -> Run:
        if self.runner.alone.how() is None:
            # A test_one derived from a pytest command comes from pytest's parse of its run.
            self._suite(tree, side)
            if self.runner.alone.how() is None:
                raise _Skip(self.runner.alone.why_none())
        try:
            run = self.runner.one(str(tree), side, test, from_root=True)[-1]
        except Refused as err:  # an id eyeful will not hand to a command: nothing to check
            raise _Skip(f"test_one cannot run {test} on {side}: {err}") from None
        if run.name != "test_one":
            raise _Skip(f"setup failed on {side}")
        if run.status == "ERROR":
            raise _Skip(f"test_one could not run {test} on {side}: {run.reason}")
        return run

    def _suite(self, tree: pygit2.Oid, side: str) -> Run:
        run = self.runner.suite(str(tree), side)[-1]
        if run.name != "test":
            raise _Skip(f"setup failed on {side}")
        if run.status == "ERROR":
            raise _Skip(f"the tests could not run on {side}: {run.reason}")
        return run

    def try_commit(self, commit: pygit2.Commit) -> tuple[str, dict[str, Any]]:
        if len(commit.parents) != 1:
            raise _Skip(
                "a root commit: nothing to compare with" if not commit.parents else "a merge commit"
            )
        parent = commit.parents[0]
        changes = _changes(self.repo, parent, commit)
        source = sorted({p for _, p in changes if is_source(p)})
        tests = sorted({p for _, p in changes if is_test_path(p)})
        if not source:
            raise _Skip("changes no source file")
        fixed, before = commit.tree, parent.tree
        if not tests:
            if self.only == "bug":
                raise _Skip("changes no test, and only bug cases are wanted (--only bug)")
            return self._clean(commit, parent)
        if self.only == "clean":
            raise _Skip("changes tests, and only clean cases are wanted (--only clean)")
        runnable = [p for s, p in changes if s != "D" and is_test_file(p) and p in tests]
        if not runnable:
            raise _Skip("its test changes hold no test file test_one can run")
        reverted = _tree_with(self.repo, fixed, before, source)
        # Only the test files themselves go: helpers the fix's test imports stay in the base.
        base = _tree_with(self.repo, fixed, before, runnable)
        change = _tree_with(self.repo, tree_at(self.repo, base), before, source)
        for test in runnable:
            if self._one(fixed.id, "fix", test).status != "PASSED":
                raise _Skip(f"its test {test} fails on the fix itself")
        caught = {}
        for test in runnable:
            run = self._one(reverted, "fix reverted", test)
            if run.status == "FAILED":
                caught[test] = run
        if not caught:
            raise _Skip("its tests pass with the source change reverted: no bug to bring back")
        fails: dict[str, str | None] = {}
        why_not: list[str] = []
        failed: list[Failure] = []
        for test, run in caught.items():
            code = blob_at(self.repo, fixed[test].id).data.decode("utf-8", errors="replace")
            own = failures_of(run, test)
            failed += own
            fails[test] = fails_text(own, code, PurePosixPath(test).stem)
            if fails[test] is None:
                why_not.append(why_no_fails(run, test, own))
        feature = feature_reason(failed)
        if feature is not None and not self.include_features:
            raise _Skip(f"a feature, not a fix: {feature} (--include-features mines it)")
        base_run = self._suite(base, "base")
        if base_run.status == "FAILED" and base_run.tests is None:
            raise _Skip("the suite fails on the base without naming the failing tests")
        sizes = _sized(self.repo, base, change)
        target = max(source, key=lambda p: (sizes.get(p, 0), p))
        lines = _hunks(self.repo, base, change, target)
        shown = any(fails.values())
        truth: dict[str, Any] = {
            "required_findings": [
                {
                    "path": target,
                    "claim": "",
                    "at_least": "reproduced" if shown else "question",
                    "lines": lines,
                }
            ],
            "forbidden_regressions": sorted(base_run.failing),
        }
        meta = {
            "caught_by": sorted(caught),
            "reverted": source,
            "target": target,
            "lines": lines,
            "runs": caught,
            "fails": fails,
            "unshown": None if shown else "; ".join(why_not),
            "feature": feature,
        }
        kind = "feature" if meta["feature"] is not None else "bug"
        return kind, {"truth": truth, "base": base, "change": change, "meta": meta, "fixed": fixed}

    def _clean(self, commit: pygit2.Commit, parent: pygit2.Commit) -> tuple[str, dict[str, Any]]:
        for side, tree in (("the commit", commit.tree), ("its parent", parent.tree)):
            run = self._suite(tree.id, side)
            if run.status != "PASSED":
                raise _Skip(f"changes no test, and the suite fails on {side}")
        truth = {"clean": True}
        return "clean", {
            "truth": truth,
            "base": parent.tree.id,
            "change": commit.tree.id,
            "meta": {},
        }

    def write(
        self, kind: str, commit: pygit2.Commit, found: dict[str, Any]
    ) -> tuple[str, str | None]:
        """Write the case; its name, and why it has no reference findings (None: it has)."""
        name = f"{kind}-{str(commit.id)[:10]}"
        case = self.outdir / name
        case.mkdir(parents=True)
        base = self.repo.create_commit(None, _SIGNATURE, _SIGNATURE, "Base\n", found["base"], [])
        change = self.repo.create_commit(
            None, _SIGNATURE, _SIGNATURE, "Change under review\n", found["change"], [base]
        )
        refs = [f"refs/heads/eval-{name}-base", f"refs/heads/eval-{name}-change"]
        self.repo.references.create(refs[0], base, force=True)
        self.repo.references.create(refs[1], change, force=True)
        try:
            proc = subprocess.run(
                ["git", "bundle", "create", "-q", str(case / "repo.bundle"), *refs],
                cwd=self.paths.root,
                env=clean_env(),
                capture_output=True,
                text=True,
                check=False,
            )
        finally:
            for ref in refs:
                self.repo.references.delete(ref)
        if proc.returncode != 0:
            raise EyefulError(f"git bundle failed for {name}: {proc.stderr.strip()}")
        subject = commit.message.strip().splitlines()[0] if commit.message.strip() else ""
        settings = self.config.model_dump(mode="json", exclude_defaults=True, exclude={"source"})
        meta = found["meta"]
        notes = ""
        listed: dict[str, Any] = {}
        empty = None
        if kind != "clean":
            references, why = self._reference_findings(found)
            (case / "reference-findings.json").write_text(
                json.dumps(references, indent=1) + "\n", encoding="utf-8"
            )
            if references:  # the case runs as mined: `eyeful eval` gives them to the review
                listed = {"findings": ["reference-findings.json"]}
            else:
                empty = why
                notes += _comment(f"No reference findings: {why}")
            notes += f"# Caught by: {', '.join(meta['caught_by'])}\n"
            if meta["feature"] is not None:
                notes += _comment(f"Labelled a feature, not a fix: {meta['feature']}")
            if meta["unshown"] is not None:
                notes += _comment(
                    "Requires a question only: no reference finding can pass fails_as_claimed "
                    f"({meta['unshown']})"
                )
        header = (
            f"# Mined by `eyeful eval mine` from {commit.id}: {one_line(subject)}\n"
            + notes
            + to_toml({"base": str(base), "change": str(change), **listed, **found["truth"]})
        )
        text = header + "\n" + to_toml({"eyeful": settings})
        (case / "case.toml").write_text(text, encoding="utf-8")
        return name, empty

    def _reference_findings(self, found: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        """The fix's own failing test as the reproduction of a finding on the reverted hunks; and
        why there is none, when there is none."""
        meta = found["meta"]
        out = []
        none = []
        change_tree = tree_at(self.repo, found["change"])
        for number, test in enumerate(meta["caught_by"], 1):
            code = blob_at(self.repo, found["fixed"][test].id).data.decode(
                "utf-8", errors="replace"
            )
            # Without a text the failure shows, the test file's own text: the finding is still
            # reported (a question), and the gates say why it is not shown.
            fails = meta["fails"][test] or written_text(meta["runs"][test].tail, code)
            if fails is None:
                none.append(
                    f"{test}: nothing to claim it fails with (its failure's words are not in the "
                    "test file, which has no assert and no line pytest marked)"
                )
                continue
            path = test
            if path in change_tree:
                pure = PurePosixPath(test)
                path = str(pure.with_name(f"{pure.stem}_eval_repro{pure.suffix}"))
            out.append(
                {
                    "id": f"mined-{number}",
                    "expert": "mined",
                    "severity": "error",
                    "evidence": "test",
                    "path": meta["target"],
                    "line": meta["lines"][0],
                    "end_line": meta["lines"][1],
                    "title": f"The change breaks what {test} checks",
                    "body": "Reverting this source change brings back the bug the fix's test "
                    "catches.",
                    "oracle": {"kind": "human"},
                    "repro": {"path": path, "code": code, "fails": fails},
                }
            )
        return out, "; ".join(none)


def _comment(text: str) -> str:
    return "".join(f"# {line}\n" for line in _wrap(one_line(text)))


def _wrap(text: str, width: int = 98) -> list[str]:
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*lines, line] if line else lines


def _commits(paths: RepoPaths, rev_range: str | None) -> list[str]:
    proc = subprocess.run(
        ["git", "rev-list", "--no-merges", rev_range or "HEAD", "--"],
        cwd=paths.root,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        what = (proc.stderr.strip().splitlines() or ["unknown"])[0]
        raise EyefulError(f"--rev-range {rev_range or 'HEAD'!r}: git cannot list it: {what}")
    return proc.stdout.split()


def mine(
    paths: RepoPaths,
    config: Config,
    outdir: Path,
    *,
    rev_range: str | None = None,
    limit: int | None = None,
    progress: Progress | None = None,
    only: Literal["bug", "clean"] | None = None,
    include_features: bool = False,
) -> MineReport:
    """Try every non-merge commit of the range, newest first; write a case for each that fits."""
    if not config.commands.test or focus.of(config.commands.test, config.commands.test_one) is None:
        raise EyefulError(
            "mining runs the project's `test` command and each test alone: configure "
            "commands.test, and commands.test_one unless eyeful derives it from a plain pytest, "
            "python -m unittest or go test command"
        )
    if outdir.exists() and (not outdir.is_dir() or any(outdir.iterdir())):
        raise EyefulError(f"{outdir}: exists and is not an empty directory; give a new OUTDIR")
    commits = _commits(paths, rev_range)
    outdir.mkdir(parents=True, exist_ok=True)
    report = MineReport(outdir=outdir)
    miner = Miner(paths, config, outdir, progress or Silent(), only, include_features)
    try:
        for sha in commits:
            if limit is not None and len(report.cases) >= limit:
                break
            commit = miner.repo[sha]
            assert isinstance(commit, pygit2.Commit)
            subject = commit.message.strip().splitlines()[0] if commit.message.strip() else ""
            miner.progress.phase(f"mining {sha[:10]} {subject}")
            try:
                kind, found = miner.try_commit(commit)
            except _Skip as why:
                report.tried.append(Tried(sha, subject, f"skipped: {why}"))
                continue
            name, empty_why = miner.write(kind, commit, found)
            report.cases.append(name)
            empty = f", no reference findings: {empty_why}" if empty_why is not None else ""
            report.tried.append(Tried(sha, subject, f"case {name}{empty}"))
    finally:
        miner.close()
    return report


def to_markdown(report: MineReport) -> str:
    out = [
        f"Mined {len(report.cases)} case(s) into {report.outdir} from "
        f"{len(report.tried)} commit(s) tried.",
        "",
        "| commit | subject | result |",
        "|---|---|---|",
    ]
    for tried in report.tried:
        subject = tried.subject.replace("|", "\\|")
        out.append(f"| {tried.commit[:10]} | {subject} | {tried.outcome} |")
    return "\n".join(out) + "\n"
