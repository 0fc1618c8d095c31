"""What a test's failure actually was: its type, message, text and the frame that raised it.

A verdict must rest on the failure that happened, never on text that merely appears somewhere in
the output (pytest's echo of the test's own source, its header, a summary line, what the test
printed). So each failing test's own failure is read, in this order of trust:

1. its JUnit ``<failure>``/``<error>`` element (message and text), when the run wrote a report;
2. its own section of the output: pytest's ``____ test_x ____`` block under FAILURES/ERRORS
   (without the "Captured ..." output), or go test's lines for that test;
3. for a run that names nothing: the last Python traceback of the output, else the whole output.

A failure read from a runner's record (``source == "probe"``: pytest's probe, unittest's and go's
records) is matched by what was raised (:func:`own_words`): each exception of the chain, its type
and message (pytest's assertion explanation, ``assert 3 == 4`` / ``where 3 = add(1, 2)``, is part
of an AssertionError's message: pytest builds it from the values the test's own assertion
compared, so it counts), or a Go test's ``t.Error`` lines. Never the runner's rendering around it:
the echoed source, the function's arguments (a parametrize value), locals, captured output.
For a failure read from text (the fallback), every line that repeats a line of the test file is
removed before it is searched (:func:`scrub`): a message the test merely *contains* is not a
message it *printed*. The raising frame is the last traceback entry (pytest ends each entry with
``path:line: ExcType``), the last ``File "..."`` line of a Python traceback, or the first frame of
a Go panic outside the Go runtime and ``testing`` package.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import deque
from collections.abc import Mapping
from typing import Literal

from pydantic import Field

from eyeful.gitutil import STATE_DIR, WORKTREE_PREFIX, WORKTREES_DIR
from eyeful.model import Model
from eyeful.textsafe import uncoloured

__all__ = [
    "Failure",
    "SectionScanner",
    "cause",
    "describe",
    "from_junit",
    "own_words",
    "ran_lines",
    "report_cause",
    "same_failure",
    "scrub",
    "section_title",
]

TEXT_CHARS = 4000  # of each failure's text, its end kept (the raising frame is last)
MAX_SECTIONS = 1000  # per run: bounds memory however many tests fail
_MAX_LINE = 4096

FailureKind = Literal["assertion", "exception", "collection", "crash", "timeout", "unknown"]


class Failure(Model):
    """One test's failure as it happened."""

    type: str | None = None
    """Exception type (``TypeError``), ``panic``, a signal name, or None when not known."""
    message: str = ""
    """One line: the exception's message, pytest's reprcrash message, go's first log line."""
    text: str = ""
    """The failure text (the end of it, bounded)."""
    raised_in: str | None = None
    """File of the raising frame, as the runner printed it."""
    raised_line: int | None = None
    """Its line, where a runner's record gives it."""
    frames: list[str] = Field(default_factory=list)
    """Files of the traceback's entries, outermost first (at most 30)."""
    stack: list[str] = Field(default_factory=list)
    """The traceback's entries as ``file:line``, outermost first (at most 30), where known."""
    in_repository: str | None = None
    """``file:line`` of the innermost frame in the checkout (from a runner's record): where the
    repository's code was when the exception came, raised there or in a library it called."""
    kind: FailureKind = "unknown"
    source: Literal["probe", "junit", "output"] = "output"
    """Where it was read: the runner's record (the exception object), or text (the fallback)."""
    chain: list[str] = Field(default_factory=list)
    """From a runner's record: each exception of the chain, ``Type: message``, the raised first."""
    excerpt: str = ""
    """From a runner's record: the failing frames (``path:line in function`` and its source
    line) and the exception, at most 15 lines (eyeful/evidence.py); "" otherwise."""


