"""Regressions of one cause as one blocking item in the markdown (the JSON keeps every test).

One cause (each regression's ``cause``, eyeful.failures.report_cause): the same exception type
after running the same lines of the change (traced in the test's first run alone on the change),
else the same type and message once numbers and addresses are set aside, wherever raised. A
regression whose failure said neither type nor message (read from text without them) goes with
the others of its file whose failure ends with the same line. One item says what fails, shows
one excerpt (the failing frames), counts the tests and folds their ids in ``<details>``, one
line per file (the first :data:`ID_FILES` files).

Untrusted text reaches the markdown only through eyeful.mdsafe, as in eyeful/report.py.
"""

from __future__ import annotations

import re

from eyeful import mdsafe as md
from eyeful.evidence import EXCERPT_LINES
from eyeful.failures import ran_lines
from eyeful.findingtext import named
from eyeful.regressions import SUITE, TestFailure
from eyeful.testids import id_path


def failure_message(failure: TestFailure) -> str:
    """What a failure says, one line: its message, else the last line of its excerpt."""
    if failure.message.strip():
        return md.line(failure.message)
    lines = [line for line in failure.excerpt.splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def _key(failure: TestFailure) -> tuple[str, ...]:
    if failure.test == SUITE:
        return ("suite",)
    if failure.cause:
        return ("cause", failure.kind, failure.cause)
    said = failure_message(failure)
    if not said:
        return ("test", failure.test)
    return ("said", failure.kind, failure.test.split("::", 1)[0], said)


def by_cause(failures: list[TestFailure]) -> list[list[TestFailure]]:
    """The failures in groups of one cause, first seen first."""
    groups: dict[tuple[str, ...], list[TestFailure]] = {}
    for failure in failures:
        groups.setdefault(_key(failure), []).append(failure)
    return list(groups.values())


def _rerun_line(command: str | None, what: str = "Rerun") -> list[str]:
    return [f"  {what}: {md.code(command)}"] if command else []


def _one(failure: TestFailure) -> list[str]:
    name = "the test suite" if failure.test == SUITE else md.code(failure.test)
    if failure.kind == "new_test":
        head = f"**issue (blocking):** {name} is new in the change and fails"
        meta = "  _new failing test; blocking because `block_new_failures = true`_"
    else:
        head = f"**issue (blocking):** {name} fails on the change and passes on the base"
        meta = "  _regression; oracle: derived (a test already in the repository)_"
    confirmed = [f"  Confirmed: {md.line(failure.confirmation)}."] if failure.confirmation else []
    return [f"- {head}", meta, *confirmed, *_rerun_line(failure.rerun), *_excerpt(failure)]


def _natural(name: str) -> list[str | int]:
    """``test_v[2]`` before ``test_v[10]``: digits compared as numbers."""
    return [int(part) if i % 2 else part for i, part in enumerate(re.split(r"(\d+)", name))]


ID_FILES = 10
"""Files whose failing tests a cause's item names, a line each; past them, a count."""


def _ids_by_file(group: list[TestFailure]) -> list[str]:
    """The tests' ids, one line per file, in natural order, the first :data:`ID_FILES` files."""
    files: dict[str, list[str]] = {}
    for failure in sorted(group, key=lambda f: _natural(f.test)):
        path = id_path(failure.test) if "::" in failure.test else ""
        files.setdefault(path, []).append(failure.test[len(path) + 2 :] if path else failure.test)
    shown = list(files.items())[:ID_FILES]
    out = [
        f"  {md.code(path)}: " + ", ".join(md.code(n) for n in names) if path
        else "  " + ", ".join(md.code(n) for n in names)
        for path, names in shown
    ]  # fmt: skip
    if len(files) > len(shown):
        left = sum(len(names) for _, names in list(files.items())[ID_FILES:])
        out.append(f"  and {left} more in {len(files) - len(shown)} more files (every test is "
                   "in the JSON report)")  # fmt: skip
    return out


def _confirmed(group: list[TestFailure]) -> list[str]:
    said = [f.confirmation for f in group if f.confirmation]
    if not said:
        return []
    if len(said) == len(group) and len(set(said)) == 1:
        return [f"  Confirmed, each: {md.line(said[0])}."]
    first = next(f for f in group if f.confirmation)
    return [f"  Confirmed, {md.code(first.test)}: {md.line(said[0])} (each test's: in the JSON)."]


def _many(group: list[TestFailure]) -> list[str]:
    first = group[0]
    what = "are new in the change and fail" if first.kind == "new_test" else (
        "fail on the change and pass on the base"
    )  # fmt: skip
    after = _after(first)
    said = after or _said_where(first)
    places = len({f.raised_at for f in group if f.raised_at})
    if said and not after and places > 1:  # one message raised from several frames
        said += f" and {places - 1} other line{'s' if places > 2 else ''}"
    cause = f", one cause: {said}" if said else ""
    head = f"- **issue (blocking):** {len(group)} tests {what}{cause}"
    meta = (
        "  _new failing tests; blocking because `block_new_failures = true`_"
        if first.kind == "new_test"
        else "  _regressions; oracle: derived (tests already in the repository)_"
    )
    rerun = _rerun_line(first.rerun, f"Rerun {md.code(first.test)}")
    out = [head, meta, *_confirmed(group), *rerun]
    out += _excerpt(first)
    return [
        *out,
        f"  <details><summary>The {len(group)} failing tests ({named([first.test])} shown)"
        "</summary>",
        "",
        *_ids_by_file(group),
        "",
        "  </details>",
    ]


FULL_CAUSES = 5
"""Causes shown in full (excerpt, rerun, confirmation); the rest one line each, folded."""


def regression_items(failures: list[TestFailure]) -> list[str]:
    """The first :data:`FULL_CAUSES` causes as one blocking item each; any others as one item
    that names each in a line under ``<details>``."""
    groups = by_cause(failures)
    out: list[str] = []
    for group in groups[:FULL_CAUSES]:
        out += _one(group[0]) if len(group) == 1 else _many(group)
    rest = groups[FULL_CAUSES:]
    if rest:
        out += _folded(rest)
    return out


def _folded(groups: list[list[TestFailure]]) -> list[str]:
    tests = sum(len(group) for group in groups)
    new = any(group[0].kind == "new_test" for group in groups)
    head = (
        f"- **issue (blocking):** {len(groups)} more causes ({tests} tests) fail on the change "
        "and pass on the base"
        + (" (or are new and fail, where `block_new_failures` says so)" if new else "")
    )
    lines = [head, "  <details><summary>One line each: the test, what it failed with, where"
             "</summary>", ""]  # fmt: skip
    for group in groups:
        more = f" and {len(group) - 1} more" if len(group) > 1 else ""
        said = _after(group[0], len(group) > 1) or _said_where(group[0])
        lines.append(f"  - {md.code(group[0].test)}{more}" + (f": {said}" if said else ""))
    return [*lines, "", "  </details>"]


def _after(failure: TestFailure, many: bool = True) -> str:
    """For a cause of the change's lines (``ran``): the type and those lines; "" otherwise."""
    if not failure.ran or not failure.cause or " after running " not in failure.cause:
        return ""
    where = ran_lines(failure.ran)
    shown = ", ".join(md.code(w) for w in where[:3])
    shown += f" and {len(where) - 3} more files" if len(where) > 3 else ""
    exc = failure.cause.split(" after running ", 1)[0]
    who = "they fail" if many else "it fails"
    return f"{who} with {md.code(exc)} after running {shown}, which the change touched"


def _said_where(failure: TestFailure) -> str:
    """What a failure said and where it was raised (``msg`` at ``path:line``), "" when silent."""
    said = failure_message(failure)
    if not said:
        return ""
    return md.code(said) + (f" at {md.code(failure.raised_at)}" if failure.raised_at else "")


def _excerpt(failure: TestFailure) -> list[str]:
    """The excerpt's end, where its error is: a record's is within the bound already, a text
    fallback's may be longer (the JSON keeps it whole)."""
    lines = failure.excerpt.splitlines()
    return md.fence("\n".join(lines[-EXCERPT_LINES:]))


def blocking_causes(failures: list[TestFailure]) -> int:
    """How many blocking items the regressions make."""
    return len(by_cause(failures))
