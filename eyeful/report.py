"""The review's result as a documented JSON object, and the markdown feedback block made from it.

Exit code: 1 when anything blocks, otherwise 3 when something could not be verified, otherwise 0.
A blocking issue is only ever a test that failed on the change and not on the base.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from eyeful import __version__
from eyeful import mdsafe as md
from eyeful.agents import RoleUsage
from eyeful.errors import EXIT_BLOCKING, EXIT_OK, EXIT_UNVERIFIED
from eyeful.grading import ReportedFinding
from eyeful.regressions import QUESTION_KINDS, SUITE, TestFailure
from eyeful.runs import Run
from eyeful.snapshot import Side

Outcome = Literal["nothing_to_review", "clean", "blocking", "unverified"]


class SideInfo(BaseModel):
    tree: str
    commit: str | None
    label: str
    short: str

    @classmethod
    def of(cls, side: Side) -> SideInfo:
        return cls(tree=side.tree, commit=side.commit, label=side.label, short=side.short)


class Uncertainty(BaseModel):
    """A line of the checklist: something eyeful could not check, and why."""

    text: str
    unverified: bool = Field(
        description="true when it means the review could not verify the change (exit 3)"
    )


class Report(BaseModel):
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
    regressions: list[TestFailure] = Field(
        default_factory=list, description="tests failing on the change and passing on the base"
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
    experts: list[str] = Field(default_factory=list, description="the experts that were asked")
    agents: dict[str, RoleUsage] = Field(
        default_factory=dict,
        description="calls, tokens, seconds, faults, cached and cost_usd per agent role",
    )

    def note(self, text: str, *, unverified: bool) -> None:
        self.uncertainty.append(Uncertainty(text=text, unverified=unverified))

    def finish(self, *, nothing_to_review: bool = False) -> Report:
        """Count and set outcome and exit code from the content."""
        self.blocking = len(self.regressions) + sum(f.kind == "fail" for f in self.findings)
        self.questions = sum(f.label == "question" and f.kind == "review" for f in self.findings)
        self.questions += sum(f.kind in QUESTION_KINDS for f in self.other_failures)
        self.disputed = sum(f.kind == "open" for f in self.findings)
        if nothing_to_review:
            self.outcome, self.exit_code = "nothing_to_review", EXIT_OK
        elif self.blocking:
            self.outcome, self.exit_code = "blocking", EXIT_BLOCKING
        elif any(u.unverified for u in self.uncertainty):
            self.outcome, self.exit_code = "unverified", EXIT_UNVERIFIED
        else:
            self.outcome, self.exit_code = "clean", EXIT_OK
        return self


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _fence(text: str, lang: str = "text") -> list[str]:
    return md.fence(text, lang)


def _run_line(run: Run) -> str:
    where = f"{run.name} on the {run.side}"
    how = "cached" if run.cached else f"{run.duration:.1f}s"
    extra = f", {md.line(run.reason)}" if run.reason else ""
    return f"{where}: {run.status} ({how}{extra})"


def _failure_item(failure: TestFailure) -> list[str]:
    if failure.test == SUITE:
        head = "**issue (blocking):** the test suite fails on the change and passes on the base"
    else:
        test = md.code(failure.test)
        head = f"**issue (blocking):** {test} fails on the change and passes on the base"
    confirmed = [f"  Confirmed: {md.line(failure.confirmation)}."] if failure.confirmation else []
    return [
        f"- {head}",
        "  _regression; oracle: derived (a test already in the repository)_",
        *confirmed,
        *_fence(failure.excerpt),
    ]


_KIND_TEXT = {
    "pre_existing": "fails on the base too (pre-existing)",
    "new_test": "is new in the change and fails (not on the base, so not a regression)",
    "undetermined": "fails on the change; the base could not tell whether it passed there",
}
_QUESTION_TEXT = {
    "flaky": "fails on the change but not every time it runs: flaky, so it does not block",
    "order_dependent": "fails in the suite on the change but passes on its own: it depends on "
    "the tests run before it",
    "unconfirmed": "failed on the change and passed on the base, but could not be re-run on "
    "its own to confirm it (configure commands.test_one)",
}


def _question_item(failure: TestFailure) -> list[str]:
    name = "the test suite" if failure.test == SUITE else md.code(failure.test)
    out = [f"- **question:** {name} {_QUESTION_TEXT[failure.kind]}"]
    if failure.confirmation:
        out.append(f"  Ran: {md.line(failure.confirmation)}.")
    return out


_GATE_MARK = {"pass": "pass", "fail": "FAIL", "not_reached": "not reached"}
_ORDER = {"change": 0, "base": 1, "fix": 2}


def _runs_summary(runs: list[Run]) -> str:
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in runs:
        if run.name != "setup":
            groups.setdefault((run.side, run.name), []).append(run)
    parts = []
    for (side, name), group in sorted(
        groups.items(), key=lambda kv: (_ORDER.get(kv[0][0], 9), kv[0][1])
    ):
        what = "the suite" if name == "test" else "the test"
        where = {"change": "on the change", "base": "on the base", "fix": "with the fix"}.get(
            side, f"on the {side}"
        )
        statuses = sorted({r.status for r in group})
        times = f" x{len(group)}" if len(group) > 1 else ""
        parts.append(f"{what} {where}{times}: {'/'.join(statuses)}")
    return "; ".join(parts)


def _oracle_line(finding: ReportedFinding) -> str:
    oracle = finding.oracle
    text = f"oracle: {oracle.graded}"
    if oracle.graded != oracle.declared:
        text += f" (declared {oracle.declared})"
    if oracle.quote:
        where = f" ({md.line(oracle.source)})" if oracle.source else ""
        text += f" — “{md.line(oracle.quote)}”{where}"
    if oracle.note:
        text += f"; {md.line(oracle.note)}"
    return text


def _finding_item(finding: ReportedFinding) -> list[str]:
    place = f"{finding.path}:{finding.line}"
    if finding.end_line and finding.end_line != finding.line:
        place += f"-{finding.end_line}"
    out = [f"- **{finding.label}:** {md.code(place)} {md.line(finding.title)}"]
    out += md.block(finding.body)
    meta = f"{md.line(finding.expert)} · {finding.severity} · evidence: {finding.evidence}"
    if finding.corroborated_by:
        meta += " · also reported by " + md.line(", ".join(finding.corroborated_by))
    out.append(f"  _{meta} · {_oracle_line(finding)}_")
    if finding.gates and any(g.status != "not_reached" for g in finding.gates):
        marks = ", ".join(f"{g.name} {_GATE_MARK[g.status]}" for g in finding.gates)
        out.append(f"  Gates: {marks}.")
    if finding.runs:
        out.append(f"  Ran: {_runs_summary(finding.runs)}.")
    if finding.unverified:
        out.append(f"  Not verified: {md.line(finding.unverified)}.")
    if finding.merged:
        out.append(f"  One problem with: {', '.join(md.code(m) for m in finding.merged)}.")
    if finding.corrected:
        out.append("  The reproduction was corrected once after failing without its fails text.")
    if finding.judge:
        out.append(f"  The judge confirmed it: {md.line(finding.judge)}")
    if finding.objection:
        out.append(f"  Objection: {md.line(finding.objection)}")
    repro = finding.repro
    if repro is not None and repro.code is not None and finding.kind != "fail":
        out.append(f"  Failing test {md.code(repro.path)} (fails with “{md.line(repro.fails)}”):")
        out += _fence(repro.code, "python" if repro.path.endswith(".py") else "text")
    elif repro is not None and finding.kind == "fail":
        test = md.code(repro.test or repro.path)
        out.append(f"  Reproduction: {test} fails with “{md.line(repro.fails)}”.")
    if finding.fix is not None:
        state = "verified" if finding.fix_verified else "not verified"
        note = (
            f": {md.line(finding.fix_note)}"
            if finding.fix_note and not finding.fix_verified
            else ""
        )
        out.append(f"  Suggested fix ({state}{note}):")
        out += _fence(finding.fix.diff, "diff")
    return out


def to_markdown(report: Report) -> str:
    """The feedback block: summary, blocking issues, questions, disputed (folded), uncertainty."""
    if report.outcome == "nothing_to_review":
        return (
            f"**eyeful** {report.base.short}..{report.head.short}: nothing to review "
            "(the change is empty)\n"
        )
    out = [
        f"**eyeful** {report.base.short}..{report.head.short} ({report.head.label} against "
        f"{report.base.label}): {_plural(report.blocking, 'blocking issue')}, "
        f"{_plural(report.questions, 'question')}, {report.disputed} disputed",
        "",
    ]
    if report.runs:
        out += ["Ran: " + "; ".join(_run_line(r) for r in report.runs) + ".", ""]
    blocking = [f for f in report.findings if f.kind == "fail"]
    questions = [f for f in report.findings if f.kind == "review" and f.label == "question"]
    notes = [f for f in report.findings if f.kind == "review" and f.label != "question"]
    disputed = [f for f in report.findings if f.kind == "open"]
    out += ["### Blocking issues", ""]
    for failure in report.regressions:
        out += _failure_item(failure)
    for finding in blocking:
        out += _finding_item(finding)
    if not report.regressions and not blocking:
        out.append("None.")
    out += ["", "### Questions", ""]
    asked = [f for f in report.other_failures if f.kind in QUESTION_KINDS]
    for failure in asked:
        out += _question_item(failure)
    for finding in questions:
        out += _finding_item(finding)
    if not questions and not asked:
        out.append("None.")
    out.append("")
    if any(f.kind not in QUESTION_KINDS for f in report.other_failures) or notes:
        out += ["### Not blocking", ""]
        for failure in report.other_failures:
            if failure.kind in QUESTION_KINDS:
                continue
            name = "the test suite" if failure.test == SUITE else md.code(failure.test)
            out.append(f"- {name} {_KIND_TEXT.get(failure.kind, failure.kind)}")
        for finding in notes:
            out += _finding_item(finding)
        out.append("")
    out += [f"<details><summary>Disputed ({len(disputed)})</summary>", ""]
    for finding in disputed:
        out += _finding_item(finding)
    if not disputed:
        out.append("None.")
    out += ["", "</details>", "", "### Uncertainty", ""]
    if report.uncertainty:
        out += [f"- [ ] {md.line(u.text)}" for u in report.uncertainty]
    else:
        out.append("- [x] Everything eyeful set out to check was checked.")
    used = {role: u for role, u in report.agents.items() if u.calls or u.faults or u.cached}
    if used:
        parts = [
            f"{role} {_plural(u.calls, 'call')}, {u.tokens:,} tokens, {u.seconds:.1f}s"
            + (f", {_plural(u.faults, 'fault')}" if u.faults else "")
            + (f", {u.cached} cached" if u.cached else "")
            + (f", ${u.cost_usd:.4f}" if u.cost_usd is not None else "")
            for role, u in used.items()
        ]
        out += ["", "<sub>Agents: " + "; ".join(parts) + ".</sub>"]
    return "\n".join(out).rstrip() + "\n"
