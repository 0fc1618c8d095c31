"""A case: a directory with `case.toml` (the repository, the change, eyeful's settings and the
ground truth the judges hold the review to), validated before anything runs.

Every mistake is one line naming the case and the key; unknown keys are refused, so a typo'd
ground-truth key fails the case instead of silently weakening its check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from eyeful.config import Config, parse_config
from eyeful.errors import EyefulError
from eyeful.findings import confined
from eyeful.tomlcompat import tomllib

CASE_FILE = "case.toml"
BUNDLE = "repo.bundle"
PATCH = "change.patch"

Level = Literal["blocking", "reproduced", "question", "reported"]
LEVEL_RANK: dict[str, int] = {"reported": 0, "question": 1, "reproduced": 2, "blocking": 3}
"""The levels a finding can reach, lowest first. ``reproduced`` is a question (or more) whose
reproduction passed the gates that show a problem (runs, not_flaky, fails_as_claimed,
introduced), whatever its oracle made of it: shown by a test. Under ``execution`` a blocking
finding always is."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _lines_ok(value: list[int] | None) -> list[int] | None:
    if value is None:
        return None
    if len(value) != 2 or value[0] < 1 or value[1] < value[0]:
        raise ValueError("must be [first, last] with 1 <= first <= last")
    return value


class _Place(_Strict):
    path: StrictStr
    claim: StrictStr
    lines: list[StrictInt] | None = None

    @field_validator("path")
    @classmethod
    def _path_inside(cls, value: str) -> str:
        return confined(value)

    @field_validator("lines")
    @classmethod
    def _range(cls, value: list[int] | None) -> list[int] | None:
        return _lines_ok(value)


class RequiredFinding(_Place):
    """A finding the review must report: on ``path`` (within ``lines``), stating ``claim``, at
    ``at_least`` this level. An empty claim accepts any finding there. ``at_least =
    "reproduced"``: a test must show it (its reproduction passed the gates)."""

    at_least: Level


class ForbiddenFinding(_Place):
    """No finding on ``path`` stating ``claim`` may reach ``floor`` (default blocking): a
    question about the bait stays legal. An empty claim forbids anything on the path;
    ``floor = "reproduced"`` forbids a test showing it."""

    floor: Level = "blocking"


class CaseFile(_Strict):
    """What `case.toml` holds."""

    description: StrictStr = ""
    repository: StrictStr = BUNDLE
    base: StrictStr
    change: StrictStr | None = None
    patch: StrictStr | None = None
    findings: list[StrictStr] = Field(default_factory=list)
    eyeful: dict[str, Any] | None = None
    required_findings: list[RequiredFinding] = Field(default_factory=list)
    forbidden_findings: list[ForbiddenFinding] = Field(default_factory=list)
    regressions: list[StrictStr] = Field(default_factory=list)
    forbidden_regressions: list[StrictStr] = Field(default_factory=list)
    clean: StrictBool = False

    @field_validator("base", "change", "repository", "patch")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("is empty")
        return value

    @field_validator("regressions", "forbidden_regressions")
    @classmethod
    def _test_ids(cls, value: list[str]) -> list[str]:
        if any(not v.strip() for v in value):
            raise ValueError("holds an empty test id")
        return value

    @model_validator(mode="after")
    def _one_change(self) -> CaseFile:
        if self.change is not None and self.patch is not None:
            raise ValueError(
                "change, patch: give `change` (a commit) or `patch` (a file), not both"
            )
        return self

    @property
    def asserts(self) -> bool:
        return bool(
            self.required_findings
            or self.forbidden_findings
            or self.regressions
            or self.forbidden_regressions
            or self.clean
        )


class Case(BaseModel):
    """A validated case, with its files resolved."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    directory: Path
    spec: CaseFile
    repository: Path
    patch: Path | None
    findings: list[Path]
    config: Config | None
    """The case's own eyeful settings; None means the repository's (read from the change)."""


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(case)"


def _inside_case(directory: Path, rel: str, key: str, name: str) -> Path:
    path = Path(rel)
    target = path if path.is_absolute() else (directory / path).resolve()
    if not target.exists():
        raise EyefulError(f"{name}: {key}: {rel!r} does not exist (relative to {directory})")
    return target


def load_case(directory: Path) -> Case:
    """Read and validate one case directory; EyefulError (one line, naming case and key)."""
    name = directory.name
    path = directory / CASE_FILE
    try:
        with path.open("rb") as handle:
            raw: dict[str, Any] = tomllib.load(handle)
    except FileNotFoundError:
        raise EyefulError(f"{name}: no {CASE_FILE} in {directory}") from None
    except tomllib.TOMLDecodeError as err:
        raise EyefulError(f"{name}: {CASE_FILE} is not valid TOML: {err}") from None
    except OSError as err:
        raise EyefulError(f"{name}: cannot read {CASE_FILE}: {err.strerror}") from None
    try:
        spec = CaseFile.model_validate(raw)
    except ValidationError as err:
        errors = err.errors()
        # A typo'd key is the likeliest cause of the other errors (a missing key): name it first.
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        key = _where(first["loc"])
        if first["type"] == "extra_forbidden":
            raise EyefulError(
                f"{name}: unknown key {key!r}; the keys are listed in the README's `eyeful eval`"
            ) from None
        message = first["msg"].removeprefix("Value error, ")
        if not first["loc"]:
            raise EyefulError(f"{name}: {message}") from None
        raise EyefulError(f"{name}: {key}: {message}") from None
    config = None
    if spec.eyeful is not None:
        config = parse_config(spec.eyeful, f"{name}: eyeful")
    repository = _inside_case(directory, spec.repository, "repository", name)
    patch = None
    if spec.patch is not None:
        patch = _inside_case(directory, spec.patch, "patch", name)
    elif spec.change is None:
        if not (directory / PATCH).is_file():
            raise EyefulError(
                f"{name}: change: give `change` (a commit) or `patch`, or put a {PATCH} in the case"
            )
        patch = directory / PATCH
    findings = [
        _inside_case(directory, rel, f"findings.{i}", name) for i, rel in enumerate(spec.findings)
    ]
    return Case(
        name=name,
        directory=directory.resolve(),
        spec=spec,
        repository=repository,
        patch=patch,
        findings=findings,
        config=config,
    )


def find_cases(paths: list[Path]) -> list[Path]:
    """Case directories: each path is a case, or a directory of cases (searched one level)."""
    out: list[Path] = []
    for path in paths:
        if (path / CASE_FILE).is_file():
            out.append(path)
        elif path.is_dir():
            found = sorted(p for p in path.iterdir() if (p / CASE_FILE).is_file())
            if not found:
                raise EyefulError(f"{path}: no {CASE_FILE} in it or in its subdirectories")
            out += found
        else:
            raise EyefulError(f"{path}: not a case directory (no {CASE_FILE})")
    names = [p.name for p in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise EyefulError(f"two cases are named {twice[0]!r}: case names must be unique")
    return out


def load_cases(paths: list[Path]) -> tuple[list[Case], list[str]]:
    """Every case, and one error line per case that does not validate."""
    cases: list[Case] = []
    errors: list[str] = []
    for directory in find_cases(paths):
        try:
            cases.append(load_case(directory))
        except EyefulError as err:
            errors.append(str(err))
    return cases, errors
