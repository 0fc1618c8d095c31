"""One review, start to end: snapshot → worktrees → commands → results → regressions → report.

The CLI resolves *whether* the commands are confirmed (it may ask); this module only honours the
answer. It never prints and never touches the user's working tree, index, HEAD, refs or stash.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pygit2

from eyeful import affected, focus, sandbox, unreached
from eyeful.cache import Cache, Served
from eyeful.claims import Incomplete
from eyeful.config import Config
from eyeful.confirmation import can_focus, confirm
from eyeful.environment import EnvironmentKey
from eyeful.findings import Corroboration, Finding, Fix, Repro, verification_order
from eyeful.focus import passable
from eyeful.gates import GateRunner, Verdict
from eyeful.gitutil import RepoPaths
from eyeful.grading import ReportedFinding, grade
from eyeful.regressions import (
    SUITE,
    TestFailure,
    all_new,
    classify,
    compare,
    conftest_regression,
    names,
    suite_failure,
)
from eyeful.regressions import notes as regression_notes
from eyeful.report import Report, SideInfo, add_reruns
from eyeful.runs import Progress, Run, Runner, Silent, setup_key, suite_run
from eyeful.shell import parallel_map
from eyeful.snapshot import EMPTY_TREE, Snapshot, blob_at, open_repository
from eyeful.testlines import locate_tests
from eyeful.testside import decides_outcomes, links_outside, side_tree
from eyeful.treelinks import resolve_in_tree
from eyeful.unrunnable import CONFTEST_FAILED
from eyeful.worktrees import WorktreePool

if TYPE_CHECKING:  # the agents' modules are imported only when an agent is configured
    from eyeful.agents.agent import Agents
    from eyeful.agents.providers import Provider
    from eyeful.agents.roles import ChangeContext


@dataclass
class ReviewRequest:
    paths: RepoPaths
    config: Config
    snapshot: Snapshot
    confirmed: bool
    jobs: int = os.cpu_count() or 2
    findings: list[Finding] = field(default_factory=list)
    description: str = ""
    level: Literal["execution", "read_only"] | None = None
    """Overrides the configuration's level (``--level``)."""
    select: Literal["all", "affected"] | None = None
    """Overrides the configuration's select (``--select``)."""
    no_cache: bool = False
    """`--no-cache`: run everything; nothing is served from the cache."""
    served: Served | None = None
    """When given, collects the cache entries the review was served (eyeful/cli/replay.py)."""
    confirm_hint: str = "run `git eyeful confirm`"
    """What to do to confirm the commands, from where eyeful was started (the CLI knows)."""
    provider: Provider | None = None
    """The agent's transport, built up front by the caller so a bad agent setting stops the run
    before anything runs; built here when not given."""
    environment: EnvironmentKey | None = None
    """The interpreters already asked (the replay's fingerprint): the runs' keys use it when it
    asked what they would (eyeful/environment.py)."""

    @property
    def effective_level(self) -> Literal["execution", "read_only"]:
        return self.level or self.config.level


def read_in_tree(repo: pygit2.Repository, tree: str, path: str) -> str | None:
    """A text file of a snapshot, or None when it is not there (or not a file).

    Symlinks inside the snapshot are followed (`README.rst -> doc/source/index.rst`); one
    leading out of it (absolute, or `..` past its root) reads as absent.
    """
    entry = resolve_in_tree(repo, tree, path)
    if entry is None or entry.type_str != "blob":
        return None
    return blob_at(repo, entry.id).data.decode("utf-8", errors="replace")


_READ_FROM_TEXT = (
    "the tests' results were read from the runner's {how} (a fallback: eyeful keeps a record "
    "of pytest 7.0 or newer, `python -m unittest` and `go test -json`), so which tests exist and "
    "what each failed with is inferred from text"
)


