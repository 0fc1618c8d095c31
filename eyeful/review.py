"""One review, start to end: snapshot → worktrees → commands → results → regressions → report.

The CLI resolves *whether* the commands are confirmed (it may ask); this module only honours the
answer. It never prints and never touches the user's working tree, index, HEAD, refs or stash.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from eyeful.cache import Cache
from eyeful.config import Config
from eyeful.gitutil import RepoPaths
from eyeful.progress import Progress, Silent
from eyeful.regressions import compare
from eyeful.report import Report, SideInfo
from eyeful.runs import Run, Runner
from eyeful.snapshot import Snapshot, open_repository
from eyeful.worktrees import WorktreePool


@dataclass
class ReviewRequest:
    paths: RepoPaths
    config: Config
    snapshot: Snapshot
    confirmed: bool
    jobs: int = os.cpu_count() or 2


def _test_run(runs: list[Run]) -> Run | None:
    return runs[-1] if runs and runs[-1].name == "test" else None


def review(request: ReviewRequest, progress: Progress | None = None) -> Report:
    progress = progress or Silent()
    snap = request.snapshot
    report = Report(base=SideInfo.of(snap.base), head=SideInfo.of(snap.head))
    if snap.empty:
        return report.finish(nothing_to_review=True)
    for path in snap.submodules:
        report.note(
            f"submodule `{path}` was left out: eyeful does not check out submodules",
            unverified=False,
        )
    config = request.config
    if not config.commands.test:
        report.note(
            "no test command is configured ([tool.eyeful] commands.test), so nothing was run",
            unverified=True,
        )
        return report.finish()
    if not request.confirmed:
        report.note(
            "the project's commands are not confirmed for this repository, so none was run "
            "(run `git eyeful confirm`)",
            unverified=True,
        )
        return report.finish()

    repo = open_repository(request.paths)
    state = request.paths.state_dir
    runner = Runner(
        repo,
        config,
        WorktreePool(request.paths, repo, size=max(2, request.jobs)),
        Cache(state / "cache"),
        state / "tmp",
        progress,
    )
    progress.phase("running the tests on the change")
    change_runs = runner.test(snap.head.tree, "change")
    report.runs += change_runs
    change = _test_run(change_runs)
    if change is None:
        report.note(
            "setup failed on the change, so no test ran (see its output in the runs)",
            unverified=True,
        )
        return report.finish()
    if change.status == "ERROR":
        report.note(f"the tests could not run on the change: {change.reason}", unverified=True)
        return report.finish()
    if change.status == "PASSED":
        return report.finish()

    progress.phase("the change fails: running the tests on the base")
    base_runs = runner.test(snap.base.tree, "base")
    report.runs += base_runs
    base = _test_run(base_runs)
    if base is None:
        report.note(
            "setup failed on the base, so the change's failures are unclassified", unverified=True
        )
    failures, notes = compare(change, base, repo)
    for text in notes:
        report.note(text, unverified=any(f.kind == "undetermined" for f in failures))
    report.regressions = [f for f in failures if f.blocking]
    report.other_failures = [f for f in failures if not f.blocking]
    return report.finish()
