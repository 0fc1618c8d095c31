"""Test ids as data, and the `test_one` template they are handed to.

A test id (a finding's ``repro.test``, a runner's node id) is a path inside the repository,
optionally followed by ``::name`` parts (``tests/test_a.py::TestB::test_c[x-1]``). The path is
made of safe characters only (:data:`PATH_CHARS`) and starts with a letter, digit, ``_`` or ``.``
(never ``-`` or ``@``), so no test runner reads the id as an option or as a file of arguments
(pytest's ``@file``). After ``::`` come the runner's own names, with any character an argument
can hold (pytest's parameter ids have spaces, quotes, brackets, ``µ``): only a NUL or a line
break is refused, per id, with the reason.

The ids never become shell text: `{test}` in the template is replaced by ``"$@"`` and the ids are
the shell's positional arguments (``sh -c TEMPLATE eyeful ID...``). A template that puts `{test}`
inside quotes (``'{test}'``, ``"{test}"``) or after a backslash would change what ``"$@"`` means,
so it is a configuration error.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

PLACEHOLDER = "{test}"
PATH_CHARS = "letters and digits (any script) _ . - / + @ % , = and space"
# Space and letters of any script are allowed: test files and pytest's parameter ids have them
# (`test_x[a b]`), and an id reaches the command as an argument, never as shell text.
_PATH_PART = re.compile(r"[\w./+@%,= -]+")
_FIRST = re.compile(r"[^\W]|\.")
# After `::`, the runner's own names: any character an argument can hold. The id reaches the
# command as an argument, never as shell text, and it starts with the path, so never with `-`.
_NOT_ARGUMENT = frozenset("\0\n\r")
_MAX_CHARS = 1000


def check_test_path(value: str, what: str = "the path") -> str:
    """A repository-relative path of safe characters that no runner can read as an option."""
    path = PurePosixPath(value)
    if not value or not _PATH_PART.fullmatch(value):
        raise ValueError(
            f"{what} {value!r} has characters a test path may not have (allowed: {PATH_CHARS})"
        )
    if not _FIRST.match(value):
        # `-x` is an option; pytest (8.2+) reads `@file` as a file of arguments.
        raise ValueError(
            f"{what} {value!r} must start with a letter, digit, '_' or '.' "
            "(a test runner could read it as an option or an argument file)"
        )
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(f"{what} {value!r} must be a path inside the repository")
    if path.parts and path.parts[0] == ".git":
        raise ValueError(f"{what} {value!r} is inside .git")
    return value


def check_test_id(value: str, what: str = "the test id") -> str:
    """``PATH`` or ``PATH::NAME::...``; raises ValueError naming ``what`` otherwise."""
    if len(value) > _MAX_CHARS:
        raise ValueError(f"{what} is longer than {_MAX_CHARS} characters")
    path, *names = value.split("::")
    check_test_path(path, what)
    for name in names:
        bad = next((c for c in name if c in _NOT_ARGUMENT), None)
        if not name or bad is not None:
            raise ValueError(
                f"{what} {value!r}: the test name {name!r} cannot be passed as an argument "
                f"({'it is empty' if not name else f'it holds {bad!r}'})"
            )
    return value


def id_path(test_id: str) -> str:
    """The file part of a test id."""
    return test_id.split("::", 1)[0]


def _quoted_placeholder(template: str) -> str | None:
    """How `{test}` is quoted in ``template`` (the first such place), or None when it is bare.

    Follows POSIX sh quoting: backslash escapes, single quotes, double quotes (in which
    backslash escapes only ``$ ` " \\`` and newline).
    """
    quote: str | None = None
    i = 0
    while i < len(template):
        if template.startswith(PLACEHOLDER, i):
            if quote is not None:
                return f"inside {quote}{quote} quotes"
            i += len(PLACEHOLDER)
            continue
        char = template[i]
        if char == "\\" and quote != "'":
            if template.startswith(PLACEHOLDER, i + 1):
                return "after a backslash"
            i += 2
            continue
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
        i += 1
    return None


def check_template(template: str) -> str:
    """A `test_one` template eyeful can hand ids to safely; raises ValueError otherwise."""
    if PLACEHOLDER not in template:
        raise ValueError(
            "must contain {test}, where eyeful puts the test file or id "
            '(e.g. "python -m pytest -q {test}")'
        )
    where = _quoted_placeholder(template)
    if where is not None:
        raise ValueError(
            f'{{test}} is {where}; write it bare (e.g. "python -m pytest -q {{test}}"): '
            "eyeful passes each test id as its own argument"
        )
    return template


@dataclass(frozen=True)
class IdCommand:
    """A `test_one` command for some ids: the shell script, its arguments, and how to show it."""

    script: str
    args: tuple[str, ...]
    shown: str


def with_ids(template: str, ids: Sequence[str]) -> IdCommand:
    """`{test}` becomes ``"$@"``; the ids travel as the shell's positional arguments.

    ``shown`` is the same command with the ids quoted in, for people (the report, a rerun).
    """
    check_template(template)
    if not ids:
        raise ValueError("no test id to run")
    shown = template.replace(PLACEHOLDER, " ".join(shlex.quote(t) for t in ids))
    return IdCommand(script=template.replace(PLACEHOLDER, '"$@"'), args=tuple(ids), shown=shown)