def review(request: ReviewRequest, progress: Progress | None = None) -> Report:
    progress = progress or Silent()
    snap = request.snapshot
    report = Report(base=SideInfo.of(snap.base), head=SideInfo.of(snap.head))
    if snap.empty:
        return report.finish(nothing_to_review=True)
    repo = open_repository(request.paths)
    _left_out(repo, snap, report)
    state = request.paths.state_dir
    pool = WorktreePool(request.paths, repo, max(2, request.jobs), base=snap.base.commit)
    fresh: Runner | None = None
    try:
        if request.effective_level == "read_only":
            why_not_run: str | None = "the level is read_only: no project command runs"
            report.note(f"{why_not_run}; findings are judged, not tested", unverified=False)
            runner: Runner | None = None
            change: Run | None = None
        else:
            cache = Cache(state / "cache", read=not request.no_cache, served=request.served)
            maps = (request.select or request.config.select) == "affected"
            fresh = Runner(repo, request.config, pool, cache, state / "tmp", progress, maps=maps,
                           environment=request.environment)  # fmt: skip
            runner, change, why_not_run = _regressions(request, repo, report, fresh, progress)
        with _agent_files(request, repo) as agent_tree:
            agents = _agents(request, report, agent_tree)
            _findings(request, repo, report, runner, change, why_not_run, agents, progress)
            _agent_notes(report, agents)
        if fresh is not None and fresh.unsandboxed is not None:
            _unsandboxed(report, fresh.unsandboxed, request.config.sandbox != "auto")
    finally:
        if fresh is not None:
            fresh.close()
    commands = request.config.commands
    how = fresh.alone.how() if fresh is not None else focus.of(commands.test, commands.test_one)
    given = _given(fresh, request.snapshot.head.tree, how)
    add_reruns(report, commands.test, how if how is not None and how.ready else None, given)
    return report.finish()


def _left_out(repo: pygit2.Repository, snap: Snapshot, report: Report) -> None:
    """What eyeful's worktrees do not have, on the checklist: submodules (never checked out),
    and where the change moves one or points a link out of the repository, what that changes
    was not tested, so the review cannot be clean."""
    for path in snap.submodules:
        if path not in snap.moved_submodules:
            report.note(
                f"submodule `{path}` was left out: eyeful does not check out submodules",
                unverified=False,
            )
    for path in snap.moved_submodules:
        report.note(
            f"the change moves submodule `{path}` (adds, removes or points it at another "
            "commit), and eyeful does not check out submodules: what that changes was not tested",
            unverified=True,
        )
    if snap.base.tree == EMPTY_TREE:
        return
    for link in links_outside(repo, snap.base.tree, snap.head.tree):
        report.note(
            f"the change points a link out of the repository (`{link}`); eyeful's worktrees "
            "lie elsewhere, so what it leads to there was not what it changes: not tested",
            unverified=True,
        )


def _given(runner: Runner | None, tree: str, how: focus.Focus | None) -> Callable[[str], str]:
    """A runner's id as the rerun command takes it (from the root: Runner.given)."""
    if runner is None or how is None or not how.from_test:
        return lambda test: test
    return lambda test: runner.given([test], tree)[0]


def _unsandboxed(report: Report, why: str, required: bool) -> None:
    """The checklist line for code nobody confirmed that had no sandbox (eyeful/sandbox.py)."""
    what = "could not run (sandbox is required)" if required else "ran unsandboxed"
    report.note(f"code nobody confirmed (a reproduction, a fix) {what}: {why}", unverified=required)


def _agent_notes(report: Report, agents: Agents | None) -> None:
    """What the agents cost, and their faults, skips and notes, on the checklist."""
    if agents is None:
        return
    report.agents = agents.usage
    for fault in agents.faults:
        report.note(
            f"agent fault ({fault.role}, {fault.subject}): {fault.reason}", unverified=False
        )
    for skipped in agents.skipped:
        report.note(f"skipped, budget spent: {skipped}", unverified=False)
    for text in agents.notes:
        report.note(text, unverified=False)