def _bounded(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[-TEXT_CHARS:]


# pytest's long repr ends each traceback entry with "path:line: ExcType" (the last one names
# the exception), --tb=short with "path:line: in func", --tb=line with "path:line: Exc: msg".
_PYTEST_LOC = re.compile(r"([^\s:]+|<[^>\s]+>):(\d+):(?: (in \S+|[A-Za-z_][\w.]*(?::.*)?))?")
_PY_FRAME = re.compile(r'\s*File "(.+?)", line (\d+)(?:, in .*)?')
_PY_EXC = re.compile(r"([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failed|Timeout))"
                     r"(?:: (.*))?")  # fmt: skip
_E_LINE = re.compile(r"E\s+(.*)")
_GO_FRAME = re.compile(r"\t(\S+\.go):\d+(?: \+0x[0-9a-f]+)?")
_GO_LOG = re.compile(r"\s+(\S+\.go):\d+: (.*)")
_SIGNAL = re.compile(r"\b(SIG[A-Z]{3,})\b|Segmentation fault|killed by signal|signal: \w+")
_SANITIZER = re.compile(r"(?:Address|Thread|Memory|UndefinedBehavior|Leak)Sanitizer|DATA RACE")
_COLLECTION = ("ImportError", "ModuleNotFoundError", "SyntaxError", "IndentationError")


def _short_type(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def describe(
    text: str,
    *,
    message: str | None = None,
    type_: str | None = None,
    source: Literal["junit", "output"] = "output",
    collection: bool = False,
) -> Failure:
    """A Failure read from a failure's text (and a runner's message and type, when given)."""
    lines = [line.rstrip() for line in text.splitlines()]
    raised_in: str | None = None
    loc_type: str | None = None
    for line in reversed(lines):
        loc = _PYTEST_LOC.fullmatch(line)
        if loc:
            raised_in = loc[1]
            tail = loc[3] or "in ?"
            if not tail.startswith("in "):
                loc_type = tail.split(":", 1)[0]
            break
        frame = _PY_FRAME.fullmatch(line)
        if frame:
            raised_in = frame[1]
            break
    frames: list[str] = []
    stack: list[str] = []
    for line in lines:
        found = (
            _PYTEST_LOC.fullmatch(line) or _PY_FRAME.fullmatch(line) or _GO_FRAME.fullmatch(line)
        )
        path = found[1].replace("\\", "/") if found else None
        if path and (not frames or frames[-1] != path) and len(frames) < 30:
            frames.append(path)
        if path and found is not None and found.re is not _GO_FRAME:
            stack.append(f"{path}:{found[2]}")
    go_type, go_file = _go_failure(lines)
    if raised_in is None:
        raised_in = go_file
    exc_type = type_ or loc_type or go_type
    first = message.strip().splitlines()[0] if message and message.strip() else ""
    if not first:
        first = _message_from_lines(lines)
    if exc_type is None and first:
        exc = _PY_EXC.fullmatch(first)
        if exc:
            exc_type = exc[1]
        elif first.startswith("assert "):
            exc_type = "AssertionError"
    if exc_type is not None:
        exc_type = _short_type(exc_type)
    kind = kind_of(exc_type, first, text, collection)
    return Failure(
        type=exc_type,
        message=first[:500],
        text=_bounded(text.strip("\n")),
        raised_in=raised_in.replace("\\", "/") if raised_in else None,
        frames=frames,
        stack=stack[-30:],
        kind=kind,
        source=source,
    )


def _message_from_lines(lines: list[str]) -> str:
    for line in lines:
        e_line = _E_LINE.fullmatch(line)
        if e_line:
            return e_line[1].strip()
    for line in reversed(lines):
        exc = _PY_EXC.fullmatch(line.strip())
        if exc:
            return line.strip()
    for line in lines:
        if line.startswith("panic: "):
            return line.strip()
        log = _GO_LOG.fullmatch(line)
        if log:
            return log[2].strip()
    return next((line.strip() for line in reversed(lines) if line.strip()), "")


def _go_failure(lines: list[str]) -> tuple[str | None, str | None]:
    """("panic", first frame outside the runtime) for a Go panic; ("FAIL", file) for t.Error."""
    for i, line in enumerate(lines):
        if line.startswith("panic: "):
            for frame_line in lines[i + 1 :]:
                frame = _GO_FRAME.fullmatch(frame_line)
                if frame and not re.search(r"/(?:runtime|testing)/[^/]+\.go$", frame[1]):
                    return "panic", frame[1]
            return "panic", None
    for line in lines:
        log = _GO_LOG.fullmatch(line)
        if log and log[1].endswith("_test.go"):
            return None, log[1]
    return None, None


def kind_of(exc_type: str | None, message: str, text: str, collection: bool) -> FailureKind:
    if collection or exc_type in _COLLECTION:
        return "collection"
    if exc_type == "AssertionError" or message.startswith("assert "):
        return "assertion"
    if (exc_type in ("Failed", "Timeout", "TimeoutError") and "Timeout" in message) or (
        exc_type is None and re.search(r"\btimed out\b|panic: test timed out", text)
    ):
        return "timeout"
    if _SIGNAL.search(text) or _SANITIZER.search(text) or exc_type == "panic":
        return "crash" if exc_type in (None, "panic") else "exception"
    if exc_type in ("Failed", "FAIL"):
        return "assertion"  # pytest.fail(), t.Error: the test's own verdict
    if exc_type is not None:
        return "exception"
    return "unknown"


# --- JUnit ---------------------------------------------------------------------------------


def from_junit(testcase: ET.Element) -> Failure | None:
    """The failure of one ``<testcase>``, or None when it passed or was skipped."""
    found: ET.Element | None = None
    for child in testcase:
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "error" or (tag == "failure" and found is None):
            found = child
    if found is None:
        return None
    message = found.get("message") or ""
    collection = message in ("collection failure", 'failed on setup with "ImportError"') or (
        found.tag.endswith("error") and message.startswith("collection failure")
    )
    return describe(
        found.text or "",
        message=message,
        type_=found.get("type") or None,
        source="junit",
        collection=collection,
    )


# --- the output ----------------------------------------------------------------------------


def as_shown(line: str, limit: int) -> str:
    """A line of output as a terminal shows it: cut at ``limit``, what was written after its
    last carriage return, no colour codes, no trailing space."""
    line = line[:limit].rstrip("\r\n")
    if "\r" in line:
        line = line.rsplit("\r", 1)[1]
    return uncoloured(line).rstrip()


_EQ_HEADER = re.compile(r"=+ (.*?) =+")
_US_HEADER = re.compile(r"_{3,} (.+?) _{3,}")
_CAPTURED = re.compile(r"-+ Captured .* -+")
_GO_RUN = re.compile(r"=== (RUN|CONT|PAUSE|NAME)\s+(\S+)")
_GO_END = re.compile(r"\s*--- (PASS|FAIL|SKIP): (\S+) \([0-9.]+s\)")
_GO_PACKAGE_END = re.compile(r"(?:FAIL|ok|PASS)(?:\s|$).*")


def section_title(test_id: str) -> str:
    """The title pytest gives a test's section (``TestC.test_m[1]``); a Go id is its own."""
    if "::" not in test_id:
        return test_id
    return ".".join(test_id.split("::")[1:])


class _Section:
    def __init__(self) -> None:
        self.lines: deque[str] = deque()
        self.chars = 0
        self.open = True

    def add(self, line: str) -> None:
        self.lines.append(line)
        self.chars += len(line) + 1
        while self.chars > TEXT_CHARS and len(self.lines) > 1:
            self.chars -= len(self.lines.popleft()) + 1

    def text(self) -> str:
        return "\n".join(self.lines)


class SectionScanner:
    """Fed a run's output line by line; keeps each failing test's own section (bounded).

    pytest: the ``____ title ____`` blocks under FAILURES and ERRORS, without the captured
    output. go test: a test's lines between ``=== RUN`` and its ``--- FAIL`` (-v), the indented
    lines after ``--- FAIL`` (plain), a panic that follows it, and ``-json`` Output events.
    """

    def __init__(self) -> None:
        self._sections: dict[str, _Section] = {}
        self._pytest: str | None = None  # the pytest report section being read
        self._current: _Section | None = None
        self._go_current: str | None = None

    @property
    def sections(self) -> dict[str, str]:
        return {title: s.text() for title, s in self._sections.items()}

    def _open(self, title: str) -> _Section | None:
        section = self._sections.get(title)
        if section is None:
            if len(self._sections) >= MAX_SECTIONS:
                return None
            section = self._sections[title] = _Section()
        return section

    def feed(self, line: str) -> None:
        line = as_shown(line, _MAX_LINE)
        header = _EQ_HEADER.fullmatch(line) if line.startswith("==") else None
        if header:
            title = header[1].strip()
            self._pytest = title if title in ("FAILURES", "ERRORS") else None
            self._current = None
            return
        if self._pytest is not None:
            self._feed_pytest(line)
            return
        if line.startswith("{") and self._feed_go_json(line):
            return
        self._feed_go(line)

    def _feed_pytest(self, line: str) -> None:
        title = _US_HEADER.fullmatch(line)
        if title:
            name = title[1].strip()
            for prefix in ("ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "):
                name = name.removeprefix(prefix)
            self._current = self._open(name)
            return
        if _CAPTURED.fullmatch(line):
            self._current = None  # what the test printed is not its failure
            return
        if self._current is not None:
            self._current.add(line)

    def _feed_go_json(self, line: str) -> bool:
        try:
            event = json.loads(line)
        except ValueError:
            return False
        if not isinstance(event, dict) or "Action" not in event:
            return False
        test, output = event.get("Test"), event.get("Output")
        if isinstance(test, str) and test and isinstance(output, str):
            text = output.rstrip("\n")
            if not _GO_RUN.fullmatch(text) and not _GO_END.fullmatch(text):
                section = self._open(test)
                if section is not None:
                    section.add(text)
        return True

    def _feed_go(self, line: str) -> None:
        if not line.startswith(("=== ", " ", "\t", "--- ", "FAIL", "ok", "PASS")):
            if self._current is not None and line:
                self._current.add(line)  # a panic's lines, after its test's "--- FAIL"
            return
        run = _GO_RUN.fullmatch(line)
        if run:
            self._go_current = run[2]
            self._current = self._open(run[2]) if run[1] != "PAUSE" else None
            return
        end = _GO_END.fullmatch(line)
        if end:
            if end[1] == "FAIL":
                self._go_current = end[2]
                self._current = self._open(end[2])
            else:
                self._sections.pop(end[2], None)
                self._current = None
            return
        if _GO_PACKAGE_END.fullmatch(line) and not line.startswith((" ", "\t")):
            self._current = None
            return
        if self._current is not None and line:
            self._current.add(line)


def by_test(outcomes: Mapping[str, str], sections: dict[str, str]) -> dict[str, Failure]:
    """Each failing test's failure from its section of the output, where it has one."""
    out: dict[str, Failure] = {}
    for test_id, outcome in outcomes.items():
        if outcome not in ("failed", "error"):
            continue
        text = sections.get(section_title(test_id))
        if text is None and "::" in test_id:
            text = sections.get(test_id.split("::", 1)[0])  # "ERROR collecting path"
        if text is not None:
            out[test_id] = describe(
                text,
                collection=text.lstrip().startswith(
                    ("ImportError while importing", "collection failure")
                ),
            )
    return out


# --- reading a reproduction's failure ------------------------------------------------------


def _norm(line: str) -> str:
    return " ".join(line.split())


def scrub(text: str, test_file: str | None) -> str:
    """``text`` without the lines that repeat a line of the test file (pytest's ``>`` echo)."""
    if not test_file:
        return text
    source = {_norm(line) for line in test_file.splitlines()}
    source.discard("")
    kept = []
    for line in text.splitlines():
        bare = _norm(line.lstrip().removeprefix(">"))
        if bare and bare in source:
            continue
        kept.append(line)
    return "\n".join(kept)


_PYTEST_NOISE = re.compile(
    r"(?:platform |rootdir: |configfile: |cachedir: |plugins: |collected \d+ items?|collecting"
    r"|timeout(?: method| func_only)?: |cov(?:erage)?: |=+ |(?:FAILED|ERROR|PASSED) \S+::"
    r"|\S+\.py [.FEsxX]+\s*(?:\[\s*\d+%\])?$|[.FEsxX]+\s*\[\s*\d+%\]$).*"
)


def from_output(output: str, sections: dict[str, str], test_id: str | None) -> Failure | None:
    """A test's failure read from the output when there is no report for it."""
    if test_id is not None:
        key = section_title(test_id)
        texts = [t for title, t in sections.items() if title == key or title.startswith(key + "[")
                 or title.startswith(key + "/") or title.startswith(key + ".")]  # fmt: skip
        if not texts and "::" not in test_id:
            # A file or package given as the test: every section of the run is its own.
            texts = list(sections.values())
        if texts:
            return describe("\n".join(texts))
    if not output.strip():
        return None
    lines = output.splitlines()
    start = max((i for i, line in enumerate(lines) if line.startswith("Traceback (most recent")),
                default=None)  # fmt: skip
    if start is not None:
        lines = lines[start:]
    kept = [line for line in lines if not _PYTEST_NOISE.fullmatch(line.strip())]
    return describe("\n".join(kept))


def own_words(failure: Failure) -> list[str]:
    """What a failure read from a runner's record said itself: each exception of its chain
    (``Type: message``, the whole message), its one-line message, and for a failure with no
    exception (a Go ``t.Error``) the test's log lines (``file_test.go:12: message``). Not the
    rendering around them (source, arguments, locals, captured output)."""
    words = [*failure.chain, failure.message]
    if not failure.chain:
        words += [
            f"{log[1]}: {log[2]}"
            for line in failure.text.splitlines()
            if (log := _GO_LOG_LINE.fullmatch(line))
        ]
    return [w for w in words if w]


_GO_LOG_LINE = re.compile(r"\s+(\S+\.go:\d+): (.*)")
# What differs between two runs of one failure: memory addresses, object ids, temporary paths
# (pytest's tmp_path, tempfile's, eyeful's worktrees).
_VOLATILE = [
    (re.compile(r"\b0x[0-9a-fA-F]{4,}\b"), "0x?"),
    (re.compile(r"\b\d{10,}\b"), "<id>"),
    (re.compile(r"(?:/[^\s/'\"]+)*/pytest-of-[^\s/'\"]+/pytest-\d+"), "<tmp>"),
    (re.compile(rf"(?:/[^\s/'\"]+)*/{STATE_DIR}/{WORKTREES_DIR}/{WORKTREE_PREFIX}\d+"), "<tree>"),
    (re.compile(r"(?:/[^\s/'\"]+)*/tmp[a-z0-9_]{8}\b"), "<tmp>"),
    # tempfile's names with a prefix of the caller's (mkdtemp(prefix="tags-")): 8 random
    # characters at the end of a name directly in a temporary directory.
    (re.compile(r"(?:/[^\s/'\"]+)*/(?:tmp|TMP|temp|Temp)/[^\s/'\"]*?[a-z0-9_]{8}\b"), "<tmp>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b"), "<uuid>"),
    # `git describe`'s commit (v1.0-3-g96b7b3b): each side's checkout is its own commit.
    (re.compile(r"(?<=-)g[0-9a-f]{7,40}\b"), "g<commit>"),
]


def _normal(text: str) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return "\n".join(_norm(line) for line in text.splitlines() if line.strip())


# A number, with its sign and decimals, and its unit if any (`0.0101s`, `3ms`); the digits of a
# name (`v1`) are the name's.
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\d_])")


