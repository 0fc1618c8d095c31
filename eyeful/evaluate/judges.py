"""The deterministic judges: a review's JSON report held to a case's ground truth.

They fail closed. Claims match on word boundaries, case-insensitively (``injection`` does not
match ``injections``); paths match exactly. A run that could not review is ``unverifiable``: it
never passes a forbidden-findings, forbidden-regressions or clean check, and it fails the case.
A judge with no ground truth in the case is ``skipped``, so rates count only cases that assert.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from eyeful.evaluate.cases import LEVEL_RANK, CaseFile, ForbiddenFinding, Level, RequiredFinding

JudgeName = Literal[
    "required_findings", "forbidden_findings", "regressions", "forbidden_regressions", "clean"
]
JUDGES: tuple[JudgeName, ...] = (
    "required_findings",
    "forbidden_findings",
    "regressions",
    "forbidden_regressions",
    "clean",
)
Status = Literal["pass", "fail", "skipped"]
SHOWING_GATES = ("runs", "not_flaky", "fails_as_claimed", "introduced")
"""The gates that show a problem is real and the change brought it (eyeful.gates.GATE_NAMES[:4]):
a finding whose reproduction passed them is ``reproduced``, whatever its oracle."""


class _View(BaseModel):
    model_config = ConfigDict(extra="ignore")


class FindingView(_View):
    """What the judges read of a reported finding."""

    id: str = ""
    path: str
    line: int
    end_line: int | None = None
    title: str
    body: str
    kind: str
    label: str
    severity: str = "error"
    evidence: str = "test"
    repro: dict[str, object] | None = None
    gates: list[dict[str, object]] = Field(default_factory=list)
    unverified: str | None = None
    baseline_state: str | None = None

    @property
    def never_ran(self) -> bool:
        """A reproduction eyeful meant to run and did not (no gate reached), for a reason of the
        run (commands, setup), not of the finding (a refused reproduction)."""
        runnable = self.severity != "note" and self.evidence == "test" and self.repro is not None
        reached = any(g.get("status") not in (None, "not_reached") for g in self.gates)
        refused = (self.unverified or "").startswith("refused")
        return runnable and not reached and not refused and self.kind != "open"

    @property
    def reproduced(self) -> bool:
        """Shown by a test: its reproduction passed runs, not_flaky, fails_as_claimed and
        introduced, and eyeful found no other reason to call it unverified (a test that ran none
        of the lines the change touched), whatever its oracle made of it."""
        passed = {g.get("name") for g in self.gates if g.get("status") == "pass"}
        return all(name in passed for name in SHOWING_GATES) and self.unverified is None

    def not_shown(self) -> str:
        """Why the gates did not show it (for a judge's reason)."""
        for gate in self.gates:
            if gate.get("name") in SHOWING_GATES and gate.get("status") != "pass":
                detail = str(gate.get("detail") or gate.get("status"))
                return f"{gate.get('name')}: {detail}"
        return self.unverified or "no reproduction was run"


class FailureView(_View):
    test: str


class UncertaintyView(_View):
    text: str
    unverified: bool = False


class UsageView(_View):
    calls: int = 0
    tokens: int = 0
    faults: int = 0


class ReportView(_View):
    """The fields of `git eyeful --format json` the eval reads (README, "The JSON report")."""

    outcome: str
    exit_code: int
    blocking: int = 0
    questions: int = 0
    findings: list[FindingView] = Field(default_factory=list)
    regressions: list[FailureView] = Field(default_factory=list)
    uncertainty: list[UncertaintyView] = Field(default_factory=list)
    experts: list[str] = Field(default_factory=list)
    agents: dict[str, UsageView] = Field(default_factory=dict)


class Verdict(BaseModel):
    judge: JudgeName
    status: Status
    reason: str = ""


SemanticMatch = Callable[[FindingView, str], tuple[bool, str]]
"""The optional semantic judge: does this finding state the claim? Any fault is (False, why)."""


def states(claim: str, text: str) -> bool:
    """Whether ``text`` contains ``claim``'s words in order, each on word boundaries, ignoring
    case and spacing. An empty claim is stated by anything."""
    words = claim.split()
    if not words:
        return True
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(word) for word in words) + r"(?!\w)"
    return re.search(pattern, text, flags=re.IGNORECASE) is not None


