"""A graded finding in the markdown: what its test did (a test that passed is not a "failing
test"), the gates, its fix and the tests still failing with it, the findings near it.

Untrusted text (titles, bodies, quotes, paths, code) reaches the markdown only through
eyeful.mdsafe (``line``, ``code``, ``block``, ``fence``), as in eyeful/report.py.

A reproduction's code and a fix's diff are shown in full when they show something: the code of a
test that failed as claimed, a verified fix. A test that did not reproduce (it passed, ended
differently, failed otherwise) and a fix that did not hold are named with what happened; their
text is in the JSON report. A test already shown above is named, not repeated.
"""

from __future__ import annotations

from collections import Counter

from eyeful import mdsafe as md
from eyeful.findings import NEAR_LINES
from eyeful.grading import ReportedFinding
from eyeful.runs import Run

_GATE_MARK = {"pass": "pass", "fail": "FAIL", "not_reached": "not reached"}
_ORDER = {"change": 0, "base": 1, "fix": 2}
_SHOWN_IDS = 5  # tests named in a line; the rest counted
IN_JSON = "in the JSON report (`--format json`)"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def named(tests: list[str]) -> str:
    """Test ids as code spans, the first few, the rest counted."""
    shown = ", ".join(md.code(t) for t in tests[:_SHOWN_IDS])
    rest = len(tests) - _SHOWN_IDS
    return shown + (f" and {rest} more" if rest > 0 else "")


def _with_fix(run: Run, verified: bool) -> str:
    """The tests a suite run with the fix left failing, when it failed and named them."""
    failing = sorted(run.failing)
    if run.status != "FAILED" or not failing:
        return ""
    if verified:  # pass_to_pass held: each of them failed on the change without the fix too
        return f" (still failing, as on the change without it: {named(failing)})"
    return f" (failing with it: {named(failing)})"


def runs_summary(finding: ReportedFinding) -> str:
    groups: dict[tuple[str, str], list[Run]] = {}
    for run in finding.runs:
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
        left = _with_fix(group[-1], finding.fix_verified) if (side, name) == ("fix", "test") else ""
        parts.append(f"{what} {where}{times}: {'/'.join(statuses)}{left}")
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


def _near(finding: ReportedFinding, others: list[ReportedFinding]) -> str:
    """Who else reported what: merged findings are one problem (also reported by); findings
    that merely lie near it are named as such, never as agreeing."""
    if finding.merged and finding.corroborated_by:
        return " · also reported by " + ", ".join(md.line(c) for c in finding.corroborated_by)
    near = [
        o for o in others
        if o.id != finding.id and o.path == finding.path
        and abs(o.line - finding.line) <= NEAR_LINES
    ]  # fmt: skip
    if not near:
        return ""
    named_ = [
        f"{md.code(o.id)} ({md.line(o.expert)}, "
        + ("same line)" if o.line == finding.line else f"line {o.line})")
        for o in near
    ]
    return f" · {'another finding' if len(near) == 1 else 'other findings'} near it, not " \
           f"merged with it: {', '.join(named_)}"  # fmt: skip


def _change_runs(finding: ReportedFinding) -> list[Run]:
    return [r for r in finding.runs if r.side == "change" and r.name == "test_one"]


def _reproduced(finding: ReportedFinding) -> bool:
    """Its test failed as claimed (a blocking finding's always did)."""
    return finding.kind == "fail" or any(
        g.name == "fails_as_claimed" and g.status == "pass" for g in finding.gates
    )


def repro_said(finding: ReportedFinding, name: str) -> str:
    """What the reproduction's test did, in words: failing as claimed, or what happened."""
    assert finding.repro is not None
    fails = f"“{md.line(finding.repro.fails)}”"
    test = md.code(name)
    runs = _change_runs(finding)
    if _reproduced(finding) or (not finding.gates and not runs):
        head = "Failing test" if _reproduced(finding) else "Test"
        claim = "fails with" if _reproduced(finding) else "claimed to fail with"
        return f"{head} {test} ({claim} {fails})"
    statuses = Counter(r.status for r in runs)
    n = len(runs)
    if statuses["PASSED"] == n:
        return f"Test {test}, claimed to fail with {fails}, passed on the change ({n} of {n} runs)"
    if statuses["FAILED"] == n:
        return f"Test {test} fails on the change, but not with the claimed {fails}"
    if statuses["FAILED"] and statuses["PASSED"]:
        return (
            f"Test {test}, claimed to fail with {fails}, ended differently on the change "
            f"(failed in {statuses['FAILED']} of {n} runs)"
        )
    return f"Test {test}, claimed to fail with {fails}, could not run on the change"