def _numbers_aside(text: str) -> str:
    return _NUMBER.sub("N", _normal(text))


def same_failure(a: Failure, b: Failure) -> bool:
    """Whether two failures are one: the same exception types, messages and raising frame (from
    a runner's record), or the same type, message and text (read from text), addresses, object
    ids, temporary paths and numbers aside (as :func:`cause`: a timestamp in a message differs
    on every run). Nothing to compare is no match."""
    if a.chain and b.chain:
        where = (a.raised_in, a.raised_line) == (b.raised_in, b.raised_line)
        return where and [_unordered(x) for x in a.chain] == [_unordered(x) for x in b.chain]
    if not a.text.strip() or a.chain or b.chain:
        return False
    said = (a.type, _numbers_aside(a.message), _numbers_aside(a.text))
    return said == (b.type, _numbers_aside(b.message), _numbers_aside(b.text))


_BRACED = re.compile(r"\{[^{}]*\}")


def _unordered(text: str) -> tuple[str, ...]:
    """An exception's text as one failure of it reads in any process: numbers aside, the items
    of a set or dict shown in braces, and the lines of pytest's explanation (``Extra items in
    the left set:``, ``Differing items:``), in sorted order: their order follows the process's
    string hashing, which differs from run to run."""
    first, *rest = _numbers_aside(text).splitlines() or [""]
    first = _BRACED.sub(lambda m: "{" + ", ".join(sorted(m[0][1:-1].split(", "))) + "}", first)
    return (first, *sorted(rest))


