"""Telling a test runner that could not run from one that ran and failed.

A run that never got as far as running the tests says nothing about the change: it is `ERROR`
(exit 3, "could not verify"), never `FAILED`, whose failures would be compared with the base and
could come out as pre-existing. The signs: the shell could not find or execute the command (exit
126/127), `python` has no pytest, pytest itself stopped before it ran the tests (exit 2 without a
test result, 3, 4, and 5 where there must be tests), pytest died with a traceback before it
reported anything (an old pytest on a newer Python), and a JUnit report that was asked for and not
written. Each reason says what to fix, in the runner's own error line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eyeful import results

# dash: "/bin/sh: 1: pytst: not found"; bash: "sh: line 1: pytst: command not found".
_SHELL_MISSING = re.compile(
    # The shell names itself by $0: eyeful runs commands as `sh -c COMMAND eyeful ID...`.
    r"^(?:(?:/bin/)?sh|eyeful): (?:line )?(?:\d+: )?(?P<name>.+?): "
    r"(?P<what>not found|command not found|Permission denied|Is a directory)$",
    re.MULTILINE,
)
# `python -m pytest` with an interpreter that has no pytest.
_NO_PYTEST = re.compile(r"^(?P<python>\S*?): No module named pytest$", re.MULTILINE)

_PYTEST_CODES = {
    2: "pytest was interrupted before it reported any test (exit 2)",
    3: "pytest stopped with an internal error (exit 3)",
    4: "pytest rejected its command line or configuration (exit 4, usage error)",
    5: "pytest collected no tests (exit 5)",
}


CONFTEST_FAILED = "pytest could not load a conftest.py (exit 4)"
"""The reason of a run whose conftest.py raised while pytest loaded it (eyeful/review.py: the
change's code may be what it imports)."""
_CONFTEST_FAILED = "while loading conftest"  # pytest's own words: "ImportError while loading ..."


@dataclass(frozen=True)
class Attempt:
    """What is known of one finished test run."""

    command: str
    side: str
    name: str
    status: str
    exit_code: int | None
    tail: str
    failing_read: bool
    """Whether per-test failures (or errors) were read from its output or report."""
    isolated: bool = False
    """Whether the command ran in eyeful's own virtualenv (``isolate = "venv"``)."""
    junit_missing: str | None = None
    """The configured JUnit report the command did not write, if any."""


# An exception's own line, as Python prints it (`ImportError: cannot import ...`) or as pytest
# shows it in a report (`E   RuntimeError: ...`).
_EXCEPTION_LINE = re.compile(
    r"^(?:E\s+)?(?P<line>(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)\b.*)$"
)
_TRACEBACK = "Traceback (most recent call last):"
# pytest's closing line, or a count of outcomes: the session got as far as running tests.
_SUMMARY = re.compile(
    r"\b\d+ (?:passed|failed|errors?|skipped|xfailed|deselected)\b|no tests ran"
    r"|^Ran \d+ tests? in ",  # unittest's
    re.MULTILINE,
)
_UNITTEST = re.compile(r"(?:^|\s)-m\s*unittest(?:\s|$)")


# pytest's own error lines: argparse's `__main__.py: error: unrecognized arguments: ...` and its
# `ERROR: file or directory not found: ...` (not the `ERROR: usage: ...` line before the first).
_RUNNER_ERROR = re.compile(r"^(?:\S+: error: .+|ERROR: (?!usage:).+)$")
# What pytest prints around its error: its header and where it found its configuration.
_HEADER = re.compile(
    r"^(?:rootdir|inifile|configfile|cachedir|plugins|platform|testpaths): |^={3,}|^usage: "
)


def _last_line(tail: str) -> str:
    """The runner's own error line: the last exception line of its output, else pytest's own
    error line, else its last line that is not a header pytest printed around it (such as
    ``rootdir: ...``)."""
    lines = [line.strip() for line in tail.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        found = _EXCEPTION_LINE.match(line)
        if found is not None:
            return found["line"][:200]
    for line in reversed(lines):
        if _RUNNER_ERROR.match(line):
            return line[:200]
    said = [line for line in lines if not _HEADER.match(line)]
    return (said or lines or [""])[-1][:200]


def crashed_at_start(exit_code: int | None, tail: str) -> str | None:
    """A Python runner that died with a traceback before it ran any test (an old pytest on a
    Python it does not support, a plugin that raises at import): its error line."""
    if exit_code != 1 or _TRACEBACK not in tail or _SUMMARY.search(tail):
        return None
    return f"the test runner crashed before it ran any test (exit 1): {_last_line(tail)}"


def missing_command(exit_code: int | None, tail: str) -> str | None:
    """The reason for exit 126/127, naming the command the shell could not run."""
    if exit_code not in (126, 127):
        return None
    found = _SHELL_MISSING.search(tail)
    if found is None:
        return f"could not start (exit {exit_code}: command not found or not executable)"
    name, what = found["name"], found["what"]
    if what in ("not found", "command not found"):
        return f"could not start: `{name}` was not found on PATH (exit {exit_code})"
    return f"could not start: `{name}` is not executable (exit {exit_code}: {what.lower()})"


def _no_pytest(attempt: Attempt) -> str | None:
    found = _NO_PYTEST.search(attempt.tail)
    if found is None:
        return None
    where = (
        "eyeful's virtualenv for this worktree has no pytest: install it in setup "
        '(e.g. setup = "pip install -e . pytest"), or set isolate = "none"'
        if attempt.isolated
        else "install pytest for that interpreter, or fix commands in [tool.eyeful]"
    )
    return f"`{found['python']}` has no pytest (No module named pytest); {where}"


def why_not_run(attempt: Attempt) -> str | None:
    """Why the run could not run the tests, with what to fix; None when it ran them."""
    if attempt.status == "ERROR":
        return None  # timed out or could not start: commands.py already said why
    if attempt.junit_missing is not None:
        return (
            f"the test command did not write the JUnit report {attempt.junit_missing} "
            "that `junit` names: make the command write it there, or remove `junit`"
        )
    if attempt.status == "PASSED":
        return None
    code = attempt.exit_code
    pytest = code in _PYTEST_CODES and results.is_pytest_command(attempt.command)
    if pytest and code == 4 and _CONFTEST_FAILED in attempt.tail:
        return f"{CONFTEST_FAILED}: {_last_line(attempt.tail)}".rstrip(": ")
    if pytest and code in (3, 4):
        # Whatever was read then (pytest reports an internal error as a test "pytest::internal")
        # is no test's result.
        return f"{_PYTEST_CODES[code]}: {_last_line(attempt.tail)}".rstrip(": ")
    if attempt.failing_read:
        return None
    runner = pytest or results.is_pytest_command(attempt.command)
    if runner or _UNITTEST.search(attempt.command):
        # unittest dies so too where a name it is given is no test (a doctest's `mod.func`).
        crashed = crashed_at_start(code, attempt.tail)
        if crashed is not None:
            return crashed
    no_pytest = _no_pytest(attempt)
    if no_pytest is not None:
        return no_pytest
    if not pytest:
        return None
    assert code is not None
    if code in (2, 4, 5) and attempt.name == "test_one":
        # One test on the base: a test the change adds is not there (4, 5) or cannot be
        # imported (2). That is the base's answer, which the gates read.
        return None
    if code == 5 and attempt.side == "base":
        return None  # the base has no tests yet: every test is absent there, a known answer
    last = _last_line(attempt.tail)
    return f"{_PYTEST_CODES[code]}" + (f": {last}" if last else "")
