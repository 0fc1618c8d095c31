"""The review's result as a documented JSON object, and the markdown feedback block made from it.

Exit code: 1 when anything blocks, otherwise 3 when something could not be verified, otherwise 0.
A blocking issue is only ever a test that failed on the change and not on the base.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Literal

from pydantic import Field

from eyeful import __version__
from eyeful import mdsafe as md
from eyeful.affected import Selection
from eyeful.causes import blocking_causes, regression_items
from eyeful.claims import Incomplete, Outcome, outcome
from eyeful.confine import Refused
from eyeful.errors import EXIT_BLOCKING, EXIT_OK, EXIT_UNVERIFIED
from eyeful.findingtext import finding_item
from eyeful.focus import Focus
from eyeful.grading import ReportedFinding
from eyeful.model import Model
from eyeful.regressions import (
    QUESTION_KINDS,
    SUITE,
    UNVERIFIED_KINDS,
    TestFailure,
    not_the_code,
)
from eyeful.runs import Run
from eyeful.snapshot import Side


class RoleUsage(Model):
    calls: int = 0
    tokens: int = 0
    seconds: float = 0.0
    faults: int = 0
    cached: int = Field(default=0, description="answers served from the cache (no call)")
    cost_usd: float | None = Field(
        default=None, description="what the calls cost, as the CLI reported it (claude); else null"
    )


class SideInfo(Model):
    tree: str
    commit: str | None
    label: str
    short: str

    @classmethod
    def of(cls, side: Side) -> SideInfo:
        return cls(tree=side.tree, commit=side.commit, label=side.label, short=side.short)


class Uncertainty(Model):
    """A line of the checklist: something eyeful could not check, and why."""

    text: str
    unverified: bool = Field(
        description="true when it means the review could not verify the change (exit 3)"
    )
    finding: str | None = Field(
        default=None, description="the id of the finding it is about, when it is about one"
    )


class Report(Model):
    """What `git eyeful --format json` prints."""

    eyeful: str = __version__
    base: SideInfo
    head: SideInfo
    outcome: Outcome = "clean"
    exit_code: int = EXIT_OK
    blocking: int = 0
    questions: int = 0
    disputed: int = 0
    runs: list[Run] = Field(default_factory=list)
    selection: Selection | None = Field(
        default=None, description='with select = "affected": which tests ran on the change'
    )
    regressions: list[TestFailure] = Field(
        default_factory=list,
        description="tests failing on the change and passing on the base (and, with "
        "block_new_failures, new tests failing on the change): each blocks",
    )
    other_failures: list[TestFailure] = Field(
        default_factory=list,
        description="tests failing on the change that do not block: pre-existing, new, or "
        "undetermined",
    )
    findings: list[ReportedFinding] = Field(
        default_factory=list, description="every finding given, graded; ordered as verified"
    )
    uncertainty: list[Uncertainty] = Field(default_factory=list)
    incomplete: list[Incomplete] = Field(
        default_factory=list,
        description="tests a run did not run (stopped early, could not start), and why: exit 3",
    )
    facts: list[str] = Field(
        default_factory=list,
        description="facts about the run that are no gap in what was checked (no agent configured)",
    )
    experts: list[str] = Field(default_factory=list, description="the experts that were asked")
    agents: dict[str, RoleUsage] = Field(
        default_factory=dict,
        description="calls, tokens, seconds, faults, cached and cost_usd per agent role",
    )

    def note(self, text: str, *, unverified: bool, finding: str | None = None) -> None:
        self.uncertainty.append(Uncertainty(text=text, unverified=unverified, finding=finding))

    def finish(self, *, nothing_to_review: bool = False) -> Report:
        """Count and set outcome and exit code from the content."""
        self.blocking = len(self.regressions) + sum(f.kind == "fail" for f in self.findings)
        self.questions = sum(f.label == "question" and f.kind == "review" for f in self.findings)
        self.questions += sum(f.kind in QUESTION_KINDS for f in self.other_failures)
        self.disputed = sum(f.kind == "open" for f in self.findings)
        self.outcome, self.exit_code = outcome(
            nothing_to_review=nothing_to_review,
            blocking=self.blocking,
            unverified=any(u.unverified for u in self.uncertainty)
            or bool(self.incomplete)
            or any(f.kind in UNVERIFIED_KINDS for f in self.other_failures),
        )
        return self

    def did_not_run(self, incomplete: Incomplete) -> None:
        """Tests a run did not run: on the record, and on the checklist (exit 3)."""
        self.incomplete.append(incomplete)
        self.note(incomplete.line(), unverified=True)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# Every piece of text that comes from outside eyeful (titles, bodies, quotes, test names, paths,
# commands, outputs) reaches the markdown through eyeful.mdsafe: here through these two, in
# eyeful/causes.py (regressions) and eyeful/findingtext.py (findings) through mdsafe's own.


def _text(text: str) -> str:
    """Untrusted text on one line (a title, a quote, a reason)."""
    return md.line(text)


def _code(text: str) -> str:
    """Untrusted text as an inline code span (a test id, a path, a command)."""
    return md.code(text)


def rerun_command(how: Focus, test: str) -> str | None:
    """The command that runs ``test`` alone, to paste into a shell (None: not an id it takes)."""
    try:
        return how.rerun(test)
    except Refused:
        return None


def add_reruns(
    report: Report,
    test: str | None,
    how: Focus | None,
    given: Callable[[str], str] = lambda test: test,
) -> None:
    """Give every regression and finding the command that reruns it locally (``given``: a
    runner's id as ``how`` takes it, from the root where pytest's rootdir is below it)."""
    for failure in [*report.regressions, *report.other_failures]:
        if failure.test == SUITE or failure.confirmed_in == "suite":
            failure.rerun = test  # (one that fails only there, or cannot run alone)
        elif how is not None:
            failure.rerun = rerun_command(how, given(failure.test))
    for finding in report.findings:
        if finding.repro is not None and how is not None:
            finding.rerun = rerun_command(how, finding.repro.test or finding.repro.path)


def compact(report: Report) -> Report:
    """The report with per-test outcomes kept only for tests that failed in some run (failing,
    flaky, regressed), and counts of outcomes for every run: small for huge suites."""
    out = report.model_copy(deep=True)
    runs = [*out.runs, *(run for f in out.findings for run in f.runs)]
    keep = {f.test for f in [*out.regressions, *out.other_failures]}
    for run in runs:
        keep |= run.failing
    for run in runs:
        if run.tests is not None:
            run.counts = dict(Counter(run.tests.values()))
            run.tests = {t: o for t, o in run.tests.items() if t in keep}
        run.collected = None  # every id the runner collected: with --all-tests only
        run.kinds = None
    return out


Hook = Literal["pre-commit", "git"]

_OUTCOME_WORDS = {
    "blocking": "blocking",
    "clean": "clean",
    "unverified": "could not verify",
    "nothing_to_review": "nothing to review",
}
_COUNT_WORDS = (
    ("passed", "passed"), ("failed", "failed"), ("skipped", "skipped"),
    ("xfailed", "xfailed"), ("xpassed", "xpassed"),
)  # fmt: skip


def _counts(run: Run) -> str:
    counts: dict[str, int] = (
        run.counts if run.counts is not None else dict(Counter((run.tests or {}).values()))
    )
    parts = [f"{counts[key]} {word}" for key, word in _COUNT_WORDS if counts.get(key)]
    if counts.get("error"):
        parts.append(_plural(counts["error"], "error"))
    return ", ".join(parts)


def _when(started: str | None) -> str:
    if not started:
        return ""
    try:
        moment = datetime.fromisoformat(started)
    except ValueError:
        return ""
    return f" ran {moment.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC,"


def _run_line(run: Run) -> str:
    what = {"test": "tests", "test_one": "one test"}.get(run.name, run.name)
    counts = _counts(run) if run.name == "test" else ""
    status = f"{run.status}, {counts}" if counts else run.status
    if run.cached:
        how = f"cached:{_when(run.started)} took {run.duration:.1f}s"
    else:
        how = f"{run.duration:.1f}s"
    extra = f", {_text(run.reason)}" if run.reason else ""
    return f"{what} on the {run.side}: {status} ({how}{extra})"


def _statuses(runs: list[Run]) -> str:
    """``FAILED`` when every run failed, else each status counted (``2 FAILED, 1 PASSED``)."""
    counted = Counter(r.status for r in runs)
    if len(counted) == 1:
        return runs[0].status
    return ", ".join(f"{n} {status}" for status, n in counted.most_common())


def _repeated(name: str, side: str, runs: list[Run]) -> str:
    """A command run more than once on one side: the first as usual, the others counted. Setup
    runs in each worktree whose last setup was for other inputs (a new one, say)."""
    if len(runs) == 1:
        return _run_line(runs[0])
    if name == "setup":
        times = ", ".join(f"{r.duration:.1f}s" for r in runs)
        return (f"setup on the {side}: {_statuses(runs)}, {len(runs)} runs ({times}), once in "
                "each worktree that needed it")  # fmt: skip
    more = runs[1:]
    return f"{_run_line(runs[0])}, then {_plural(len(more), 'more run')}: {_statuses(more)}"


def _ran(runs: list[Run]) -> str:
    """Setup and suite runs once per side (a command run again is counted: the confirmation's
    pairs, setup in another worktree); the runs of single tests alone, counted per side."""
    repeated: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        if run.name != "test_one":
            repeated.setdefault((run.name, run.side), []).append(run)
    parts = [_repeated(name, side, group) for (name, side), group in repeated.items()]
    alone = Counter(r.side for r in runs if r.name == "test_one")
    if alone:
        sides = ", ".join(f"{n} on the {side}" for side, n in alone.items())
        together = any(len(r.tests or {}) > 1 for r in runs if r.name == "test_one")
        which = "the tests" if together else "a test"  # ids in one process
        if any(r.status == "FAILED" for r in runs if r.name == "test_one"):
            which = which.replace("test", "failing test", 1)  # not where a skip was checked
        parts.append(f"{_plural(sum(alone.values()), 'run')} of {which} alone ({sides})")
    return "Ran: " + "; ".join(parts) + "."


def _side_name(side: SideInfo) -> str:
    if side.commit is None and side.label == "staged":
        return "staged changes"
    if side.commit is None or re.fullmatch(r"[0-9a-f]{7,64}", side.label):
        return side.short
    return f"{_code(side.label)} ({side.short})"


def _subject(report: Report) -> str:
    base, head = report.base, report.head
    if head.commit is None and head.label == "staged":
        return f"staged changes against {_side_name(base)}"
    labels = [s.label for s in (base, head) if not re.fullmatch(r"[0-9a-f]{7,64}", s.label)]
    if len(labels) == 2:
        names = f" ({_text(head.label)} against {_text(base.label)})"
    elif base.commit is None:  # the empty tree: say so rather than show its id alone
        names = f" (against {_text(base.label)})"
    else:
        names = ""
    return f"{base.short}..{head.short}{names}"


def _headline(report: Report) -> str:
    """The outcome in words, first: blocking, questions only, clean, could not verify."""
    word = _OUTCOME_WORDS[report.outcome]
    if report.outcome == "clean" and report.questions:
        word = "questions only"
    counts = [_plural(report.questions, "question")] if report.questions else []
    if report.disputed:
        counts.append(f"{report.disputed} disputed")
    if report.outcome == "blocking":
        # Regressions of one cause are one issue; the tests are counted when they are more.
        causes, failing = blocking_causes(report.regressions), len(report.regressions)
        items = _plural(causes + report.blocking - failing, "blocking issue")
        if failing > causes:
            items += f" ({_plural(failing, 'failing test')})"
        what = ", ".join([items, *counts])
    elif report.outcome == "unverified" and (none := _reached_no_test(report)) is not None:
        what = "; ".join(
            [f"the tests could not run on the {none.side}: {_text(none.why)}", *counts]
        )
    elif report.outcome == "unverified":
        unchecked = sum(u.unverified for u in report.uncertainty)
        what = "; ".join(
            [f"nothing shown to block, but {_plural(unchecked, 'check')} could not be made "
             "(see Uncertainty)", *counts]
        )  # fmt: skip
    else:
        what = "; ".join(["nothing blocks", *counts])
    selected = selection_phrase(report)
    what += f"; {selected}" if selected else ""
    return f"**eyeful: {word}** · {_subject(report)}: {what}"


def _reached_no_test(report: Report) -> Incomplete | None:
    """The run that reached no test, the change's first: the headline says so."""
    none = [i for i in report.incomplete if i.reached_no_test]
    return min(none, key=lambda i: i.side != "change") if none else None


