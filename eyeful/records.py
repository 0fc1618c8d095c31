"""Runner records: each test's outcome as the test runner itself knew it, not as read from its text.

The model every reader gives (:class:`RunRecord`) and what the readers share. Three readers
give one each:

- ``pytest_records.read_pytest`` reads what eyeful's pytest probe
  (``eyeful/data/probe/eyeful_probe_main.py``) wrote into a directory during the run: the real
  exception objects' chain, the raising frame, the collected ids, collection errors, whether the
  run got to its end. ``pytest_records.plugin_env`` gives the environment that loads the probe
  into a project's own pytest command.
- ``go_records.read_go_json`` reads ``go test -json`` output (with or without stderr mixed in).
- ``unittest_records.read_unittest`` reads ``python -m unittest -v`` output (its stderr).

Test ids are those the runner accepts back on its command line:

- pytest: node ids, as pytest wrote them (``tests/test_a.py::TestB::test_c[x y]``).
- go: ``<import path>.<TestName>`` with subtests after ``/`` as go names them (spaces made
  ``_``): ``example.com/m/a.TestParse/two_words``. A top-level test is a ``Test``, ``Fuzz``,
  ``Example`` or ``Benchmark`` function, so the package ends at the first ``.`` that is followed
  by such a name and then ``/`` or the end (``go_records.split_go_id``; given the run's
  packages it matches them exactly). ``go_records.go_test_args`` turns an id back into
  ``<pkg> -run ^TestX$/^sub$``.
- unittest: ``pkg.mod.TestCls.test_x``; a class whose ``setUpClass`` failed is
  ``pkg.mod.TestCls`` (phase ``setup``), a module whose ``setUpModule`` failed ``pkg.mod``.

Where a test was reported more than once (a teardown error after a pass; the same phase from two
processes) the worst outcome wins: error > failed (and xpass_strict) > passed > skipped.
"""

from __future__ import annotations

import json
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field

from eyeful.model import Model

__all__ = [
    "Captured",
    "ChainLink",
    "CollectError",
    "FailureRecord",
    "Frame",
    "Invocation",
    "Location",
    "Outcome",
    "Phase",
    "RunRecord",
    "TestRecord",
]

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed", "xpass_strict"]
Phase = Literal["setup", "call", "teardown", "crash"]
Runner = Literal["pytest", "go", "unittest"]


MAX_FILE_BYTES = 64 * 1024 * 1024  # of one process's record
MAX_TOTAL_BYTES = 256 * 1024 * 1024  # of one run's records, all processes
MAX_NOTES = 200
TEXT_CHARS = 4000  # of a failure's text (its end kept)
MESSAGE_CHARS = 2000
MAX_FRAMES = 50
MAX_LINE = 1024 * 1024  # a longer line of go or unittest output is cut

OUTCOMES: dict[str, Outcome] = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "skipped": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
    "xpass_strict": "xpass_strict",
}
PHASES: dict[str, Phase] = {
    "setup": "setup",
    "call": "call",
    "teardown": "teardown",
    "crash": "crash",
}
RANK: dict[str, int] = {
    "skipped": 0,
    "xfailed": 0,
    "passed": 1,
    "xpassed": 1,
    "failed": 2,
    "xpass_strict": 2,
    "error": 3,
}


