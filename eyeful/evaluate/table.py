"""The eval's output: one row per case x condition, the reasons of every failed judge, and the
totals per condition (every rate with the number of cases it is over). Recall is given twice:
reported (a finding there, at the level the case asks) and verified (and shown by a test)."""

from __future__ import annotations

from eyeful.evaluate.judges import JUDGES
from eyeful.evaluate.runner import CaseResult, EvalResult, Totals

_SHORT = {
    "required_findings": "required",
    "forbidden_findings": "forbidden",
    "regressions": "regressions",
    "forbidden_regressions": "forbidden regr.",
    "clean": "clean",
}
_MARK = {"pass": "pass", "fail": "FAIL", "skipped": "-"}


def _row(result: CaseResult) -> str:
    marks = {v.judge: _MARK[v.status] for v in result.judges}
    cells = [
        result.case,
        result.condition,
        result.status.upper() if result.status != "pass" else "pass",
    ]
    cells += [marks.get(name, "-") for name in JUDGES]
    cells += [
        f"{result.blocking}/{result.questions}/{result.other}",
        str(result.reproduced),
        str(result.regressions),
        f"{result.seconds:.1f}s",
        f"{result.tokens:,}",
    ]
    return "| " + " | ".join(cells) + " |"


def _rate(value: float | None, numerator: int, denominator: int, unit: str) -> str:
    if value is None:
        return f"- (no {unit})"
    return f"{value:.2f} ({numerator}/{denominator})"


def _total_row(total: Totals) -> str:
    cells = [
        total.condition,
        str(total.cases),
        str(total.passed),
        str(total.failed),
        str(total.unverifiable),
        _rate(total.recall, total.required_met, total.required_total, "case asserts it")
        + f", {total.recall_cases} cases",
        _rate(
            total.verified_recall, total.required_verified, total.required_total, "case asserts it"
        ),
        _rate(
            total.false_blocking, total.false_blocked, total.false_blocking_cases, "case asserts it"
        )
        + f", {total.false_blocking_cases} cases",
        _rate(total.question_rate, total.questions, total.findings, "findings"),
        f"{total.seconds:.1f}s",
        f"{total.tokens:,} ({total.calls} calls)",
    ]
    return "| " + " | ".join(cells) + " |"


def to_markdown(result: EvalResult) -> str:
    head = [
        "case",
        "condition",
        "result",
        *(_SHORT[n] for n in JUDGES),
        "findings B/Q/R",
        "shown",
        "regr.",
        "time",
        "tokens",
    ]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += [_row(r) for r in result.results]
    reasons = [
        f"- {r.case} ({r.condition}) {v.judge}: {v.reason}"
        for r in result.results
        for v in r.judges
        if v.status == "fail"
    ]
    if reasons:
        out += ["", "Failed judges:", "", *reasons]
    out += [
        "",
        "| condition | cases | pass | fail | unverifiable | reported recall | verified recall "
        "| false-blocking | question rate | time | tokens |",
        "|" + "---|" * 11,
        *(_total_row(t) for t in result.totals),
    ]
    out += [
        "",
        "Reported recall: required findings reported at the level the case asks; verified "
        "recall: those a test showed (runs, not_flaky, fails_as_claimed and introduced passed). "
        "shown: findings a test showed.",
    ]
    if result.interrupted:
        out += ["", "Interrupted: the table holds the runs that finished."]
    return "\n".join(out) + "\n"


def to_json(result: EvalResult) -> str:
    return result.model_dump_json(indent=2) + "\n"