SELECTION_LIMIT = (
    "Not followed: state one test leaves for another (a cache it filled, a global it set); "
    "affected_max_age bounds how old the map may be"
)
"""What a selected run cannot see (eyeful/affected.py), said on the report's Selection line."""


def selection_phrase(report: Report) -> str | None:
    """With `select = "affected"`: how much of the suite ran on the change, and why."""
    chosen = report.selection
    if chosen is None:
        return None
    if chosen.ids is None:
        return f"ran the whole suite: {_text(chosen.why_all or 'nothing to select')}"
    run = next((r for r in report.runs if r.name == "test" and r.side == "change"), None)
    counts = (run.counts or dict(Counter((run.tests or {}).values()))) if run else {}
    ran = sum(counts.values())
    last = f"; the full suite last ran on {(chosen.map_tree or '')[:7]}"
    return f"ran {ran:,} of {chosen.map_tests or 0:,} tests (affected by the change{last})"


_SKIP = {
    "git": "skip eyeful once with `git push --no-verify`",
    "pre-commit": "skip eyeful once with `SKIP=eyeful git push` (or `git push --no-verify`, which "
    "skips every hook)",
}


def _hook_line(report: Report, hook: Hook) -> str:
    """In a pre-push hook: what happened to the push, and how to skip eyeful once."""
    if report.exit_code == EXIT_OK:
        return "**The push goes ahead.**"
    why = {
        EXIT_BLOCKING: "of the blocking issues above",
        EXIT_UNVERIFIED: "eyeful could not verify the change (see Uncertainty)",
    }.get(report.exit_code, "eyeful did not finish")
    return f"**The push was stopped** because {why}: fix that, or {_SKIP[hook]}."