class _Model(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChainLink(_Model):
    """One exception of a chain."""

    type: str
    """Qualified type name: ``ValueError``, ``pkg.errors.ParseError``; ``panic`` for Go."""
    message: str
    """``str(exc)``, bounded."""


class Location(_Model):
    file: str
    """Absolute for pytest and unittest; as go printed it (``a_test.go``) for a Go log line."""
    line: int


class Frame(_Model):
    file: str
    line: int
    function: str


class FailureRecord(_Model):
    """What a failure was."""

    chain: list[ChainLink] = Field(default_factory=list)
    """The exception that ended the test first, then its ``__cause__`` (else its ``__context__``
    unless suppressed), and so on. Empty where there was no exception (a Go ``t.Error``)."""
    crash_message: str | None = None
    """pytest's ``reprcrash.message`` (the exception line with pytest's assertion explanation);
    go's first log line of the test or its panic line; unittest's last exception line."""
    raised_in: Location | None = None
    """The innermost frame of the first exception (go: where ``t.Error`` was called, or the
    first frame of a panic outside the runtime and ``testing``)."""
    frames: list[Frame] = Field(default_factory=list)
    """The first exception's traceback, outermost first, at most 50 (the innermost kept)."""
    text: str = ""
    """The runner's rendering, for a person to read: pytest's report of the failure, go's output
    of the test, unittest's traceback, a collection error's report, a crash message. Bounded,
    its end kept."""


class Captured(_Model):
    """How much a test printed (characters, all phases), kept apart from its failure."""

    stdout: int = 0
    stderr: int = 0
    log: int = 0


class TestRecord(_Model):
    __test__: ClassVar[bool] = False  # not a pytest test class

    id: str
    outcome: Outcome
    phase: Phase
    """The phase that decided the outcome (``crash``: the process running it died)."""
    duration: float | None = None
    """Seconds, all phases."""
    failure: FailureRecord | None = None
    reason: str | None = None
    """A skip's or an xfail's reason."""
    captured: Captured | None = None


class CollectError(_Model):
    id: str
    """pytest: the collector's node id (``tests/test_b.py``); go: the package's import path;
    unittest: the module name that failed to import."""
    failure: FailureRecord


class Reached(_Model):
    """With the map asked for (EYEFUL_PROBE_MAP): what each test could see (eyeful/affected.py)."""

    tests: dict[str, list[str]]
    """The repository files each test's code ran in, opened or loaded, its fixtures' (whichever
    test set them up), its module's import and the session's included."""
    imports: dict[str, list[str]] = Field(default_factory=dict)
    """The import graph: each repository file's imports whose namespace it takes, static
    (``ast``) and what its import loaded (opened, compiled, ran), as repository files."""
    parents: dict[str, list[str]] = Field(default_factory=dict)
    """The packages each file's imports only pass through (``a`` of ``from a.b import c``):
    their ``__init__.py`` runs, what it imports is not taken."""
    everything: dict[str, str] = Field(default_factory=dict)
    """The tests whose run cannot be traced, and why: a child process, the tracer removed."""
    at_import: dict[str, list[int]] | None = None
    """The functions that ran outside any test (an import, a collection), by file: their first
    lines. None: not recorded (a coverage tool's map)."""


class MapPlace(_Model):
    """Where pytest ran, relative to the repository's root (``""``: the root; None: outside it):
    its rootdir, where its test ids start, and the directory it started in, where the paths
    given to it as arguments start."""

    rootdir: str | None = ""
    started: str | None = ""


class Invocation(_Model):
    """pytest's own parse of its command line (its main process's): which words it took as
    paths. A test command's ``test_one`` is derived from it (eyeful/focus.py)."""

    args: list[str]
    """The words pytest was given (``invocation_params.args``: after ``pytest`` or ``-m
    pytest``; not ``addopts`` nor ``PYTEST_ADDOPTS``)."""
    paths: list[int]
    """The positions in ``args`` of the words pytest's parser took as paths (``file_or_dir``),
    with every option it knew (its own, its plugins', the project's ``pytest_addoption``)."""


class RunRecord(_Model):
    runner: Runner
    collected: list[str] = Field(default_factory=list)
    """Ids in the order they were collected (pytest) or started (go, unittest)."""
    kinds: dict[str, str] = Field(default_factory=dict)
    """pytest: the item class of each collected test that is not a plain test function
    (``DoctestItem``, a plugin's item): its file may be the code under test itself."""
    tests: dict[str, TestRecord] = Field(default_factory=dict)
    collect_errors: list[CollectError] = Field(default_factory=list)
    collect_skips: dict[str, str] = Field(default_factory=dict)
    """Modules that skipped themselves while collected (pytest: ``importorskip`` at module
    level; unittest: ``SkipTest`` raised at import), by id, with the skip's reason: their tests
    are not collected."""
    finished: bool = False
    """The runner got to its end: pytest's main process (or xdist controller) wrote its finish
    line; every go package reported its result; unittest printed ``Ran N tests``."""
    exitstatus: int | None = None
    """pytest's exit status; None for go and unittest (their process's exit code tells)."""
    executed: dict[str, list[int]] | None = None
    """pytest, when asked to trace some lines (EYEFUL_PROBE_TRACE): those that ran, by file
    (absolute); None when not asked, or when it could not trace."""
    executed_at_import: dict[str, list[int]] = Field(default_factory=dict)
    """Of those lines, the ones that ran while the modules were collected (imported)."""
    executed_in_module: dict[str, dict[str, list[int]]] = Field(default_factory=dict)
    """Of those, by test module (absolute), the ones that ran in a function or class body while
    that module was collected: a decorator it applied, a class it defined."""
    entered: list[str] = Field(default_factory=list)
    """Of the files holding those lines, the ones whose code ran while a test ran (absolute)."""
    ran: dict[str, dict[str, list[int]]] = Field(default_factory=dict)
    """Of those lines, the ones each test ran (its setup, call, teardown), by test id and file
    (absolute); a test traced that ran none has an empty entry, one not traced none."""
    read_as_text: list[str] = Field(default_factory=list)
    looked_by_tests: list[str] = Field(default_factory=list)
    """Of those, the ones the tests' own files (a test module, a conftest.py, a helper beside
    them) looked at, not other code they handed a path."""
    edited_entered: bool = False
    """pytest, tracing: whether a function holding a changed line was entered, anywhere in the
    run (how it compiles may differ from the base's whichever of its lines ran)."""
    beyond_trace: bool = False
    """pytest, tracing: whether what the code did may rest on more than the lines traced: the
    tests started a child process (or forked one), a changed module was imported before tracing
    began (a plugin pytest loaded before the probe), or the changed code read a changed file
    (its own source)."""
    """Of the changed files, the ones a test's code looked at otherwise than by running them:
    read (``open``, ``inspect.getsource``, a loader's ``get_data``), ``os.stat``, a function's
    ``__code__``, a child process naming them."""
    looked: dict[str, str] = Field(default_factory=dict)
    """Of those, what the test did to each (absolute path -> the route, in a few words)."""
    reached: Reached | None = None
    """With the map asked for (EYEFUL_PROBE_MAP): what each test could see (eyeful/affected.py)."""
    reached_from: MapPlace = Field(default_factory=MapPlace)
    """Where pytest ran when it recorded that map."""
    rootdir: str | None = None
    """pytest: its rootdir (absolute), where its test ids start."""
    inifile: str | None = None
    """pytest: the configuration file it read (absolute), if any."""
    narrowed: str | None = None
    """What took tests out of the run it collected, in a few words, or None. pytest: a hook or
    `-k`/`-m` deselected them, pytest would not collect a test class; go: a package with tests
    ran none (its TestMain returned before running them)."""
    ended_early: str | None = None
    """go: a test binary ended during a test (a panic, `os.Exit`): the tests after it in that
    package never started, and go's record does not name them."""
    hidden: list[str] = Field(default_factory=list)
    """pytest: the tests whose function raised a failure and that were reported passed (a hook
    of the project passed them: a quarantine)."""
    unread: str | None = None
    """unittest: its summary counts more failures and errors than the record holds (a test's
    name the reader cannot read); pytest: one of a command's several sessions never ended. The
    record is no answer."""
    sandboxed: list[str] = Field(default_factory=list)
    """pytest under eyeful's sandbox: what the run tried that the sandbox refuses (a write
    outside, a connection), whatever the code made of the error."""
    imported: list[str] = Field(default_factory=list)
    """pytest: files of the modules imported outside the standard library and site-packages."""
    shadowed: dict[str, str] = Field(default_factory=dict)
    """pytest: the project's own top-level packages (named as a directory of the tree, or of its
    ``src``) imported from a file outside it, an installed copy: name -> that file."""
    outcome_hooks: list[str] = Field(default_factory=list)
    """pytest: the files (real paths) whose functions implement a hook that decides a test's
    outcome (a conftest, a plugin the project loads), outside the installed distributions."""
    left_out: list[str] = Field(default_factory=list)
    """pytest: the directories and Python files (real paths) its collection left out by the word
    of a conftest, a hook or a virtualenv's ``pyvenv.cfg``; not by the command line's
    ``--ignore`` or ``norecursedirs``."""
    invocation: Invocation | None = None
    """pytest: which words of its command line it took as paths (None: not recorded, or more
    than one pytest process led the run)."""
    notes: list[str] = Field(default_factory=list)
    """Anything odd: the probe's internal errors, a worker crash, a record cut short."""


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more chars]"