def level_of(finding: FindingView) -> int:
    """The finding's label as a rank of LEVEL_RANK: blocking (kind fail), question (a review
    question), reported (anything else). Whether a test showed it is :func:`reaches`'s."""
    if finding.kind == "fail":
        return LEVEL_RANK["blocking"]
    if finding.kind == "review" and finding.label == "question":
        return LEVEL_RANK["question"]
    return LEVEL_RANK["reported"]


def reaches(finding: FindingView, level: Level) -> bool:
    """Whether the finding is at ``level`` or above: ``reproduced`` is a question or more that a
    test showed (:attr:`FindingView.reproduced`); a blocking finding is one, under
    ``execution`` and ``no_oracle_rule`` alike."""
    if level == "reproduced":
        return finding.reproduced and level_of(finding) >= LEVEL_RANK["question"]
    return level_of(finding) >= LEVEL_RANK[level]


def reported_level(level: Level) -> Level:
    """The level an entry counts at in reported recall: as the case asks, a ``reproduced``
    one as a question (reported, shown or not)."""
    return "question" if level == "reproduced" else level


def verified_level(level: Level) -> Level:
    """The level an entry counts at in verified recall: as the case asks, and shown by a test
    (``reproduced``) whatever the case asks below that."""
    return "blocking" if level == "blocking" else "reproduced"


def _in_lines(finding: FindingView, lines: list[int] | None) -> bool:
    if lines is None:
        return True
    last = finding.end_line or finding.line
    return finding.line <= lines[1] and last >= lines[0]


def _place(entry: RequiredFinding | ForbiddenFinding) -> str:
    where = entry.path + (f":{entry.lines[0]}-{entry.lines[1]}" if entry.lines else "")
    return f"{where} {entry.claim!r}" if entry.claim else f"{where} (any claim)"


def _says(finding: FindingView, claim: str) -> bool:
    return states(claim, finding.title) or states(claim, finding.body)


def required_met(
    entry: RequiredFinding,
    findings: list[FindingView],
    semantic: SemanticMatch | None = None,
    level: Level | None = None,
) -> tuple[bool, str]:
    """Whether one required finding is reported at ``level`` (default: the entry's
    ``at_least``); the reason names what was missing."""
    at = level or entry.at_least
    placed = [f for f in findings if f.path == entry.path and _in_lines(f, entry.lines)]
    high = [f for f in placed if reaches(f, at)]
    for finding in high:
        if _says(finding, entry.claim):
            return True, f"{finding.id or finding.title!r} states it"
    if semantic is not None:
        notes = []
        for finding in high:
            ok, why = semantic(finding, entry.claim)
            if ok:
                return True, f"{finding.id or finding.title!r} states it (agent judge: {why})"
            notes.append(why)
        if notes:
            return False, f"the agent judge matched none: {notes[0]}"
    if not placed:
        return False, "no finding there"
    if not high:
        if at == "reproduced":
            asked = [f for f in placed if reaches(f, "question")]
            if asked:
                first = asked[0]
                return False, (
                    f"no test showed the findings there: {first.id or first.title!r} "
                    f"{first.not_shown()}"
                )
        return False, f"findings there are below {at}"
    return False, f"no finding there at {at} or above states the claim"


def _required(spec: CaseFile, view: ReportView, semantic: SemanticMatch | None) -> Verdict:
    missed = []
    for entry in spec.required_findings:
        ok, why = required_met(entry, view.findings, semantic)
        if not ok:
            missed.append(f"{_place(entry)} at least {entry.at_least}: {why}")
    if missed:
        return Verdict(judge="required_findings", status="fail", reason="; ".join(missed))
    return Verdict(
        judge="required_findings",
        status="pass",
        reason=f"{len(spec.required_findings)} of {len(spec.required_findings)} found",
    )