@contextmanager
def _agent_files(request: ReviewRequest, repo: pygit2.Repository) -> Iterator[Path | None]:
    """The change's files for the agent's command: an export with no link to any repository
    (eyeful/agents/export.py), never the user's tree nor one of eyeful's worktrees."""
    if request.config.agent is None or not request.confirmed:
        yield None
        return
    from eyeful.agents.export import exported_tree

    with exported_tree(repo, request.snapshot.head.tree) as path:
        yield path


def _agents(request: ReviewRequest, report: Report, files: Path | None) -> Agents | None:
    config = request.config.agent
    if config is None:
        report.facts.append("No experts ran: no agent is configured ([tool.eyeful.agent])")
        return None
    if not request.confirmed or files is None:
        report.note("no experts ran: the agent is not confirmed for this repository",
                    unverified=False)  # fmt: skip
        return None
    if config.provider == "command" and (why := sandbox.unavailable()) is not None:
        required = request.config.sandbox != "auto"
        what = "could not run (sandbox is required)" if required else "ran unsandboxed"
        report.note(f"the agent's command {what}: {why}", unverified=required)
        if required:
            return None
    from eyeful.agents.agent import Agents
    from eyeful.agents.transport import make_provider

    state = request.paths.state_dir
    return Agents(
        config,
        request.provider or make_provider(config, request.config.sandbox),
        cwd=lambda: files,
        cache=Cache(state / "cache", read=not request.no_cache, served=request.served),
        repo_root=request.paths.root,
    )


def _regressions(
    request: ReviewRequest,
    repo: pygit2.Repository,
    report: Report,
    runner: Runner,
    progress: Progress,
) -> tuple[Runner | None, Run | None, str | None]:
    """Tests on the change, and on the base when they fail; returns why nothing could run."""
    config, snap = request.config, request.snapshot
    if not config.commands.test:
        why = (
            "no test command is configured ([tool.eyeful] commands.test; "
            "`git eyeful init` writes one)"
        )
        report.note(f"{why}, so nothing was run", unverified=True)
        return None, None, why
    if not request.confirmed:
        why = "the project's commands are not confirmed for this repository"
        report.note(f"{why}, so none was run ({request.confirm_hint})", unverified=True)
        return None, None, why
    progress.phase("running the tests on the change")
    change_runs = _change_suite(request, repo, report, runner)
    report.runs += change_runs
    change = suite_run(change_runs)
    if change is None:
        why = "setup failed on the change"
        report.note(f"{why}, so no test ran (see its output in the runs)", unverified=True)
        return runner, None, why
    if change.status == "ERROR":
        broken = _conftest_broken(request, repo, report, runner, change)
        if broken is not None:
            report.regressions = [broken]
            return runner, change, None
        why = change.reason or "the test command could not run"
        report.did_not_run(Incomplete(side="change", tests=0, why=why, reached_no_test=True))
        return runner, change, None
    change = unreached.reach_every_test(runner, repo, snap, report, change)
    _outcomes_told(repo, snap, report, runner, change)
    _hidden_told(snap, report, runner, change)
    if change.status == "PASSED":
        return runner, change, None
    if change.tests_from in (None, "junit", "output"):
        because = f": {change.read_from_text}" if change.read_from_text else ""
        report.note(
            _READ_FROM_TEXT.format(how=change.tests_from or "exit status") + because,
            unverified=False,
        )

    if snap.base.tree == EMPTY_TREE:
        # Nothing to run on an empty base (an unborn branch, a root commit): every test is new.
        failures, notes = all_new(change), [("the base is empty, so every failing test is new",
                                             False)]  # fmt: skip
    else:
        failures, notes = _against_base(request, repo, report, runner, change, progress)
    for text, unverified in notes:
        report.note(text, unverified=unverified)
    if config.block_new_failures:
        for failure in failures:
            failure.blocking = failure.blocking or failure.kind == "new_test"
    with runner.lock_repo():
        locate_tests(repo, snap.head.tree, failures)
    report.regressions = [f for f in failures if f.blocking]
    report.other_failures += [f for f in failures if not f.blocking]
    return runner, change, None


