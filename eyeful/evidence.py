"""What a test run says, read from the runner's own record (eyeful/records.py).

A run's outcomes, failures and coverage come from the record when there is one: eyeful's probe
inside pytest, ``go test -json``, unittest's verbose lines. Only a run with no record is read from
its text (eyeful/results.py, eyeful/failures.py), and the run says so (``tests_from = "output"``
or ``"junit"``): the text readers are the labelled fallback.

From a record:

- outcomes are the runner's: an expected failure is ``xfailed`` (a known failure, never a pass),
  a strict unexpected pass ``xpass_strict`` (a question: the change may have fixed a known bug);
- a module that failed to collect is a failing "test" of its own id (``tests/test_b.py``), with
  its import error as the failure, while the rest of the suite still runs;
- a test skipped because the repository's own module could not be imported (``importorskip``)
  failed: that import is the change's to answer for (``own_import_failed``);
- the run covered what it collected: a collected test with no outcome means the run stopped
  before it (``stopped``); a pytest session that never reached its end (killed, ``os._exit``)
  is no result at all (``unfinished``), never a pass.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Literal

from eyeful import failures as failures_
from eyeful.completeness import UNITTEST_UNFINISHED
from eyeful.records import FailureRecord, RunRecord

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed", "xpass_strict"]
FAILING: frozenset[str] = frozenset({"failed", "error", "xpass_strict"})
Source = Literal["probe", "go-json", "unittest", "junit", "output"]
_SOURCES: dict[str, Source] = {"pytest": "probe", "go": "go-json", "unittest": "unittest"}


@dataclass
class Reading:
    """What one run's record says, in the terms a :class:`eyeful.runs.Run` keeps."""

    source: Source
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    failures: dict[str, failures_.Failure] = field(default_factory=dict)
    collected: list[str] = field(default_factory=list)
    kinds: dict[str, str] = field(default_factory=dict)
    executed: dict[str, list[int]] | None = None
    """The traced lines that ran while a test ran, by repository path (eyeful/hunks.py)."""
    executed_at_import: dict[str, list[int]] = field(default_factory=dict)
    """Those that ran while the modules were collected."""
    executed_in_module: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    """Of those, by test module: the ones run in a function or class body while it was collected."""
    entered: list[str] = field(default_factory=list)
    """The changed files whose code ran while a test ran."""
    ran: dict[str, dict[str, list[int]]] | None = None
    """The traced lines each test ran, by test id and repository path (a test not traced has
    no entry)."""
    read_as_text: list[str] = field(default_factory=list)
    looked_by_tests: list[str] = field(default_factory=list)
    beyond_trace: bool = False
    edited_entered: bool = False
    """The changed files a test's code looked at otherwise than by running them."""
    looked: dict[str, str] = field(default_factory=dict)
    """What it did to each of them."""
    outcome_hooks: list[str] = field(default_factory=list)
    """The files whose functions implemented an outcome hook (as the repository names them)."""
    left_out: list[str] = field(default_factory=list)
    """What collection left out by a conftest's or a hook's word (as the repository names it)."""
    hidden: list[str] = field(default_factory=list)
    """The tests that failed and were reported passed (records.RunRecord.hidden)."""
    stopped: str | None = None
    skips: dict[str, str] = field(default_factory=dict)
    """Each skipped test's reason, as the runner gave it."""
    none_ran: bool = False
    unfinished: str | None = None
    """Why the record is no result: the run never got to its end."""


def _relative(path: str, root: Path | None) -> str:
    """A frame's file as the repository names it, when it is in the checkout; an installed
    library's as ``<site-packages>/...``, the same whichever worktree's virtualenv ran it."""
    if root is None:
        return path
    try:
        return PurePath(os.path.realpath(path)).relative_to(root).as_posix()
    except ValueError:
        return _SITE_PACKAGES.sub("<site-packages>/", path.replace("\\", "/"), count=1)


_SITE_PACKAGES = re.compile(r"^.*?/(?:site|dist)-packages/")


def failure_of(
    record: FailureRecord,
    *,
    collection: bool = False,
    root: Path | None = None,
    sources: dict[str, list[str] | None] | None = None,
) -> failures_.Failure:
    """A record's failure as the rest of eyeful keeps one: the exception that ended the test
    (its type and message from the exception object), where it was raised (a path in the
    repository when it is in the checkout ``root``), the frames, and the runner's text."""
    first = record.chain[0] if record.chain else None
    exc_type = first.type.rsplit(".", 1)[-1] if first is not None else None
    message = record.crash_message or (first.message if first is not None else "")
    if first is not None and exc_type and not message.startswith(exc_type):
        message = f"{exc_type}: {first.message}" if first.message else exc_type
    chain = [f"{link.type}: {link.message}" for link in record.chain]
    lines = [record.crash_message] if record.crash_message else []
    text = record.text or "\n".join(dict.fromkeys([*lines, *chain]) or [message])
    raised = record.raised_in.file if record.raised_in is not None else None
    return failures_.Failure(
        type=exc_type,
        message=message.splitlines()[0] if message else "",
        text=text[-failures_.TEXT_CHARS :],
        raised_in=_relative(raised, root) if raised is not None else None,
        raised_line=record.raised_in.line if record.raised_in is not None else None,
        frames=[_relative(frame.file, root) for frame in record.frames][-30:],
        stack=[f"{_relative(frame.file, root)}:{frame.line}" for frame in record.frames][-30:],
        in_repository=_innermost_in(root, record),
        kind=failures_.kind_of(exc_type, message, record.text, collection),
        source="probe",
        chain=chain,
        # A module that did not import: pytest's text shows the line at fault (a SyntaxError's
        # caret), its frames only the import machinery.
        excerpt="" if collection else _excerpt(record, message, root, sources),
    )


