"""Running the project's setup and test commands on a tree, in a pooled worktree, with caching.

A run's result depends on the tree, the commands and what `setup` installed, so that is its cache
key. `setup` runs in a worktree before its first test and again only when its command or one of
its input files (manifests, lock files) changed.
"""

from __future__ import annotations

import shlex
import uuid
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Literal

import pygit2
from pydantic import BaseModel

from eyeful import results
from eyeful.cache import Cache, cache_key
from eyeful.commands import CommandResult, Status, run_command
from eyeful.config import Config
from eyeful.progress import Progress, Silent
from eyeful.snapshot import tree_at
from eyeful.worktrees import Worktree, WorktreePool

RunName = Literal["setup", "test", "test_one"]


class Run(BaseModel):
    """One command run on one tree; what the report and the cache keep of it."""

    side: str
    name: RunName
    command: str
    tree: str
    status: Status
    exit_code: int | None
    duration: float
    reason: str | None = None
    tail: str = ""
    tests: dict[str, results.Outcome] | None = None
    tests_from: Literal["junit", "output"] | None = None
    cached: bool = False

    @property
    def failing(self) -> set[str]:
        return {t for t, o in (self.tests or {}).items() if o in ("failed", "error")}

    @property
    def names_known(self) -> bool:
        """Whether the run said which tests failed (a failed run naming none did not)."""
        return self.tests is not None


def setup_key(repo: pygit2.Repository, tree_id: str, config: Config) -> str | None:
    """What setup depends on: its command and the blobs of its input files in ``tree_id``."""
    setup = config.commands.setup
    if not setup:
        return None
    tree = tree_at(repo, tree_id)
    inputs: dict[str, str] = {}
    by_dir: dict[str, list[str]] = {}
    for pattern in config.setup_inputs:
        pure = PurePosixPath(pattern)
        parent = "" if str(pure.parent) == "." else str(pure.parent)
        by_dir.setdefault(parent, []).append(pure.name)
    for directory, names in by_dir.items():
        try:
            sub = tree[directory] if directory else tree
        except KeyError:
            continue
        if sub.type_str != "tree":
            continue
        for entry in tree_at(repo, sub.id):
            name = entry.name or ""
            if entry.type_str == "blob" and any(fnmatchcase(name, n) for n in names):
                inputs[f"{directory}/{name}" if directory else name] = str(entry.id)
    return cache_key(setup=setup, inputs=inputs)


class Runner:
    """Runs setup and tests on trees for one review."""

    def __init__(
        self,
        repo: pygit2.Repository,
        config: Config,
        pool: WorktreePool,
        cache: Cache,
        tmp_dir: Path,
        progress: Progress | None = None,
    ) -> None:
        self.repo = repo
        self.config = config
        self.pool = pool
        self.cache = cache
        self.tmp_dir = tmp_dir
        self.progress: Progress = progress or Silent()

    def _record(
        self, side: str, name: RunName, command: str, tree: str, result: CommandResult
    ) -> Run:
        return Run(
            side=side,
            name=name,
            command=command,
            tree=tree,
            status=result.status,
            exit_code=result.exit_code,
            duration=round(result.duration, 3),
            reason=result.reason,
            tail=result.tail,
        )

    def _setup(self, worktree: Worktree, side: str, tree: str, key: str | None) -> Run | None:
        setup = self.config.commands.setup
        if setup is None or key is None or worktree.read_setup_key() == key:
            return None
        self.progress.started(f"setup on the {side}", setup)
        worktree.write_setup_key(None)
        result = run_command(setup, worktree.path, timeout=self.config.timeout)
        run = self._record(side, "setup", setup, tree, result)
        self.progress.finished(run)
        if run.status == "PASSED":
            worktree.write_setup_key(key)
        return run

    def test(self, tree: str, side: str) -> list[Run]:
        """Setup (when needed) and the test command on ``tree``; the test run comes last."""
        command = self.config.commands.test
        assert command is not None, "callers check that a test command is configured"
        skey = setup_key(self.repo, tree, self.config)
        key = cache_key(
            tree=tree,
            test=command,
            setup=skey,
            junit=self.config.junit,
            timeout=self.config.timeout,
        )
        hit = self.cache.get("runs", key)
        if hit is not None:
            run = Run.model_validate({**hit, "side": side, "cached": True})
            self.progress.finished(run)
            return [run]
        out: list[Run] = []
        with self.pool.acquire() as worktree:
            self.progress.phase(f"checking out the {side} ({tree[:7]})")
            worktree.checkout(self.repo, tree)
            setup_run = self._setup(worktree, side, tree, skey)
            if setup_run is not None:
                out.append(setup_run)
                if setup_run.status != "PASSED":
                    return out
            run = self._run_tests(worktree, side, tree, command)
        out.append(run)
        if run.status != "ERROR":
            self.cache.put("runs", key, run.model_dump(exclude={"side", "cached"}))
        return out

    def _run_tests(self, worktree: Worktree, side: str, tree: str, command: str) -> Run:
        report: Path | None = None
        actual = command
        if self.config.junit:
            report = worktree.path / self.config.junit
            report.unlink(missing_ok=True)
        elif results.is_pytest_command(command):
            self.tmp_dir.mkdir(parents=True, exist_ok=True)
            report = self.tmp_dir / f"junit-{uuid.uuid4().hex}.xml"
            actual = f"{command} --junitxml={shlex.quote(str(report))} -o junit_family=xunit1"
        scanner = results.OutputScanner()
        self.progress.started(f"tests on the {side}", command)
        result = run_command(
            actual, worktree.path, timeout=self.config.timeout, on_line=scanner.feed
        )
        run = self._record(side, "test", command, tree, result)
        outcomes: dict[str, results.Outcome] = {}
        if report is not None and report.is_file():
            try:
                outcomes = results.parse_junit(report)
                run.tests_from = "junit"
            except results.ResultsError:
                outcomes = {}
            finally:
                if not self.config.junit:
                    report.unlink(missing_ok=True)
        if run.tests_from is None:
            outcomes = scanner.outcomes
            run.tests_from = "output" if outcomes else None
        failing = any(o in ("failed", "error") for o in outcomes.values())
        if run.status == "PASSED" or (run.status == "FAILED" and failing):
            run.tests = outcomes
        else:
            run.tests_from = None
        self.progress.finished(run)
        return run