def _outcomes_told(
    repo: pygit2.Repository, snap: Snapshot, report: Report, runner: Runner, change: Run
) -> None:
    """Clean needs outcomes the runner gave (eyeful/claims.py): where the change edits a file of
    the tests that can turn a failure into a pass or a skip, or a file whose functions the
    change's run had decide outcomes (the probe's ``outcome_hooks``: a plugin under any name),
    both sides ran it, so no run of this review shows what the change's code does to the tests
    it passed."""
    if snap.base.tree == EMPTY_TREE:
        return
    outcomes = (change.tests or {}).values()
    held = change.tests is None or any(o in ("skipped", "xfailed") for o in outcomes)
    with runner.lock_repo():
        why = decides_outcomes(
            repo, snap.base.tree, snap.head.tree, change.outcome_hooks or [], held
        )
    if why is not None:
        report.note(
            f"{why}; both sides ran the change's version of it, so a test that passed or was "
            "skipped on both says nothing of what the change's code does",
            unverified=True,
        )


def _hidden_told(snap: Snapshot, report: Report, runner: Runner, change: Run) -> None:
    """Clean needs outcomes the runner gave (eyeful/claims.py): a test whose function failed in
    the change's run and that a hook of the project reported passed (a quarantine, under any
    route: the probe's ``hidden``) runs alone on the change again, and where it fails again,
    on the base by id. Where it passes there, unhidden, the change broke it: a question
    (helper-55). One that passes alone runs in the change's suite again: passing there, it is
    the flaky test a quarantine is for; hidden again, it fails by the tests before it, and the
    base's suite says whether it did so before the change (helper-57). One the base's run hides
    alike is the project's known failure."""
    hidden = sorted(change.hidden or [])
    if not hidden or snap.base.tree == EMPTY_TREE:
        return
    judged: list[tuple[list[str], list[Run]]] = [(hidden, [])]  # (tests, the base's runs of them)
    if runner.alone.how() is not None and all(map(passable, hidden)):
        again = runner.one(snap.head.tree, "change", hidden, grouped=True)
        report.runs += again
        passed_alone = [t for t in hidden if _passed_unhidden(again, t)]
        hidden = [t for t in hidden if t not in passed_alone]
        alone: list[Run] = []
        if hidden:
            alone = runner.one(snap.base.tree, "base", hidden, grouped=True)
            report.runs += alone
        # Each against the base's runs of its own context: alone for those that failed alone
        # again, the suite for those that fail in it only (helper-59).
        judged = [(hidden, alone), _hidden_in_suite(snap, report, runner, passed_alone)]
    passed = [t for tests, runs in judged for t in tests if _unhidden_there(runs, t) == "passed"]
    unknown = [t for tests, runs in judged for t in tests if _unhidden_there(runs, t) is None]
    if passed:
        report.note(
            f"{names(passed)} failed on the change and a hook of the tests reported it passed (a "
            "quarantine?), and it passes on the base: the change may have broken what it checks",
            unverified=True,
        )
    if unknown:
        report.note(
            f"{names(unknown)} failed on the change and a hook of the tests reported it passed; "
            "whether it passes on the base could not be told",
            unverified=True,
        )


def _unhidden_there(runs: list[Run], test: str) -> str | None:
    """What runs say of a hidden test: "hidden" again, "passed" unhidden, or None."""
    if any(test in (run.hidden or []) for run in runs):
        return "hidden"
    return "passed" if any((run.tests or {}).get(test) == "passed" for run in runs) else None


def _passed_unhidden(runs: list[Run], test: str) -> bool:
    return _unhidden_there(runs, test) == "passed"


def _hidden_in_suite(
    snap: Snapshot, report: Report, runner: Runner, tests: list[str]
) -> tuple[list[str], list[Run]]:
    """Of hidden failures that passed alone on the change, those that do not pass in its suite
    run again (live), with the base's suite run (live) to compare them with; none: none ran."""
    if not tests:
        return [], []
    again = runner.suite(snap.head.tree, "change", live=True)
    report.runs += again
    suite = suite_run(again)
    failing = [t for t in tests if suite is None or not _passed_unhidden([suite], t)]
    if not failing:
        return [], []
    base = runner.suite(snap.base.tree, "base", live=True)
    report.runs += base
    return failing, [r for r in base if r.name == "test"]