EXCERPT_LINES = 15
"""The most lines of a failure's excerpt, from a record or from text, JSON and markdown."""
_MESSAGE_LINES = 6
_LINE_CHARS = 300


def _excerpt(
    record: FailureRecord,
    message: str,
    root: Path | None,
    sources: dict[str, list[str] | None] | None,
) -> str:
    """The failure as the report shows it, at most 15 lines: the failing frames (the
    repository's, and the innermost wherever it is), outermost first, each ``path:line in
    function`` and its line of source, then the exception (its first lines) and what caused it
    (a line each): never the runner's rendering (pytest's long form echoes whole test bodies).
    "" without frames (the runner's text stands in)."""
    if not record.frames or root is None:
        return ""
    sources = {} if sources is None else sources
    said = [line[:_LINE_CHARS] for line in message.splitlines()[:_MESSAGE_LINES]]
    said += [f"caused by {link.type}: {_first_line(link.message)}"[:_LINE_CHARS]
             for link in record.chain[1:3]]  # fmt: skip
    shown: list[str] = []
    frames = list(record.frames)
    budget = EXCERPT_LINES - len(said)
    for index in range(len(frames) - 1, -1, -1):
        frame = frames[index]
        path = _relative(frame.file, root)
        own = path != frame.file and not path.startswith("<")
        if not own and index != len(frames) - 1:
            continue  # a library's frame between the repository's: its innermost one is shown
        entry = [f"{path}:{frame.line} in {frame.function or '?'}"]
        source = _source_line(root, path, frame.line, sources) if own else None
        if source:
            entry.append(f"    {source[:_LINE_CHARS]}")
        if len(entry) > budget - 1:  # a line kept for saying what is left out
            shown.insert(0, f"... {index + 1} frame{'s' if index else ''} before")
            break
        shown[:0] = entry
        budget -= len(entry)
    return "\n".join([*shown, *said])


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _source_line(
    root: Path, path: str, line: int, sources: dict[str, list[str] | None]
) -> str | None:
    """Line ``line`` of the repository's file ``path`` in the checkout, stripped."""
    if path not in sources:
        sources[path] = _regular_file_lines(root / path)
    lines = sources[path]
    if lines is None or not 0 < line <= len(lines):
        return None
    return lines[line - 1].strip() or None


def _regular_file_lines(path: Path) -> list[str] | None:
    """A regular file's lines (its first 4 MiB), never waited on: what a run left at that path
    may be a FIFO or a device (code nobody confirmed ran there)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO, a device, a directory
            return None
        data = os.read(fd, 4 * 1024 * 1024)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace").splitlines()


def _innermost_in(root: Path | None, record: FailureRecord) -> str | None:
    """``file:line`` of the record's innermost frame in the checkout ``root``."""
    for frame in reversed(record.frames):
        path = _relative(frame.file, root) if root is not None else frame.file
        if root is not None and path != frame.file and not path.startswith("<"):
            return f"{path}:{frame.line}"
    return None


