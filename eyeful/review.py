"""One review, start to end: snapshot → worktrees → commands → results → regressions → report.

The CLI resolves *whether* the commands are confirmed (it may ask); this module only honours the
answer. It never prints and never touches the user's working tree, index, HEAD, refs or stash.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pygit2

from eyeful.cache import Cache, cache_key
from eyeful.config import Config
from eyeful.findings import Finding, corroboration, verification_order
from eyeful.gates import GateRunner, Verdict
from eyeful.gitutil import RepoPaths
from eyeful.grading import grade
from eyeful.progress import Progress, Silent
from eyeful.regressions import compare
from eyeful.report import Report, SideInfo
from eyeful.runs import Run, Runner, setup_key
from eyeful.snapshot import Snapshot, blob_at, open_repository, tree_at
from eyeful.worktrees import WorktreePool


@dataclass
class ReviewRequest:
    paths: RepoPaths
    config: Config
    snapshot: Snapshot
    confirmed: bool
    jobs: int = os.cpu_count() or 2
    findings: list[Finding] = field(default_factory=list)
    description: str = ""


def read_in_tree(repo: pygit2.Repository, tree: str, path: str) -> str | None:
    """A text file of a snapshot, or None when it is not there (or not a file)."""
    try:
        entry = tree_at(repo, tree)[path]
    except KeyError:
        return None
    if entry.type_str != "blob":
        return None
    return blob_at(repo, entry.id).data.decode("utf-8", errors="replace")


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
    repo = open_repository(request.paths)
    runner, change, why_not_run = _regressions(request, repo, report, progress)
    if request.findings:
        _findings(request, repo, report, runner, change, why_not_run)
    return report.finish()


def _regressions(
    request: ReviewRequest, repo: pygit2.Repository, report: Report, progress: Progress
) -> tuple[Runner | None, Run | None, str | None]:
    """Tests on the change, and on the base when they fail; returns why nothing could run."""
    config, snap = request.config, request.snapshot
    if not config.commands.test:
        why = "no test command is configured ([tool.eyeful] commands.test)"
        report.note(f"{why}, so nothing was run", unverified=True)
        return None, None, why
    if not request.confirmed:
        why = "the project's commands are not confirmed for this repository"
        report.note(f"{why}, so none was run (run `git eyeful confirm`)", unverified=True)
        return None, None, why
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
    change_runs = runner.suite(snap.head.tree, "change")
    report.runs += change_runs
    change = _test_run(change_runs)
    if change is None:
        why = "setup failed on the change"
        report.note(f"{why}, so no test ran (see its output in the runs)", unverified=True)
        return runner, None, why
    if change.status == "ERROR":
        report.note(f"the tests could not run on the change: {change.reason}", unverified=True)
        return runner, change, None
    if change.status == "PASSED":
        return runner, change, None

    progress.phase("the change fails: running the tests on the base")
    base_runs = runner.suite(snap.base.tree, "base")
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
    return runner, change, None


def _description(request: ReviewRequest) -> str:
    return "\n\n".join([request.description, *request.snapshot.messages])


def _needs_run(finding: Finding) -> bool:
    return finding.severity != "note" and finding.evidence == "test" and finding.repro is not None


def _findings(
    request: ReviewRequest,
    repo: pygit2.Repository,
    report: Report,
    runner: Runner | None,
    change: Run | None,
    why_not_run: str | None,
) -> None:
    """Verify what can be run, in order of severity and corroboration, then grade everything."""
    snap, config = request.snapshot, request.config
    ordered = verification_order(request.findings)
    if why_not_run is None and not config.commands.test_one:
        why_not_run = "no test_one command is configured ([tool.eyeful] commands.test_one)"

    def read(path: str) -> str | None:
        return read_in_tree(repo, snap.head.tree, path)

    def test_file(finding: Finding) -> str | None:
        if finding.repro is None:
            return None
        return finding.repro.code if finding.repro.code is not None else read(finding.repro.path)

    verdicts: dict[str, Verdict] = {}
    runnable = [f for f in ordered if _needs_run(f)]
    if runner is not None and why_not_run is None and runnable:
        gates = GateRunner(runner, snap, change, request.jobs, lambda p: read(p) is not None)
        with runner.lock_repo():
            skey = setup_key(repo, snap.head.tree, config)

        def verify(finding: Finding) -> tuple[str, Verdict]:
            return finding.id, _verify_cached(runner, gates, finding, test_file(finding), skey)

        with ThreadPoolExecutor(max_workers=max(1, min(request.jobs, len(runnable)))) as pool:
            verdicts = dict(pool.map(verify, runnable))
    for finding in ordered:
        verdict = verdicts.get(finding.id)
        graded = grade(
            finding,
            verdict,
            read_file=read,
            description=_description(request),
            test_file=test_file(finding),
            corroborated_by=corroboration(finding, request.findings),
            why_not_run=why_not_run if _needs_run(finding) else None,
        )
        report.findings.append(graded)
        if graded.unverified and finding.severity != "note":
            report.note(
                f"finding `{finding.id}` ({finding.title}) could not be verified: "
                f"{graded.unverified}",
                unverified=False,
            )
        elif verdict is not None and verdict.needs_correcting:
            report.note(f"finding `{finding.id}`: the test needs correcting", unverified=False)


def _verify_cached(
    runner: Runner, gates: GateRunner, finding: Finding, test_file: str | None, skey: str | None
) -> Verdict:
    snap, config = gates.snapshot, runner.config
    key = cache_key(
        kind="verdict",
        head=snap.head.tree,
        base=snap.base.tree,
        finding=finding.model_dump(mode="json"),
        test_file=test_file,
        commands=config.commands.model_dump(),
        setup=skey,
        junit=config.junit,
        timeout=config.timeout,
    )
    hit = runner.cache.get("verdicts", key)
    if hit is not None:
        verdict = Verdict.model_validate(hit)
        for run in verdict.runs:
            run.cached = True
        return verdict
    verdict = gates.verify(finding, test_file)
    if not any(r.status == "ERROR" for r in verdict.runs):
        runner.cache.put("verdicts", key, verdict.model_dump(mode="json"))
    return verdict