def _conftest_broken(
    request: ReviewRequest,
    repo: pygit2.Repository,
    report: Report,
    runner: Runner,
    change: Run,
) -> TestFailure | None:
    """A change run that stopped because a conftest.py raised while pytest loaded it: where the
    base's code with the change's tests loads it and passes, every time, the change's code is
    what broke it (a name the conftest imports): the suite as one test, a regression, confirmed
    by `reruns` live runs on each side. Anything else is left as could not run (exit 3)."""
    snap = request.snapshot
    if not (change.reason or "").startswith(CONFTEST_FAILED) or snap.base.tree == EMPTY_TREE:
        return None
    with runner.lock_repo():
        tested = side_tree(repo, snap.base.tree, snap.head.tree)
    reruns = request.config.reruns
    sides = [*[(snap.head.tree, "change")] * (reruns - 1), *[(tested, "base")] * reruns]
    fresh = parallel_map(lambda s: runner.suite(s[0], s[1], live=True), sides, request.jobs)
    for batch in fresh:
        report.runs += batch
    runs = [r for batch in fresh if (r := suite_run(batch)) is not None]
    on_change = [change, *[r for r in runs if r.side == "change"]]
    on_base = [r for r in runs if r.side == "base"]
    if len(on_base) < reruns or any(r.status != "PASSED" for r in on_base):
        return None
    if any(not (r.reason or "").startswith(CONFTEST_FAILED) for r in on_change):
        return None
    return conftest_regression(change, len(on_change), len(on_base))


def _change_suite(
    request: ReviewRequest, repo: pygit2.Repository, report: Report, runner: Runner
) -> list[Run]:
    """The suite on the change, or with `select = "affected"` the tests it can affect."""
    config, snap = request.config, request.snapshot
    if (request.select or config.select) != "affected":
        return runner.suite(snap.head.tree, "change")
    cached = runner.cached_suite(snap.head.tree, "change") is not None
    mapped = runner.mapped(snap.head.tree)
    with runner.lock_repo():
        report.selection = affected.select(
            repo, runner.cache, config, snap.base.commit, snap.head.tree, cached=cached,
            mapped=mapped, environment=runner.environment_key(),
        )  # fmt: skip
    if report.selection.ids is not None:
        # the selected run's test_one, and where the ids of its records start
        runner.alone.learn(report.selection.invocation, "the map's run recorded none",
                           report.selection.rootdir)  # fmt: skip
    runs = runner.suite(snap.head.tree, "change", only=report.selection.ids)
    if report.selection.ids is None and snap.base.commit is not None:
        affected.remember(
            runner.cache,
            config.commands.test or "",
            snap.head.tree,
            snap.base.commit,
            runner.environment_key(),
        )
    return runs