def _forbidden(spec: CaseFile, view: ReportView) -> Verdict:
    hits = []
    for entry in spec.forbidden_findings:
        for finding in view.findings:
            if (
                finding.path == entry.path
                and _in_lines(finding, entry.lines)
                and reaches(finding, entry.floor)
                and _says(finding, entry.claim)
            ):
                hits.append(
                    f"{finding.id or finding.title!r} is {finding.label}: forbidden "
                    f"{_place(entry)} at {entry.floor} or above"
                )
    if hits:
        return Verdict(judge="forbidden_findings", status="fail", reason="; ".join(hits))
    return Verdict(judge="forbidden_findings", status="pass", reason="none reported")


def _regressions(spec: CaseFile, view: ReportView) -> Verdict:
    listed = {r.test for r in view.regressions}
    missing = [t for t in spec.regressions if t not in listed]
    if missing:
        return Verdict(
            judge="regressions", status="fail", reason="not listed: " + ", ".join(missing)
        )
    return Verdict(judge="regressions", status="pass", reason=f"{len(spec.regressions)} listed")


def _forbidden_regressions(spec: CaseFile, view: ReportView) -> Verdict:
    listed = {r.test for r in view.regressions}
    wrong = [t for t in spec.forbidden_regressions if t in listed]
    if wrong:
        return Verdict(
            judge="forbidden_regressions",
            status="fail",
            reason="listed as regressions: " + ", ".join(wrong),
        )
    return Verdict(judge="forbidden_regressions", status="pass", reason="none listed")


def _clean(view: ReportView) -> Verdict:
    if view.exit_code != 0 or view.blocking or view.regressions:
        return Verdict(
            judge="clean",
            status="fail",
            reason=f"{view.blocking} blocking (outcome {view.outcome})",
        )
    return Verdict(judge="clean", status="pass", reason="nothing blocks")


def asserted(spec: CaseFile) -> dict[JudgeName, bool]:
    return {
        "required_findings": bool(spec.required_findings),
        "forbidden_findings": bool(spec.forbidden_findings),
        "regressions": bool(spec.regressions),
        "forbidden_regressions": bool(spec.forbidden_regressions),
        "clean": spec.clean,
    }


def unverifiable(
    exit_code: int | None, view: ReportView | None, agent: bool, executed: bool = True
) -> str | None:
    """Why a run could not review (so nothing it says is evidence of cleanliness), or None.

    ``executed``: the condition runs project commands, so a reproduction nothing ran means the
    review could not check it.
    """
    if view is None:
        return f"eyeful exited {exit_code} without a report"
    if exit_code not in (0, 1) or view.exit_code not in (0, 1) or view.outcome == "unverified":
        return f"eyeful could not verify (exit {exit_code}, outcome {view.outcome})"
    for item in view.uncertainty:
        if item.unverified:
            return f"eyeful could not verify: {item.text}"
    if executed:
        for finding in view.findings:
            if finding.never_ran:
                return f"finding {finding.id!r} was never run: {finding.unverified}"
    if agent:
        for item in view.uncertainty:
            if "not confirmed" in item.text:
                return item.text
        if not view.experts:
            return "no expert ran"
        experts = view.agents.get("expert", UsageView())
        if experts.faults >= len(view.experts):
            return f"every expert faulted ({experts.faults} faults)"
    return None


def judge(
    spec: CaseFile,
    view: ReportView | None,
    why_unverifiable: str | None,
    semantic: SemanticMatch | None = None,
) -> list[Verdict]:
    """Every judge's verdict on one run; an unverifiable run fails every judge that asserts."""
    out: list[Verdict] = []
    wanted = asserted(spec)
    for name in JUDGES:
        if not wanted[name]:
            out.append(Verdict(judge=name, status="skipped", reason="no ground truth for it"))
        elif why_unverifiable is not None or view is None:
            out.append(
                Verdict(judge=name, status="fail", reason=f"unverifiable: {why_unverifiable}")
            )
        elif name == "required_findings":
            out.append(_required(spec, view, semantic))
        elif name == "forbidden_findings":
            out.append(_forbidden(spec, view))
        elif name == "regressions":
            out.append(_regressions(spec, view))
        elif name == "forbidden_regressions":
            out.append(_forbidden_regressions(spec, view))
        else:
            out.append(_clean(view))
    return out