_KIND_TEXT = {
    "pre_existing": "fails with the base's code too, under the change's tests (pre-existing)",
    "new_test": "is new in the change and fails (not on the base, so not a regression)",
    "undetermined": "fails on the change; the base could not tell whether it passed there",
}
_QUESTION_TEXT = {
    "flaky": "fails on the change but not every time it runs: flaky, so it does not block",
    "order_dependent": "fails in the suite on the change but passes on its own: it depends on "
    "the tests run before it",
    "unconfirmed": "failed on the change and passed on the base, but could not be re-run on "
    "its own to confirm it (configure commands.test_one)",
    "xpass_strict": "is marked as an expected failure (strict) and passed on the change: the "
    "change may have fixed a known bug",
    "fails_otherwise": "fails on the base too, but with another failure than on the change: "
    "the change may have broken it anew",
    "newly_skipped": "passed on the base and is skipped (or not collected) on the change",
}

# Where the runs were mixed (eyeful.claims ``decide``: "mixed" on the base, else the change).
_FLAKY_ON_CHANGE = (
    "fails on the change but not every time it runs: flaky on the change (every run on the "
    "base passed), so it does not block"
)
_FLAKY_ON_BASE = (
    "fails on the change, and not every time it runs on the base either: flaky on the base, "
    "so it does not block"
)