def _against_base(
    request: ReviewRequest,
    repo: pygit2.Repository,
    report: Report,
    runner: Runner,
    change: Run,
    progress: Progress,
) -> tuple[list[TestFailure], list[tuple[str, bool]]]:
    """The base's evidence and the live confirmation of every failing test that could block.

    With `test_one`, only the failing tests run on the base (unless its suite run is cached),
    each alone, `reruns` times on each side; without it, the whole suite runs on the base. "The
    base" is the base's code with the change's test side (eyeful/testside.py) either way.
    """
    snap, config = request.snapshot, request.config
    if can_focus(runner, change):
        base_suite = runner.cached_suite(snap.base.tree, "base")
        listed = any(
            (r.side, r.name, r.tree) == ("base", "test", snap.base.tree) for r in report.runs
        )  # (run live this review, to compare collections: listed once)
        if base_suite is not None and not listed:
            report.runs.append(base_suite)
        progress.phase(
            f"the change fails: running {len(change.failing)} failing tests on their own, "
            f"{config.reruns}x on each side"
        )
        done = confirm(runner, repo, snap, change, base_suite, request.jobs)
        report.runs += done.runs
        failures = classify(change, done.evidence, done.ran)
        notes = []
    else:
        progress.phase("the change fails: running the tests on the base")
        with runner.lock_repo():
            tested = side_tree(
                repo, snap.base.tree, snap.head.tree, change.test_files(),
                rootdir=change.rootdir, documented=change.doctest_files(),
            )  # fmt: skip
        base_runs = runner.suite(tested, "base", live=True)  # it decides: never cached
        report.runs += base_runs
        failures, texts = compare(change, suite_run(base_runs), repo, snap)
        notes = [(t, any(f.kind == "undetermined" for f in failures)) for t in texts]
        if [f.test for f in failures if f.kind == "unconfirmed"] == [SUITE]:
            progress.phase("the suite fails on the change and passes on the base: running again")
            base = suite_run(base_runs)
            failures = _confirm_suite(runner, snap, tested, change, base, report, request)
    why = runner.alone.why_none() if runner.alone.how() is None else None
    return failures, notes + regression_notes(failures, why)


def _confirm_suite(
    runner: Runner,
    snap: Snapshot,
    tested: str,
    change: Run,
    base: Run | None,
    report: Report,
    request: ReviewRequest,
) -> list[TestFailure]:
    """A suite that names no tests is its own test: it runs live `reruns` times on each side
    (``tested``: the base's code with the change's test side)."""
    reruns = request.config.reruns
    sides = [
        *[(snap.head.tree, "change")] * (reruns - (0 if change.cached else 1)),
        *[(tested, "base")] * (reruns - (0 if base is None or base.cached else 1)),
    ]
    fresh = parallel_map(lambda s: runner.suite(s[0], s[1], live=True), sides, request.jobs)
    for batch in fresh:
        report.runs += batch
    runs = [r for r in [change, base] if r is not None and not r.cached]
    runs += [r for batch in fresh if (r := suite_run(batch)) is not None]
    return [suite_failure(change, [r for r in runs if r.side == "change"],
                          [r for r in runs if r.side == "base"])]  # fmt: skip


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
    agents: Agents | None,
    progress: Progress,
) -> None:
    """Experts, one-problem merging, reproduction and fixes, the gates, grading, the judge."""
    snap, config = request.snapshot, request.config
    if why_not_run is None and runner is not None and runner.alone.how() is None:
        why_not_run = runner.alone.why_none()
    gathered = _gather(request, repo, report, agents, progress)
    findings, attempts, ctx = gathered.findings, gathered.attempts, gathered.ctx
    groups, merged_experts, members = gathered.groups, gathered.merged_experts, gathered.members
    if not findings:
        return
    ordered = verification_order(findings)

    def read(path: str) -> str | None:
        return read_in_tree(repo, snap.head.tree, path)

    def test_file(finding: Finding) -> str | None:
        if finding.repro is None:
            return None
        return finding.repro.code if finding.repro.code is not None else read(finding.repro.path)

    verdicts: dict[str, tuple[Verdict, Finding]] = {}
    wants_repro = [
        f for f in ordered
        if f.repro is None and f.evidence == "test" and f.severity != "note"
    ]  # fmt: skip
    if runner is not None and why_not_run is None and agents is not None and ctx is not None:
        from eyeful.agents.roles import write_repro

        context = ctx
        tests = parallel_map(
            lambda f: write_repro(agents, f, context, attempt=attempts.get(f.id)), wants_repro, 4
        )
        written = dict(zip([f.id for f in wants_repro], tests, strict=True))
        ordered = [written.get(f.id) or f for f in ordered]
    runnable = [
        f for f in ordered if _needs_run(f) or any(_needs_run(m) for m in members.get(f.id, []))
    ]  # fmt: skip
    if runner is not None and why_not_run is None and runnable:
        progress.phase(f"verifying {len(runnable)} findings")
        active = runner

        def read_base(path: str) -> str | None:
            with active.lock_repo():
                return read_in_tree(repo, snap.base.tree, path)

        gates = GateRunner(
            runner, snap, change, request.jobs, lambda p: read(p) is not None, read_base
        )
        with runner.lock_repo():
            skey = setup_key(repo, snap.head.tree, config)
        corrector, fixer = _agent_hooks(agents, ctx)

        def verify(finding: Finding) -> tuple[str, tuple[Verdict, Finding]]:
            # One problem, one proof: when the lead's reproduction does not hold, the others'
            # are tried in turn; the comment takes its words from the one that held.
            candidates = [f for f in [finding, *members.get(finding.id, [])] if _needs_run(f)]
            result: tuple[Verdict, Finding] | None = None
            for candidate in candidates:
                fixes = corrector if candidate is finding else None
                tried = gates.verify_remembered(candidate, test_file, skey, fixes, fixer)
                if result is None or tried[0].reproduced:
                    result = tried
                if tried[0].reproduced:
                    break
            assert result is not None
            return finding.id, result

        verdicts = dict(parallel_map(verify, runnable, request.jobs))
    graded: list[ReportedFinding] = []
    corroboration = Corroboration(findings)
    for finding in ordered:
        verdict, final = verdicts.get(finding.id, (None, finding))
        unverified_why = why_not_run if _needs_run(finding) else None
        if finding in wants_repro and final.repro is None and agents is not None and runner:
            unverified_why = "the reproduction agent gave no usable test"
        corroborated = merged_experts.get(finding.id) if groups else None
        item = grade(
            final,
            verdict,
            read_file=read,
            description=_description(request),
            test_file=test_file(final),
            corroborated_by=corroborated if corroborated is not None else corroboration.of(finding),
            why_not_run=unverified_why,
        )
        item.merged = groups.get(finding.id, [])
        if final.id != finding.id:  # the words of the member whose reproduction held
            item.merged = [finding.id, *(i for i in item.merged if i != final.id)]
            rest = [finding, *(m for m in members.get(finding.id, []) if m.id != final.id)]
            item.corroborated_by = sorted({m.expert for m in rest} - {final.expert})
        if verdict is not None and verdict.corrected:
            item.corrected = True
        graded.append(item)
    if agents is not None and ctx is not None:
        for item in _judge(agents, ctx, graded, ordered, verdicts, progress):
            report.note(
                f"finding `{item.id}` ({item.title}) was not judged: the judge gave no verdict "
                "for it",
                unverified=False,
            )
    _record(report, graded, verdicts)


