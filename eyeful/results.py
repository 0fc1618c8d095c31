"""Per-test outcomes of one test run, read from its JUnit XML or its console output.

Comparing a run on the change with a run on the base only works if a test has the
same id in both, so every id here is derived from the test's name alone (never
from timings, temp paths or order).  Where one id is reported more than once (a
teardown error after a pass, two Go packages with the same test name, a test
that both fails and errors) the worst outcome wins: error > failed > passed >
skipped.  An expected failure (pytest xfail) counts as passed: the suite's
author declared it fine.  An unexpected pass (non-strict xpass) is also passed;
a strict xpass is reported by pytest itself as FAILED.
"""

from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath
from typing import Literal

from eyeful.failures import Failure, as_shown, from_junit
from eyeful.records import json_object

Outcome = Literal["passed", "failed", "error", "skipped"]

__all__ = ["Outcome", "OutputScanner", "ResultsError", "is_pytest_command", "parse_junit"]

# Lines longer than this are cut before being looked at: no result line is that
# long, and it bounds the time and memory one pathological line can cost.
MAX_LINE = 4096

# Failures kept per run (each bounded): a report of 10,000 failures stays small.
MAX_FAILURES = 1000

_RANK: dict[Outcome, int] = {"skipped": 0, "passed": 1, "failed": 2, "error": 3}

_PYTEST_WORDS: dict[str, Outcome] = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "SKIPPED": "skipped",
    "XFAIL": "passed",
    "XPASS": "passed",
}
_GO_WORDS: dict[str, Outcome] = {"PASS": "passed", "FAIL": "failed", "SKIP": "skipped"}
_GO_ACTIONS: dict[str, Outcome] = {"pass": "passed", "fail": "failed", "skip": "skipped"}

# "===== short test summary info =====": pytest's section headers.
_SECTION = re.compile(r"=+ (.*?) =+")
# "3 failed, 1 passed in 0.12s": pytest's last line, between "=" only without -q.
_STATS = re.compile(r"(?:\d+ \w+(?:, \d+ \w+)*|no tests ran) in \d+(?:\.\d+)?s\b.*")
# Only these headers change how lines are read: a banner some test prints
# ("=== starting server ===") must not silence the rest of the output.
_PYTEST_SECTIONS = frozenset(
    {
        "test session starts",
        "ERRORS",
        "FAILURES",
        "PASSES",
        "XFAILURES",
        "XPASSES",
        "warnings summary",
        "short test summary info",
        "rerun test summary info",
    }
)
_STATUS = "PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS"
# "FAILED tests/t.py::test_x - AssertionError: ..." in the short test summary.
_SUMMARY = re.compile(rf"({_STATUS}) (\S.*)")
# "tests/t.py::test_x PASSED   [ 50%]", "... SKIPPED (reason) [ 60%]",
# with -vv "tests/t.py::TestC::test_m <- tests/base.py PASSED".
_VERBOSE = re.compile(
    rf"(\S+?::.+?)(?: <- \S+)? ({_STATUS})(?: \(.*\))?(?:\s+\[[^\]]*\])?",
)
# pytest-xdist -v: "[gw0] [ 50%] PASSED tests/t.py::test_x".
_XDIST = re.compile(rf"\[gw\d+\] \[[^\]]*\] ({_STATUS}) (\S+?::.+?)(?: <- \S+)?")
# go test: "--- FAIL: TestX (0.00s)", subtests indented: "    --- PASS: TestX/sub (0.00s)".
_GO = re.compile(r"[ \t]*--- (PASS|FAIL|SKIP): (\S+) \([0-9.]+s\)")


class ResultsError(Exception):
    """A JUnit file eyeful asked for could not be read: the run's results are unknown."""


def _record(outcomes: dict[str, Outcome], test_id: str, outcome: Outcome) -> None:
    old = outcomes.get(test_id)
    if old is None or _RANK[outcome] > _RANK[old]:
        outcomes[test_id] = outcome