def read(record: RunRecord, root: Path | None = None) -> Reading:
    """A run's outcomes, failures and coverage from its runner's record."""
    reading = Reading(
        source=_SOURCES[record.runner], collected=list(record.collected), kinds=dict(record.kinds)
    )
    if record.executed is not None:
        reading.executed = {_relative(p, root): lines for p, lines in record.executed.items()}
        reading.executed_at_import = {
            _relative(p, root): lines for p, lines in record.executed_at_import.items()
        }
        reading.executed_in_module = {
            _relative(module, root): {_relative(p, root): lines for p, lines in found.items()}
            for module, found in record.executed_in_module.items()
        }
        reading.entered = [_relative(p, root) for p in record.entered]
        reading.ran = {
            test: {_relative(p, root): lines for p, lines in found.items()}
            for test, found in record.ran.items()
        }
    # What the tests looked at holds where tracing stopped too (a test took the tracer away).
    reading.read_as_text = [_relative(p, root) for p in record.read_as_text]
    reading.looked_by_tests = [_relative(p, root) for p in record.looked_by_tests]
    reading.outcome_hooks = [_relative(p, root) for p in record.outcome_hooks]
    reading.left_out = [_relative(p, root) for p in record.left_out]
    reading.hidden = list(record.hidden)
    reading.beyond_trace = record.beyond_trace
    reading.edited_entered = record.edited_entered
    reading.looked = {_relative(p, root): how for p, how in record.looked.items()}
    sources: dict[str, list[str] | None] = {}  # the files the failing frames are in, read once
    for test_id, test in record.tests.items():
        reading.outcomes[test_id] = test.outcome
        if test.failure is not None and test.outcome in FAILING:
            reading.failures[test_id] = failure_of(test.failure, root=root, sources=sources)
        if test.outcome == "skipped":
            reading.skips[test_id] = test.reason or ""
            own = own_import_failed(test.reason or "", root)
            if own is not None:
                reading.outcomes[test_id], reading.failures[test_id] = "failed", own
    for module, reason in record.collect_skips.items():
        own = own_import_failed(reason, root)
        if own is not None:  # its import failing is a collection error of the module
            reading.outcomes[module], reading.failures[module] = "error", own
        elif module not in reading.outcomes:
            reading.outcomes[module], reading.skips[module] = "skipped", reason
    for error in record.collect_errors:
        reading.outcomes[error.id] = "error"
        reading.failures[error.id] = failure_of(
            error.failure, collection=True, root=root, sources=sources
        )
    if record.unread is not None:
        reading.unfinished = record.unread
    elif record.runner == "pytest" and not record.finished and not record.collected:
        reading.unfinished = (
            "pytest ended before it collected any test (its process exited while pytest "
            "started: a sys.exit() or os._exit() in a conftest.py, a plugin or what they "
            "import, say), so the run says nothing about the tests"
        )
    elif record.runner == "pytest" and not record.finished:
        reading.unfinished = (
            f"the pytest session never reached its end after {len(record.tests)} of "
            f"{len(record.collected)} collected tests (the process was killed or exited "
            "early, as with os._exit), so the run says nothing about the tests"
        )
    failing = sorted(t for t, test in record.tests.items() if test.outcome in FAILING)
    if record.runner == "pytest" and record.exitstatus == 0 and failing:
        # pytest saw every test pass (its own exit status), the record says one failed: a record
        # written by something other than pytest's reports (the code under test) judges nothing.
        reading.unfinished = (
            f"the record disagrees with pytest's exit status: {failing[0]} is recorded as "
            "failing, but pytest exited 0, so the run says nothing about the tests"
        )
    missing = [t for t in record.collected if t not in record.tests]
    if missing and reading.unfinished is None:
        reading.stopped = (
            f"{len(missing)} of {len(record.collected)} collected tests did not run "
            f"(the first: {missing[0]})"
        )
    elif record.ended_early and reading.unfinished is None:
        reading.stopped = record.ended_early  # go names no test it did not start
    elif record.runner == "unittest" and not record.finished:
        # unittest names only the tests it started: without its summary, the process ended
        # before unittest did, maybe before tests it never named.
        reading.unfinished = UNITTEST_UNFINISHED
    reading.none_ran = record.finished and not record.collected and not record.collect_errors
    return reading


# pytest.importorskip's reason: "could not import 'name': <the ImportError>".
_IMPORTORSKIP = re.compile(r"could not import '(?P<module>[\w.]+)': (?P<error>.+)", re.DOTALL)


def own_import_failed(reason: str, root: Path | None) -> failures_.Failure | None:
    """A skip because the repository's own module could not be imported is that module's import
    failing: a failure (the change may have broken it), never a skip. A module is the
    repository's own when its top package is in the checkout ``root`` (or its ``src/``)."""
    found = _IMPORTORSKIP.search(reason)
    if found is None or root is None:
        return None
    top = found["module"].split(".")[0]
    places = [root / top, root / f"{top}.py", root / "src" / top, root / "src" / f"{top}.py"]
    if not any(place.exists() for place in places):
        return None
    error = found["error"].strip().splitlines()[0]
    exc_type, _, _ = error.partition(":")
    return failures_.Failure(
        type=exc_type if exc_type.isidentifier() else "ImportError",
        message=f"skipped: the repository's own module `{found['module']}` could not be "
        f"imported ({error})"[:300],
        text=reason[-failures_.TEXT_CHARS :],
        kind="collection",
        source="probe",
        chain=[error],
    )


def module_seen(collected: list[str], outcomes: dict[str, Outcome], module: str) -> str | None:
    """What a run says of a module id (``tests/test_b.py``, no ``::``; unittest's dotted
    ``tests.test_b``; a Go package's import path): ``failed`` when it did not collect (build),
    ``passed`` when it collected tests, None when the run has nothing of it."""
    if outcomes.get(module) == "error":
        return "failed"
    prefixes = (module + "::",) if module.endswith(".py") else (module + "::", module + ".")
    if any(t.startswith(prefixes) for t in collected):
        return "passed"
    return None


def looked_words(path: str, how: str | None) -> str:
    """What a test did to a changed file otherwise than run it, in the report's words (the
    probe's ``how``): ``read calc.py as text``, ``took the size or times of calc.py``."""
    if how is None or how == "read":
        return f"read {path} as text"
    return f"{how} {path}"