def _record(
    report: Report, graded: list[ReportedFinding], verdicts: dict[str, tuple[Verdict, Finding]]
) -> None:
    """The graded findings into the report, with a checklist line for each that fell short."""
    for item in graded:
        report.findings.append(item)
        if item.unverified and item.severity != "note" and item.kind != "open":
            report.note(
                f"finding `{item.id}` ({item.title}) could not be verified: {item.unverified}",
                unverified=False,
                finding=item.id,
            )
        verdict = verdicts.get(item.id, (None, None))[0]
        if verdict is not None and verdict.needs_correcting:
            report.note(f"finding `{item.id}`: the test needs correcting", unverified=False)


@dataclass
class _Gathered:
    """The findings to verify: the given ones, the experts', and how they were merged."""

    findings: list[Finding]
    attempts: dict[str, Repro] = field(default_factory=dict)
    """Tests the experts wrote for their own findings, set aside for the reproduction agent."""
    ctx: ChangeContext | None = None
    groups: dict[str, list[str]] = field(default_factory=dict)
    merged_experts: dict[str, list[str]] = field(default_factory=dict)
    members: dict[str, list[Finding]] = field(default_factory=dict)
    """A merged group's lead -> the others, in order."""


def _gather(
    request: ReviewRequest,
    repo: pygit2.Repository,
    report: Report,
    agents: Agents | None,
    progress: Progress,
) -> _Gathered:
    """The given findings, then the experts' (their own tests set aside), merged into problems."""
    out = _Gathered(findings=list(request.findings))
    config = request.config
    if agents is None:
        return out
    from eyeful.agents.merge import merge, near_pairs
    from eyeful.agents.roles import change_context, run_experts, same_problem

    assert config.agent is not None
    ctx = change_context(repo, request.snapshot, _description(request), config.agent.max_file_chars)
    out.ctx = ctx
    progress.phase(f"asking {len(config.agent.experts)} experts")
    found, notes = run_experts(agents, config.agent.experts, ctx, report.regressions)
    for text in notes:
        report.note(text, unverified=False)
    found, out.attempts = _claimants_tests_aside(found)
    out.findings += found
    report.experts = list(config.agent.experts)
    if not near_pairs(out.findings):
        return out
    progress.phase("asking whether nearby findings are one problem")
    result = merge(out.findings, lambda a, b: same_problem(agents, a, b, ctx))
    if result.failed:
        report.note(f"nothing was merged: a one-problem request failed "
                    f"({result.failed})", unverified=False)  # fmt: skip
    out.findings, out.groups = result.findings, result.groups
    by_id = {f.id: f for f in request.findings + found}
    for lead, others in out.groups.items():
        lead_expert = by_id[lead].expert
        out.merged_experts[lead] = sorted({by_id[o].expert for o in others} - {lead_expert})
        out.members[lead] = [by_id[o] for o in others]
    return out