_HELD_BACK = {
    "skipped": "passed on the base and is skipped on the change",
    "xfailed": "passed on the base and is an expected failure on the change",
    "not collected": "passed on the base and is not collected on the change",
}


def _question_item(failure: TestFailure) -> list[str]:
    name = "the test suite" if failure.test == SUITE else _code(failure.test)
    said = _QUESTION_TEXT[failure.kind]
    if failure.kind == "flaky":
        said = _FLAKY_ON_BASE if failure.on_base == "mixed" else _FLAKY_ON_CHANGE
    if failure.kind == "unconfirmed" and failure.confirmation:
        # Re-run on its own on both sides, so not for want of test_one: for what its runs show
        # of how the code is written (eyeful/claims.py: ``representation``).
        why = not_the_code(failure.representation)
        said = f"failed on the change and passed on the base, but {why} (why: Ran)"
    out = [f"- **question:** {name} {said}"]
    if failure.kind == "newly_skipped":
        said = _HELD_BACK.get(failure.on_change, said)
        out[0] = f"- **question:** {name} {said} ({_text(failure.message or 'no reason given')})"
    if failure.confirmation:
        out.append(f"  Ran: {_text(failure.confirmation)}.")
    return out + _rerun_line(failure.rerun)


def _rerun_line(command: str | None) -> list[str]:
    return [f"  Rerun: {_code(command)}"] if command else []


def _footer(report: Report) -> list[str]:
    facts = list(report.facts)
    used = {role: u for role, u in report.agents.items() if u.calls or u.faults or u.cached}
    if used:
        parts = [
            f"{role} {_plural(u.calls, 'call')}, {u.tokens:,} tokens, {u.seconds:.1f}s"
            + (f", {_plural(u.faults, 'fault')}" if u.faults else "")
            + (f", {u.cached} cached" if u.cached else "")
            + (f", ${u.cost_usd:.4f}" if u.cost_usd is not None else "")
            for role, u in used.items()
        ]
        facts.append("Agents: " + "; ".join(parts))
    return ["", "<sub>" + ". ".join(f.rstrip(".") for f in facts) + ".</sub>"] if facts else []