def _summary_id(rest: str) -> str:
    """The node id at the start of a summary line, whose message follows " - ".

    " - " may also occur inside a parameter id ("test_p[x - y]"), so only a
    separator outside brackets counts.
    """
    depth = 0
    for i, ch in enumerate(rest):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(depth - 1, 0)
        elif depth == 0 and rest.startswith(" - ", i):
            return rest[:i]
    if depth:
        # Unbalanced brackets in a parameter id ("test_p[a[b]"): params end with "]".
        end = rest.find("] - ")
        if end >= 0:
            return rest[: end + 1]
        end = rest.find(" - ")
        if end >= 0:
            return rest[:end]
    return rest.rstrip()


def _is_node_id(text: str) -> bool:
    """Whether text can be a pytest node id, to reject prose like "FAILED (errors=1)"."""
    path, sep, names = text.partition("::")
    if not path or path[0] in "([-" or any(ch.isspace() for ch in path):
        return False
    if sep:
        return bool(names) and not names.endswith("::")
    return "/" in path or "." in path


class OutputScanner:
    """Fed the output of one test run line by line; collects each test's outcome.

    Reads pytest (-q, -v, -rA, xdist) and `go test` (plain, -v, -json) output.
    Only the dict of outcomes is kept, never lines, so memory stays flat however
    much a suite prints.  Go ids are bare test names ("TestX/sub_case"): the
    package is only printed after its tests, so equal names in two packages
    share one id.  pytest's summary lines are only trusted inside its "short
    test summary info" section, and its -v lines only before the first report
    section, so a test that prints such lines does not fake a result.
    """

    def __init__(self) -> None:
        self._outcomes: dict[str, Outcome] = {}
        # Title of the pytest section being read; None before any (or after a -q run).
        self._section: str | None = None

    @property
    def outcomes(self) -> dict[str, Outcome]:
        """A copy, so a caller cannot disturb a scan still being fed."""
        return dict(self._outcomes)

    def feed(self, line: str) -> None:
        line = as_shown(line, MAX_LINE)
        if not line:
            return
        header = _SECTION.fullmatch(line)
        if header:
            title = header[1].strip()
            if _STATS.fullmatch(title):
                # The closing "=== 3 failed in 0.1s ===" ends pytest's report.
                self._section = None
                return
            if title in _PYTEST_SECTIONS:
                self._section = title
                return
        if self._section == "short test summary info":
            self._feed_summary(line)
            return
        if self._section not in (None, "test session starts"):
            # Inside pytest's FAILURES, captured output and the like: what a
            # test printed there is no result.
            return
        if line[0] == "{" and self._feed_go_json(line):
            return
        match = _GO.fullmatch(line)
        if match:
            _record(self._outcomes, match[2], _GO_WORDS[match[1]])
            return
        if "::" in line:
            self._feed_pytest_verbose(line)

    def _feed_go_json(self, line: str) -> bool:
        event = json_object(line)
        if event is None:
            return False
        action = event.get("Action")
        test = event.get("Test")
        if isinstance(action, str) and action in _GO_ACTIONS and isinstance(test, str) and test:
            _record(self._outcomes, test, _GO_ACTIONS[action])
        return "Action" in event

    def _feed_summary(self, line: str) -> None:
        summary = _SUMMARY.fullmatch(line)
        if summary:
            rest = summary[2]
            # "SKIPPED [2] tests/t.py:12: reason" counts skips; it names no test.
            if not rest.startswith("["):
                test_id = _summary_id(rest)
                if _is_node_id(test_id):
                    _record(self._outcomes, test_id, _PYTEST_WORDS[summary[1]])
        elif _STATS.fullmatch(line):
            self._section = None

    def _feed_pytest_verbose(self, line: str) -> None:
        verbose = _VERBOSE.fullmatch(line)
        if verbose:
            word, test_id = verbose[2], verbose[1]
        else:
            xdist = _XDIST.fullmatch(line)
            if not xdist:
                return
            word, test_id = xdist[1], xdist[2]
        if _is_node_id(test_id):
            _record(self._outcomes, test_id, _PYTEST_WORDS[word])


def _tag(element: ET.Element) -> str:
    """Tag without a namespace, since some tools namespace their JUnit XML."""
    return element.tag.rsplit("}", 1)[-1]


def _junit_outcome(testcase: ET.Element) -> Outcome:
    outcome: Outcome | None = None
    for child in testcase:
        tag = _tag(child)
        found: Outcome
        if tag == "failure":
            found = "failed"
        elif tag == "error":
            found = "error"
        elif tag == "skipped":
            # pytest writes an expected failure as a skip; it is a pass (see module doc).
            found = "passed" if child.get("type") == "pytest.xfail" else "skipped"
        else:
            continue
        if outcome is None or _RANK[found] > _RANK[outcome]:
            outcome = found
    return outcome or "passed"