def _said_by_its_test(finding: ReportedFinding) -> bool:
    """Whether the reproduction's line says why it is not verified: its test ran on the change
    and did not fail as claimed (a gate before ``introduced`` failed)."""
    early = ("runs", "not_flaky", "fails_as_claimed")
    return (
        finding.repro is not None
        and bool(_change_runs(finding))
        and not _reproduced(finding)
        and any(g.name in early and g.status == "fail" for g in finding.gates)
    )


def _fix_gate_detail(finding: ReportedFinding) -> str | None:
    for gate in finding.gates:
        if gate.name in ("fail_to_pass", "pass_to_pass") and gate.status == "fail":
            return gate.detail
    return None


def _repro_lines(finding: ReportedFinding, seen: dict[tuple[str, str], str]) -> list[str]:
    repro = finding.repro
    if repro is None:
        return []
    out: list[str] = []
    place = f"{finding.path}:{finding.line}"
    if repro.code is None:
        out.append(f"  Reproduction: {repro_said(finding, repro.test or repro.path)}.")
        return out + ([f"  Rerun: {md.code(finding.rerun)}"] if finding.rerun else [])
    said = repro_said(finding, repro.path)
    earlier = seen.get((repro.path, repro.code))
    if earlier is not None:
        return [f"  {said}: the same test as for {md.code(earlier)} above."]
    if not _reproduced(finding) and finding.gates:
        return [f"  Not verified: {said}; its code is {IN_JSON}."]
    seen[(repro.path, repro.code)] = place
    rerun = f"; rerun: save it as that file, then {md.code(finding.rerun)}" if (
        finding.rerun
    ) else ""  # fmt: skip
    out.append(f"  {said}{rerun}:")
    return out + md.fence(repro.code, "python" if repro.path.endswith(".py") else "text")


def _fix_lines(finding: ReportedFinding) -> list[str]:
    if finding.fix is None:
        return []
    if finding.fix_verified:
        return ["  Suggested fix (verified):", *md.fence(finding.fix.diff, "diff")]
    why = finding.fix_note or _fix_gate_detail(finding)
    note = f": {md.line(why)}" if why else ""
    return [f"  Suggested fix (not verified{note}); its diff is {IN_JSON}."]


def finding_item(
    finding: ReportedFinding,
    others: list[ReportedFinding],
    seen: dict[tuple[str, str], str],
) -> list[str]:
    """The finding as a list item. ``others``: every finding of the report (for the ones near
    it); ``seen``: the reproductions shown so far (path and code -> the finding's place), which
    this one's joins when it is shown."""
    place = f"{finding.path}:{finding.line}"
    if finding.end_line and finding.end_line != finding.line:
        place += f"-{finding.end_line}"
    out = [f"- **{finding.label}:** {md.code(place)} {md.line(finding.title)}"]
    out += md.block(finding.body)
    meta = f"{md.line(finding.expert)} · {finding.severity} · evidence: {finding.evidence}"
    meta += _near(finding, others)
    out.append(f"  _{meta} · {_oracle_line(finding)}_")
    checked = []  # one line: markdown joins a list item's lines into one paragraph anyway
    if finding.gates and any(g.status != "not_reached" for g in finding.gates):
        marks = ", ".join(f"{g.name} {_GATE_MARK[g.status]}" for g in finding.gates)
        checked.append(f"Gates: {marks}.")
    if finding.runs:
        checked.append(f"Ran: {runs_summary(finding)}.")
    if checked:
        out.append("  " + " ".join(checked))
    if finding.unverified and not _said_by_its_test(finding):
        out.append(f"  Not verified: {md.line(finding.unverified)}.")
    if finding.merged:
        out.append(f"  One problem with: {', '.join(md.code(m) for m in finding.merged)}.")
    if finding.corrected:
        out.append("  The reproduction was corrected once after failing without its fails text.")
    if finding.judge:
        out.append(f"  The judge confirmed it: {md.line(finding.judge)}")
    if finding.objection:
        out.append(f"  Objection: {md.line(finding.objection)}")
    return out + _repro_lines(finding, seen) + _fix_lines(finding)
