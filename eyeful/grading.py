"""How far a finding can be trusted: its oracle graded, then its kind and label.

Only a reproduction that failed on the change and not on the base, by an oracle that is not the
agent's own reading (``specified`` with a quote eyeful found, ``derived`` from a test already in
the repository, ``implicit`` with a failure from the runtime) makes a ``fail`` result: an
``issue (blocking)``. Everything else is ``review`` (a question) or, once a judge disputes it,
``open``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field

from eyeful.evidence import looked_words
from eyeful.findings import Evidence, Finding, Fix, OracleKind, Repro, Severity
from eyeful.gates import Gate, Verdict
from eyeful.implicit import not_runtime
from eyeful.model import Model
from eyeful.runs import Run

Kind = Literal["fail", "review", "open"]
Label = Literal["issue (blocking)", "question", "note (pre-existing)", "note"]

# Documentation is decided by an allow-list: anything else (code, config, build files, notebooks,
# templates) may hold comments, but a comment is not a specification.
_DOC_SUFFIXES = {
    ".md", ".markdown", ".mdown", ".mkd", ".rst", ".rest", ".adoc", ".asciidoc", ".asc", ".txt",
    ".text", ".man", ".pod",
}  # fmt: skip
_MAN_PAGE = re.compile(r".+\.[1-9][a-z]{0,3}")  # ls.1, printf.3p, git-eyeful.1
_DOC_NAMES = {
    "README", "CHANGELOG", "CHANGES", "NEWS", "HISTORY", "AUTHORS", "CONTRIBUTORS", "CONTRIBUTING",
    "RELEASE", "RELEASES", "RELEASE_NOTES", "RELEASE-NOTES", "UPGRADING", "MIGRATING", "SECURITY",
    "NOTICE", "THANKS", "INSTALL", "USAGE", "FAQ", "COPYING", "LICENSE", "LICENCE",
}  # fmt: skip
# Plain-text files that are build input, not prose.
_NOT_DOC = re.compile(r"(?:CMakeLists|requirements.*|constraints.*|robots|.*\.lock)\.txt",
                      re.IGNORECASE)  # fmt: skip


def is_documentation(path: str) -> bool:
    """Whether a file is documentation: Markdown, reST, AsciiDoc, plain text, a man page, or a
    README/CHANGELOG/NEWS/HISTORY/AUTHORS-style name (with no suffix or a documentation one)."""
    name = PurePosixPath(path).name
    suffix = PurePosixPath(name).suffix.lower()
    stem = name.split(".", 1)[0].upper()
    if _NOT_DOC.fullmatch(name):
        return False
    if suffix in _DOC_SUFFIXES:
        return True
    if stem in _DOC_NAMES and (suffix == "" or suffix in _DOC_SUFFIXES):
        return True
    return bool(_MAN_PAGE.fullmatch(name))


_FAIL_ORACLES = {"specified", "derived", "implicit"}


class GradedOracle(Model):
    declared: OracleKind
    graded: OracleKind
    quote: str | None = None
    source: str | None = None
    existing_test: bool = False
    note: str = ""

    @property
    def blocks(self) -> bool:
        """Whether this oracle, on a reproduced failure, may block."""
        if self.graded == "derived":
            return self.existing_test
        return self.graded in _FAIL_ORACLES


class ReportedFinding(Model):
    """A finding as the report, the JSON output and SARIF carry it."""

    id: str
    expert: str
    severity: Severity
    evidence: Evidence
    path: str
    line: int
    end_line: int | None = None
    title: str
    body: str
    cwe: str | None = None
    kind: Kind
    label: Label
    oracle: GradedOracle
    gates: list[Gate] = Field(default_factory=list)
    runs: list[Run] = Field(default_factory=list)
    repro: Repro | None = None
    fix: Fix | None = None
    fix_verified: bool = False
    fix_note: str | None = None
    baseline_state: Literal["new", "unchanged"] | None = None
    corroborated_by: list[str] = Field(default_factory=list)
    unverified: str | None = Field(
        default=None, description="why the finding could not be verified, when it could not"
    )
    objection: str | None = Field(default=None, description="the judge's reason for rejecting it")
    judge: str | None = Field(default=None, description="the judge's reason for confirming it")
    merged: list[str] = Field(
        default_factory=list, description="ids of findings judged the same problem, folded in"
    )
    corrected: bool = Field(
        default=False, description="the reproduction was rewritten once after failing wrongly"
    )
    rerun: str | None = Field(
        default=None, description="the command that runs the reproduction locally (test_one)"
    )

    @property
    def blocking(self) -> bool:
        return self.kind == "fail"


def _norm(text: str) -> str:
    return " ".join(text.replace("`", "").split()).casefold()


def grade_specified(
    quote: str | None,
    source: str | None,
    read_file: Callable[[str], str | None],
    description: str,
) -> tuple[bool, str]:
    """Whether a quote holds up: at least three words of letters or digits once normalised (no
    backticks: a quote of punctuation alone is found anywhere), found in documentation or the
    description."""
    words = [w for w in _norm(quote or "").split() if any(c.isalnum() for c in w)]
    if not quote or len(words) < 3:
        return False, "the quote is shorter than three words"
    if source is not None:
        if not is_documentation(source):
            return False, (
                f"{source} is not documentation (Markdown, reST, AsciiDoc, plain text, "
                "a man page, a README-style file): a comment is not a specification"
            )
        text = read_file(source)
        if text is None:
            return False, f"{source} is not in the change"
        if _norm(quote) not in _norm(text):
            return False, f"the quote is not in {source}"
        return True, f"quoted from {source}"
    if _norm(quote) in _norm(description):
        return True, "quoted from the change's description"
    return False, "the quote is not in the description or the commit messages"


def grade_oracle(
    finding: Finding,
    verdict: Verdict | None,
    read_file: Callable[[str], str | None],
    description: str,
    test_file: str | None,
) -> GradedOracle:
    oracle = finding.oracle
    existing = finding.repro is not None and finding.repro.code is None
    graded: OracleKind = oracle.kind
    note = ""
    if oracle.kind == "specified":
        ok, note = grade_specified(oracle.quote, oracle.source, read_file, description)
        graded = "specified" if ok else "human"
    elif oracle.kind == "implicit":
        # Graded on the failure that happened, never on the claimed text (see eyeful.failures).
        failure = verdict.failure if verdict is not None else None
        path = finding.repro.path if finding.repro else ""
        why = not_runtime(failure, path, lambda p: read_file(p) is not None, test_file)
        if why is None and verdict is not None and verdict.raised_by_change:
            why = (
                "it was raised at a line the change wrote, which may be what the change means "
                "to do (a validation, say): a question for a person"
            )
        if why is None and verdict is not None and verdict.through_change is False:
            why = (
                "its traceback passes through no function the change touched: the change's "
                "code may only have chosen the input that code it left alone cannot take"
            )
        if why is None and failure is not None:
            graded, note = "implicit", f"a failure from the runtime ({failure.kind}"
            note += f", raised in {failure.raised_in})" if failure.raised_in else ")"
        else:
            graded, note = "human", why or "no failure was recorded"
    elif oracle.kind == "derived":
        if existing:
            note = "a test already in the repository"
        elif verdict is not None and verdict.base_passed:
            note = "a new test that passes on the base"
        else:
            graded, note = "human", "a new test is derived only when it passes on the base"
    else:
        note = "only the expert's reading of the code"
    return GradedOracle(
        declared=oracle.kind,
        graded=graded,
        quote=oracle.quote,
        source=oracle.source,
        existing_test=existing,
        note=note,
    )


def _unverified_reason(finding: Finding, verdict: Verdict | None) -> str | None:
    if finding.severity == "note":
        return "note findings are not verified"
    if finding.evidence != "test":
        return f"evidence is {finding.evidence}: no test can show it"
    if finding.repro is None:
        return "no reproduction test was given"
    if verdict is None:
        return "it was not run"
    if verdict.refused:
        return f"refused: {verdict.refused}"
    for gate in verdict.gates[:3]:
        if gate.status == "fail":
            return f"{gate.name}: {gate.detail}"
    introduced = verdict.gate("introduced")
    if introduced.status == "fail" and not verdict.pre_existing:
        return f"introduced: {introduced.detail}"
    if verdict.read_as_text and not verdict.pre_existing:
        did = "; ".join(
            looked_words(path, verdict.looked.get(path)) for path in verdict.read_as_text
        )
        if any((how or "").startswith("set a tracer") for how in verdict.looked.values()):
            return (
                f"its test {did}: eyeful cannot tell whether its failure is about what this "
                "change's code does or about the source's text or form"
            )
        return (
            f"its test {did}: a failure about the source's text or form is not a problem of "
            "what this change's code does"
        )
    if verdict.ran_change is False and not verdict.pre_existing:
        return (
            "its test ran none of the lines the change touched, so its failure is not a "
            "problem of this change's code"
        )
    return None


def grade(
    finding: Finding,
    verdict: Verdict | None,
    *,
    read_file: Callable[[str], str | None],
    description: str,
    test_file: str | None,
    corroborated_by: list[str],
    why_not_run: str | None = None,
) -> ReportedFinding:
    """Combine the verdict and the oracle into kind, label and baseline state."""
    oracle = grade_oracle(finding, verdict, read_file, description, test_file)
    unverified = why_not_run or _unverified_reason(finding, verdict)
    kind: Kind = "review"
    label: Label = "question"
    baseline: Literal["new", "unchanged"] | None = None
    if finding.severity == "note":
        label = "note"
    elif verdict is not None and verdict.pre_existing:
        label, baseline = "note (pre-existing)", "unchanged"
    elif verdict is not None and verdict.reproduced and unverified is None:
        baseline = "new"
        if oracle.blocks:  # the eval's no_oracle_rule ablation is the eval's (evaluate/runner)
            kind, label = "fail", "issue (blocking)"
    return ReportedFinding(
        id=finding.id,
        expert=finding.expert,
        severity=finding.severity,
        evidence=finding.evidence,
        path=finding.path,
        line=finding.line,
        end_line=finding.end_line,
        title=finding.title,
        body=finding.body,
        cwe=finding.cwe,
        kind=kind,
        label=label,
        oracle=oracle,
        gates=verdict.gates if verdict else [],
        runs=verdict.runs if verdict else [],
        repro=finding.repro,
        fix=finding.fix,
        fix_verified=bool(verdict and verdict.fix_verified),
        fix_note=verdict.fix_note if verdict else None,
        baseline_state=baseline,
        corroborated_by=corroborated_by,
        unverified=unverified,
    )
