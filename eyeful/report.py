"""The review's result as a documented JSON object, and the markdown feedback block made from it.

Exit code: 1 when anything blocks, otherwise 3 when something could not be verified, otherwise 0.
A blocking issue is only ever a test that failed on the change and not on the base.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from eyeful import __version__
from eyeful.errors import EXIT_BLOCKING, EXIT_OK, EXIT_UNVERIFIED
from eyeful.regressions import SUITE, TestFailure
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
    findings: list[dict[str, Any]] = Field(default_factory=list)
    uncertainty: list[Uncertainty] = Field(default_factory=list)

    def note(self, text: str, *, unverified: bool) -> None:
        self.uncertainty.append(Uncertainty(text=text, unverified=unverified))

    def finish(self, *, nothing_to_review: bool = False) -> Report:
        """Count and set outcome and exit code from the content."""
        self.blocking = len(self.regressions)
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


def _fence(text: str) -> list[str]:
    fence = "```"
    while fence in text:
        fence += "`"
    return [f"  {fence}text", *[f"  {line}" for line in text.splitlines()], f"  {fence}"]


def _run_line(run: Run) -> str:
    where = f"{run.name} on the {run.side}"
    how = "cached" if run.cached else f"{run.duration:.1f}s"
    extra = f", {run.reason}" if run.reason else ""
    return f"{where}: {run.status} ({how}{extra})"


def _failure_item(failure: TestFailure) -> list[str]:
    if failure.test == SUITE:
        head = "**issue (blocking):** the test suite fails on the change and passes on the base"
    else:
        head = f"**issue (blocking):** `{failure.test}` fails on the change and passes on the base"
    return [
        f"- {head}",
        "  _regression; oracle: derived (a test already in the repository)_",
        *_fence(failure.excerpt),
    ]


_KIND_TEXT = {
    "pre_existing": "fails on the base too (pre-existing)",
    "new_test": "is new in the change and fails (not on the base, so not a regression)",
    "undetermined": "fails on the change; the base could not tell whether it passed there",
}


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
    out.append("### Blocking issues")
    out.append("")
    if report.regressions:
        for failure in report.regressions:
            out += _failure_item(failure)
    else:
        out.append("None.")
    out.append("")
    if report.other_failures:
        out += ["### Not blocking", ""]
        for failure in report.other_failures:
            name = "the test suite" if failure.test == SUITE else f"`{failure.test}`"
            out.append(f"- {name} {_KIND_TEXT.get(failure.kind, failure.kind)}")
        out.append("")
    out += ["### Questions", "", "None." if not report.questions else "", ""]
    out += [
        f"<details><summary>Disputed ({report.disputed})</summary>",
        "",
        "None." if not report.disputed else "",
        "",
        "</details>",
        "",
        "### Uncertainty",
        "",
    ]
    if report.uncertainty:
        out += [f"- [ ] {u.text}" for u in report.uncertainty]
    else:
        out.append("- [x] Everything eyeful set out to check was checked.")
    return "\n".join(line for line in out if line is not None).rstrip() + "\n"