def to_markdown(report: Report, hook: Hook | None = None) -> str:
    """The feedback block: the outcome in words, what ran, blocking issues, questions, what does
    not block, disputed (folded), what could not be checked, facts; in a hook, the push's fate."""
    if report.outcome == "nothing_to_review":
        head = f"**eyeful: nothing to review** · {_subject(report)}: the change is empty"
        return _end([head], report, hook)
    out = [_headline(report), ""]
    if report.runs:
        selected = selection_phrase(report)
        ran = _ran(report.runs)
        if selected and report.selection is not None and report.selection.ids is not None:
            selected += f". {SELECTION_LIMIT}"
        out += [f"{ran} Selection: {selected}." if selected else ran, ""]
    blocking = [f for f in report.findings if f.kind == "fail"]
    questions = [f for f in report.findings if f.kind == "review" and f.label == "question"]
    notes = [f for f in report.findings if f.kind == "review" and f.label != "question"]
    disputed = [f for f in report.findings if f.kind == "open"]
    empty = []
    seen: dict[tuple[str, str], str] = {}  # reproductions shown, each once

    def item(finding: ReportedFinding) -> list[str]:
        return finding_item(finding, report.findings, seen)

    if report.regressions or blocking:
        out += ["### Blocking issues", "", *regression_items(report.regressions)]
        for finding in blocking:
            out += item(finding)
        out.append("")
    else:
        empty.append("no blocking issues")
    asked = [f for f in report.other_failures if f.kind in QUESTION_KINDS]
    if questions or asked:
        out += ["### Questions", ""]
        for failure in asked:
            out += _question_item(failure)
        for finding in questions:
            out += item(finding)
        out.append("")
    else:
        empty.append("no questions")
    if empty:
        out += [", ".join(empty).capitalize() + ".", ""]
    if any(f.kind not in QUESTION_KINDS for f in report.other_failures) or notes:
        out += ["### Not blocking", ""]
        for failure in report.other_failures:
            if failure.kind in QUESTION_KINDS:
                continue
            name = "the test suite" if failure.test == SUITE else _code(failure.test)
            rerun = f" (rerun: {_code(failure.rerun)})" if failure.rerun else ""
            said = _KIND_TEXT.get(failure.kind, failure.kind)
            if failure.test == SUITE and failure.kind == "undetermined":
                said = "fails on the change and on the base, naming no test on either"
            out.append(f"- {name} {said}{rerun}")
        for finding in notes:
            out += item(finding)
        out.append("")
    if disputed:
        out += [f"<details><summary>Disputed ({len(disputed)})</summary>", ""]
        for finding in disputed:
            out += item(finding)
        out += ["", "</details>", ""]
    if report.uncertainty:
        out += ["### Uncertainty", ""]
        out += [f"- [ ] {_checklist_line(u, report)}" for u in report.uncertainty]
    return _end(out, report, hook)


def _section(finding: ReportedFinding) -> str:
    if finding.kind == "fail":
        return "Blocking issues"
    if finding.kind == "open":
        return "Disputed"
    return "Questions" if finding.label == "question" else "Not blocking"


# A checklist line about tests starts with their ids: `a`, `b` and 3 more ...
_ABOUT_TESTS = re.compile(r"((?:`[^`]+`)(?:, `[^`]+`)*(?: and \d+ more)?) ")


def _checklist_line(u: Uncertainty, report: Report) -> str:
    """A line of the checklist; one about a finding, or about tests, shown above under Questions
    points at them (what happened is said there) instead of saying it again."""
    shown = next((f for f in report.findings if f.id == u.finding), None)
    if shown is not None and shown.unverified and shown.unverified in u.text:
        return (f"finding {_code(shown.id)} ({_text(shown.title)}) could not be verified (why: "
                f"above, under {_section(shown)})")  # fmt: skip
    about = _ABOUT_TESTS.match(u.text)
    asked = {f"`{f.test}`" for f in report.other_failures if f.kind in QUESTION_KINDS}
    if about and set(re.findall(r"`[^`]+`", about[1])) <= asked:
        return f"{_text(about[1])}: see Questions above"
    return _text(u.text)


def _end(out: list[str], report: Report, hook: Hook | None) -> str:
    while out and not out[-1]:
        out.pop()
    out += _footer(report)
    if hook is not None:
        out += ["", _hook_line(report, hook)]
    return "\n".join(out) + "\n"