def _junit_id(file: str | None, classname: str, name: str, pytest: bool = False) -> str:
    """A pytest node id when the file is known (xunit1) or the report is pytest's own (xunit2
    gives only the dotted classname), so ids match console output and ``test_one``."""
    if not file and pytest and classname:
        return _from_classname(classname, name)
    if not file:
        return f"{classname}::{name}" if classname else name
    file = file.replace("\\", "/")
    # pytest builds classname from the node id as "dir.module.Class.Nested".
    module = file.removesuffix(".py").replace("/", ".")
    if not classname:
        # A collection error is reported as name="dir.module": the node id is the file.
        return file if name == module else f"{file}::{name}"
    if classname == module:
        return f"{file}::{name}"
    if classname.startswith(module + "."):
        classes = classname[len(module) + 1 :].split(".")
        return "::".join([file, *classes, name])
    # `file` is where the function is written, which differs from where it was
    # collected for a test inherited from a class in another module.
    return _from_classname(classname, name)


def _from_classname(classname: str, name: str) -> str:
    """pytest's node id from its JUnit classname ("dir.module.Class"): the trailing capitalised
    parts are classes (pytest collects classes named Test*), the rest is the module's path."""
    parts = classname.split(".")
    first_class = len(parts)
    while first_class > 1 and parts[first_class - 1][:1].isupper():
        first_class -= 1
    path = "/".join(parts[:first_class]) + ".py"
    return "::".join([path, *parts[first_class:], name])


def _record_failure(failures: dict[str, Failure], test_id: str, testcase: ET.Element) -> None:
    failure = from_junit(testcase)
    if failure is None or (test_id not in failures and len(failures) >= MAX_FAILURES):
        return
    old = failures.get(test_id)
    if old is not None:  # one id reported twice (a teardown error after a failure): keep both
        failure = failure.model_copy(update={"text": f"{old.text}\n\n{failure.text}"[-4000:]})
    failures[test_id] = failure


def parse_junit(path: Path, failures: dict[str, Failure] | None = None) -> dict[str, Outcome]:
    """Outcomes by test id from a JUnit XML file; streamed so large reports stay cheap.

    When ``failures`` is given, each failing test's failure is put there by test id.
    """
    outcomes: dict[str, Outcome] = {}
    pytest = False  # pytest names its suite "pytest" (its default junit_suite_name)
    try:
        with path.open("rb") as source:
            stack: list[ET.Element] = []
            # The file is the one the user's own test run just wrote, and expat
            # neither fetches external entities nor expands entities without bound.
            for event, element in ET.iterparse(source, events=("start", "end")):  # noqa: S314
                if event == "start":
                    if not stack and _tag(element) not in ("testsuites", "testsuite"):
                        raise ResultsError(
                            f"{path}: not a JUnit report: root element is <{_tag(element)}>"
                        )
                    if _tag(element) == "testsuite" and element.get("name") == "pytest":
                        pytest = True
                    stack.append(element)
                    continue
                stack.pop()
                if _tag(element) != "testcase":
                    continue
                name = element.get("name")
                if not name:
                    raise ResultsError(f"{path}: a <testcase> has no name attribute")
                classname = element.get("classname", "")
                test_id = _junit_id(element.get("file"), classname, name, pytest)
                _record(outcomes, test_id, _junit_outcome(element))
                if failures is not None:
                    _record_failure(failures, test_id, element)
                if stack:
                    stack[-1].remove(element)
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ET.ParseError as exc:
        raise ResultsError(f"{path}: malformed XML: {' '.join(str(exc).split())}") from None
    return outcomes


# `VAR=value` before a command only sets its environment.
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_PYTEST_EXE = re.compile(r"(?:pytest|py\.test)(?:-3)?(?:\.exe)?")
_PYTHON_EXE = re.compile(r"(?:python|pypy)(?:\d+(?:\.\d+)*)?(?:\.exe)?")
# Interpreter options that may come before `-m pytest` (-X and -W take a value).
_PYTHON_FLAGS = re.compile(r"-[bBdEiIOPqsSuvR]+|-[XW].+")
# Tools whose `run` subcommand runs the rest of the line as a command, args untouched.
_RUNNERS = frozenset({"uv", "poetry", "pdm", "pipenv"})


