"""Findings: what an expert (an LLM agent, or any tool) claims is wrong with the change.

The input contract of `git eyeful --findings FILE` (a JSON array, or JSON lines). A bad file is
one line naming the file, the finding and the field; nothing runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from eyeful.errors import EyefulError
from eyeful.inputfiles import exists, read_regular
from eyeful.model import Model
from eyeful.testids import check_test_id, check_test_path

Severity = Literal["error", "warning", "note"]
Evidence = Literal["test", "analysis", "inspection"]
OracleKind = Literal["specified", "derived", "implicit", "human"]

SEVERITY_RANK: dict[str, int] = {"error": 0, "warning": 1, "note": 2}


def confined(value: str, what: str = "path") -> str:
    """A repository-relative POSIX path that cannot leave the repository or reach into .git."""
    path = PurePosixPath(value)
    if not value.strip() or "\\" in value or "\0" in value:
        raise ValueError(f"{what} {value!r} is not a usable path")
    if path.is_absolute():
        raise ValueError(f"{what} {value!r} is absolute; give it relative to the repository root")
    if ".." in path.parts:
        raise ValueError(f"{what} {value!r} leaves the repository ('..')")
    if path.parts and path.parts[0] == ".git":
        raise ValueError(f"{what} {value!r} is inside .git")
    return str(path)


class _Strict(Model):
    # Strict types: `"line": "2"` or `true` is an error naming the field, never a 2 or a 1.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Oracle(_Strict):
    """Where the expected behaviour comes from."""

    kind: OracleKind
    quote: str | None = None
    source: str | None = None

    @field_validator("source")
    @classmethod
    def _source_inside(cls, value: str | None) -> str | None:
        return None if value is None else confined(value, "oracle.source")


def _repro_path(value: str) -> str:
    return check_test_path(confined(value, "repro.path"), "repro.path")


# A reproduction's path and test id are handed to `test_one`: data of safe characters only
# (eyeful/testids.py). The same types check a findings file and an agent's reply.
ReproPath = Annotated[str, AfterValidator(_repro_path)]
TestId = Annotated[str, AfterValidator(check_test_id)]


class Repro(_Strict):
    """A reproduction: a new test file (``code``), or an existing test run as it stands."""

    path: ReproPath
    code: str | None = None
    fails: str = Field(min_length=1)
    test: TestId | None = None

    @field_validator("path")
    @classmethod
    def _path_inside(cls, value: str) -> str:
        path = confined(value, "repro.path")
        if path == ".":
            raise ValueError(f"repro.path {value!r} names the repository root; name a test file")
        return path


class Fix(_Strict):
    diff: str = Field(min_length=1)


class Claim(_Strict):
    """What an expert claims; a :class:`Finding` adds who claims it and a suggested fix."""

    severity: Severity
    evidence: Evidence
    path: str
    line: int = Field(ge=1)
    end_line: int | None = Field(default=None, ge=1)
    title: str = Field(min_length=1)
    body: str
    cwe: str | None = None
    oracle: Oracle
    repro: Repro | None = None

    @field_validator("path")
    @classmethod
    def _path_inside(cls, value: str) -> str:
        return confined(value)

    @model_validator(mode="after")
    def _lines_in_order(self) -> Claim:
        if self.end_line is not None and self.end_line < self.line:
            raise ValueError("end_line comes before line")
        return self


class Finding(Claim):
    id: str = Field(min_length=1)
    expert: str = Field(min_length=1)
    fix: Fix | None = None


def _json(text: str) -> object:
    """``json.loads``, with nesting too deep for the parser as a JSON error rather than a crash."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


def _records(text: str, source: str) -> list[object]:
    stripped = text.strip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            data = _json(stripped)
        except json.JSONDecodeError as err:
            raise EyefulError(f"{source}: not valid JSON: {err}") from None
        if not isinstance(data, list):
            raise EyefulError(f"{source}: expected a JSON array of findings")
        return data
    out: list[object] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(_json(line))
            except json.JSONDecodeError as err:
                raise EyefulError(f"{source}: line {number} is not valid JSON: {err.msg}") from None
    return out


def parse_findings(text: str, source: str) -> list[Finding]:
    """Validate every record; the first problem is the error."""
    findings: list[Finding] = []
    for number, record in enumerate(_records(text, source), 1):
        name = f"finding #{number}"
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            name = f"finding {record['id']!r} (#{number})"
        if not isinstance(record, dict):
            raise EyefulError(f"{source}: {name}: must be a JSON object")
        try:
            findings.append(Finding.model_validate(record))
        except ValidationError as err:
            first = err.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "(finding)"
            if first["type"] == "extra_forbidden":
                message = "unknown field; see the README's Findings section"
            else:
                message = first["msg"].removeprefix("Value error, ")
            raise EyefulError(f"{source}: {name}: {field}: {message}") from None
    return findings


FINDINGS_LIMIT = 16 * 1024 * 1024
"""The largest findings file (16 MiB): far above what experts write, below what hurts."""


def load_findings(files: Iterable[Path]) -> list[Finding]:
    """Read every file; finding ids must be unique across them."""
    out: list[Finding] = []
    seen: set[str] = set()
    for path in files:
        if not exists(path):
            raise EyefulError(f"{path}: cannot read findings: No such file or directory")
        raw = read_regular(path, f"--findings {path}", limit=FINDINGS_LIMIT)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise EyefulError(f"{path}: findings must be UTF-8 JSON") from None
        for finding in parse_findings(text, str(path)):
            if finding.id in seen:
                raise EyefulError(
                    f"{path}: finding {finding.id!r}: id: used twice; ids must be unique"
                )
            seen.add(finding.id)
            out.append(finding)
    return out


NEAR_LINES = 2
"""Findings in the same file at most this many lines apart may be one problem."""


class Corroboration:
    """Which experts reported a problem near each finding, indexed once by (path, line).

    Asking is a handful of dictionary look-ups, so grading and ordering n findings is linear in n
    rather than comparing every pair.
    """

    def __init__(self, findings: Iterable[Finding]) -> None:
        self._experts: dict[tuple[str, int], set[str]] = {}
        for finding in findings:
            self._experts.setdefault((finding.path, finding.line), set()).add(finding.expert)

    def of(self, finding: Finding) -> list[str]:
        """Other experts that reported a problem in the same file within two lines."""
        out: set[str] = set()
        for line in range(finding.line - NEAR_LINES, finding.line + NEAR_LINES + 1):
            out |= self._experts.get((finding.path, line), set())
        out.discard(finding.expert)
        return sorted(out)


def corroboration(finding: Finding, findings: list[Finding]) -> list[str]:
    """Other experts that reported a problem in the same file within two lines (one finding; use
    :class:`Corroboration` for many)."""
    return Corroboration(findings).of(finding)


def verification_order(findings: list[Finding]) -> list[Finding]:
    """By severity, then by how many experts reported the same problem; input order breaks ties."""
    index = Corroboration(findings)
    indexed = list(enumerate(findings))
    indexed.sort(
        key=lambda pair: (
            SEVERITY_RANK[pair[1].severity],
            -len(index.of(pair[1])),
            pair[0],
        )
    )
    return [f for _, f in indexed]