def _claimants_tests_aside(found: list[Finding]) -> tuple[list[Finding], dict[str, Repro]]:
    """The claimant does not write the proof: a test an expert wrote for its own finding is set
    aside (shown to the reproduction agent, which writes the test). An existing test the expert
    names (no code) stays: the repository's authors wrote it. `--findings` files keep theirs."""
    out: list[Finding] = []
    attempts: dict[str, Repro] = {}
    for finding in found:
        if finding.repro is not None and finding.repro.code is not None:
            attempts[finding.id] = finding.repro
            finding = finding.model_copy(update={"repro": None})
        out.append(finding)
    return out, attempts


def _agent_hooks(
    agents: Agents | None, ctx: ChangeContext | None
) -> tuple[
    Callable[[Finding, Verdict], Finding | None] | None, Callable[[Finding], Fix | None] | None
]:
    if agents is None or ctx is None:
        return None, None
    from eyeful.agents.roles import write_fix, write_repro

    context = ctx

    def corrector(finding: Finding, verdict: Verdict) -> Finding | None:
        assert finding.repro is not None
        previous = {
            "code": finding.repro.code or "",
            "fails": finding.repro.fails,
            "output": verdict.change_tail[-4000:],
        }
        return write_repro(agents, finding, context, previous)

    def fixer(finding: Finding) -> Fix | None:
        return write_fix(agents, finding, context)

    return corrector, fixer


def _judge(
    agents: Agents,
    ctx: ChangeContext,
    graded: list[ReportedFinding],
    findings: list[Finding],
    verdicts: dict[str, tuple[Verdict, Finding]],
    progress: Progress,
) -> list[ReportedFinding]:
    """The judge reads every finding no test showed; a rejected one becomes `open`.

    Returns the findings it was asked about and gave no verdict for (not judged)."""
    shown = {
        fid for fid, (verdict, _) in verdicts.items()
        if verdict.reproduced or verdict.pre_existing
    }  # fmt: skip
    unshown = [f for f in findings if f.id not in shown and f.severity != "note"]
    if not unshown:
        return []
    progress.phase(f"the judge reads {len(unshown)} findings")
    from eyeful.agents.roles import judge

    results = judge(agents, unshown, ctx)
    asked = {f.id for f in unshown}
    not_judged: list[ReportedFinding] = []
    for item in graded:
        if item.id in asked and item.id not in results:
            not_judged.append(item)
        if item.id not in results or item.kind == "fail":
            continue
        valid, reason = results[item.id]
        if valid:
            item.judge = reason
        else:
            item.kind, item.objection = "open", reason
    return not_judged