def cause(failure: Failure) -> str | None:
    """What failures of one cause share: the exception type, the raising location (file and
    line) and the message with addresses, object ids, temporary paths and numbers set aside
    (``assert 3 == 4`` and ``assert 5 == 6`` at one line are one cause). None when the failure
    says neither its type nor its message."""
    if not failure.type and not failure.message.strip():
        return None
    where = failure.in_repository or (
        f"{failure.raised_in}:{failure.raised_line or '?'}" if failure.raised_in else "?"
    )
    said = _numbers_aside(failure.message)
    return f"{failure.type or '?'} at {where}: {said}"


def ran_lines(ran: Mapping[str, list[int]]) -> list[str]:
    """Lines by file as a person reads them: ``mod.py:2-4,9``, one per file, in path order."""
    out = []
    for path, lines in sorted(ran.items()):
        spans: list[list[int]] = []
        for n in sorted(set(lines)):
            if spans and n == spans[-1][1] + 1:
                spans[-1][1] = n
            else:
                spans.append([n, n])
        out.append(path + ":" + ",".join(f"{a}-{b}" if b > a else f"{a}" for a, b in spans))
    return out


def report_cause(failure: Failure, ran: Mapping[str, list[int]] | None = None) -> str | None:
    """What the failures the report shows as one cause share (eyeful/causes.py; the verdicts'
    own is :func:`cause`). A test traced running some of the change's lines (``ran``): the
    exception type and those lines, whatever each test asserted (30 tests of one changed
    function are one cause). Else the type and the message, numbers and addresses aside,
    wherever it was raised (one warning raised from two frames is one cause); but pytest's
    explanation of a comparison (``assert 3 == 4``) is the test's own line, and an exception
    that says nothing but its type could come from anywhere, so those keep the raising line
    too. None when the failure says neither its type nor its message."""
    if ran:
        return f"{failure.type or '?'} after running {', '.join(ran_lines(ran))}"
    if not failure.type and not failure.message.strip():
        return None
    said = failure.message.removeprefix(f"{failure.type}: ") if failure.type else failure.message
    if said.startswith("assert ") or said.strip() in ("", failure.type):
        return cause(failure)  # the test's own line, or a bare type: where it was raised too
    return f"{failure.type or '?'}: {_numbers_aside(said)}"