def _has_shell_syntax(command: str) -> bool:
    """Whether the shell would do more than run one command with these words.

    Appending an option after a pipe, a redirection, a second command or a
    comment would give it to the wrong program, or to none.
    """
    if "\n" in command or "\r" in command:
        return True
    quote = ""
    at_word_start = True
    i = 0
    while i < len(command):
        ch = command[i]
        if quote == "'":
            if ch == "'":
                quote = ""
        elif ch == "\\":
            i += 2
            at_word_start = False
            continue
        elif ch == "`" or command.startswith("$(", i):
            return True
        elif quote == '"':
            if ch == '"':
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in ";&|<>()" or (ch == "#" and at_word_start):
            return True
        at_word_start = not quote and ch in " \t"
        i += 1
    return False


def _pytest_args(words: list[str]) -> list[str] | None:
    """The arguments pytest gets when words start a pytest invocation, else None."""
    exe = PurePosixPath(words[0].replace("\\", "/")).name
    if _PYTEST_EXE.fullmatch(exe):
        return words[1:]
    if not _PYTHON_EXE.fullmatch(exe):
        return None
    i = 1
    while i < len(words):
        word = words[i]
        if word == "-m":
            return words[i + 2 :] if words[i + 1 : i + 2] == ["pytest"] else None
        if word == "-mpytest":
            return words[i + 1 :]
        if word in ("-X", "-W"):
            i += 2
        elif _PYTHON_FLAGS.fullmatch(word):
            i += 1
        else:
            return None
    return None


def is_pytest_command(command: str) -> bool:
    """Whether `--junitxml=PATH -o junit_family=xunit1` can be appended to command.

    True for one plain pytest invocation: `pytest ...`, `py.test ...`,
    `[path/]pythonX.Y [-flags] -m pytest ...`, optionally after `VAR=value`
    assignments or behind `uv run` / `poetry run` / `pdm run` / `pipenv run`
    (with no options of the runner's own, whose arity we cannot know), behind
    `env [-i] [-u NAME] [VAR=value]...`, and `tox ... -- ARGS` (posargs).  False
    for anything the appended options might miss or break: shell operators,
    an existing --junitxml, `-p no:junitxml`, a `--` after which options are
    read as paths, and any other program (make, tox, go, ...).
    """
    if _has_shell_syntax(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    unwrapped = _unwrap(words)
    if unwrapped is None:
        return False
    words = unwrapped
    if words[0] == "tox":
        # tox hands what follows `--` to its commands' {posargs}; where they do not use it, no
        # report is written and the output is read instead.
        if "--" not in words:
            return False
        return not any(_blocks_junit(arg) for arg in words[words.index("--") + 1 :])
    args = _pytest_args(words)
    if args is None:
        return False
    return not any(arg == "--" or _blocks_junit(arg) for arg in args)


def _blocks_junit(arg: str) -> bool:
    return arg.startswith(("--junitx", "--junit-x")) or arg.endswith("no:junitxml")


# `env`'s own options that take no value, and those that take the next word.
_ENV_FLAGS = frozenset({"-i", "--ignore-environment", "-", "-0", "--null"})
_ENV_VALUED = frozenset({"-u", "--unset", "-C", "--chdir"})


def _unwrap(words: list[str]) -> list[str] | None:
    """The command behind `VAR=value` assignments, `env [options] [VAR=value]...` and
    `uv run`/`poetry run`/...; None when nothing is left or a wrapper's options are unknown."""
    while words:
        if _ASSIGNMENT.fullmatch(words[0]):
            words = words[1:]
        elif PurePosixPath(words[0]).name == "env":
            words = words[1:]
            while words and words[0].startswith("-"):
                if words[0] in _ENV_FLAGS or words[0].startswith(("--unset=", "--chdir=")):
                    words = words[1:]
                elif words[0] in _ENV_VALUED:
                    words = words[2:]
                else:
                    return None
        elif len(words) >= 2 and words[0] in _RUNNERS and words[1] == "run":
            words = words[2:]
        else:
            return words
    return None