def cut_end(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"[{len(text) - limit} chars before] ..." + text[-limit:]


class Notes:
    def __init__(self) -> None:
        self.items: list[str] = []
        self.dropped = 0

    def add(self, note: str) -> None:
        if len(self.items) < MAX_NOTES:
            self.items.append(cut(note, 1000))
        else:
            self.dropped += 1

    def done(self) -> list[str]:
        if self.dropped:
            return [*self.items, f"{self.dropped} more notes left out"]
        return self.items


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_float(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def as_dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def record_of(
    runner: Runner,
    collected: list[str],
    tests: dict[str, TestRecord],
    errors: list[CollectError],
    finished: bool,
    notes: Notes,
    *,
    skips: dict[str, str] | None = None,
    narrowed: str | None = None,
    ended_early: str | None = None,
    unread: str | None = None,
) -> RunRecord:
    """A go or unittest run's record: no exit status or imported files (the process's exit code
    tells how it ended)."""
    return RunRecord(
        runner=runner,
        collected=collected,
        tests=tests,
        collect_errors=errors,
        collect_skips=skips or {},
        finished=finished,
        narrowed=narrowed,
        ended_early=ended_early,
        unread=unread,
        notes=notes.done(),
    )


def json_object(line: str | bytes) -> dict[str, object] | None:
    """A line of a JSON-lines stream as the object it holds; None if it holds none."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
