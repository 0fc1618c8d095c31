"""Runner records: each test's outcome as the test runner itself knew it, not as read from its text.

Three readers give one :class:`RunRecord` each:

- :func:`read_pytest` reads what eyeful's pytest probe (``eyeful/data/probe/eyeful_probe.py``)
  wrote into a directory during the run: the real exception objects' chain, the raising frame,
  the collected ids, collection errors, whether the run got to its end. :func:`plugin_env` gives
  the environment that loads the probe into a project's own pytest command.
- :func:`read_go_json` reads ``go test -json`` output (with or without stderr mixed in).
- :func:`read_unittest` reads ``python -m unittest -v`` output (its stderr).

Test ids are those the runner accepts back on its command line:

- pytest: node ids, as pytest wrote them (``tests/test_a.py::TestB::test_c[x y]``).
- go: ``<import path>.<TestName>`` with subtests after ``/`` as go names them (spaces made
  ``_``): ``example.com/m/a.TestParse/two_words``. A top-level test is a ``Test``, ``Fuzz``,
  ``Example`` or ``Benchmark`` function, so the package ends at the first ``.`` that is followed
  by such a name and then ``/`` or the end (:func:`split_go_id`; given the run's packages it
  matches them exactly). :func:`go_test_args` turns an id back into ``<pkg> -run ^TestX$/^sub$``.
- unittest: ``pkg.mod.TestCls.test_x``; a class whose ``setUpClass`` failed is
  ``pkg.mod.TestCls`` (phase ``setup``), a module whose ``setUpModule`` failed ``pkg.mod``.

Where a test was reported more than once (a teardown error after a pass; the same phase from two
processes) the worst outcome wins: error > failed (and xpass_strict) > passed > skipped.
"""

from __future__ import annotations

import ast
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "PROBE_DIR",
    "PROBE_MODULE",
    "Captured",
    "ChainLink",
    "CollectError",
    "FailureRecord",
    "Frame",
    "Location",
    "Outcome",
    "Phase",
    "RunRecord",
    "TestRecord",
    "go_test_args",
    "plugin_env",
    "read_go_json",
    "read_pytest",
    "read_unittest",
    "split_go_id",
]

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed", "xpass_strict"]
Phase = Literal["setup", "call", "teardown", "crash"]
Runner = Literal["pytest", "go", "unittest"]

PROBE_MODULE = "eyeful_probe"
PROBE_DIR = Path(__file__).resolve().parent / "data" / "probe"
"""The directory that holds only the probe module: put first on PYTHONPATH."""

MAX_FILE_BYTES = 64 * 1024 * 1024  # of one process's record
MAX_TOTAL_BYTES = 256 * 1024 * 1024  # of one run's records, all processes
MAX_NOTES = 200
TEXT_CHARS = 4000  # of a failure's text (its end kept)
MESSAGE_CHARS = 2000
MAX_FRAMES = 50
MAX_LINE = 1024 * 1024  # a longer line of go or unittest output is cut

_OUTCOMES: dict[str, Outcome] = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "skipped": "skipped",
    "xfailed": "xfailed",
    "xpassed": "xpassed",
    "xpass_strict": "xpass_strict",
}
_PHASES: dict[str, Phase] = {
    "setup": "setup",
    "call": "call",
    "teardown": "teardown",
    "crash": "crash",
}
_RANK: dict[str, int] = {
    "skipped": 0,
    "xfailed": 0,
    "passed": 1,
    "xpassed": 1,
    "failed": 2,
    "xpass_strict": 2,
    "error": 3,
}


class _Model(BaseModel):
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


class RunRecord(_Model):
    runner: Runner
    collected: list[str] = Field(default_factory=list)
    """Ids in the order they were collected (pytest) or started (go, unittest)."""
    tests: dict[str, TestRecord] = Field(default_factory=dict)
    collect_errors: list[CollectError] = Field(default_factory=list)
    finished: bool = False
    """The runner got to its end: pytest's main process (or xdist controller) wrote its finish
    line; every go package reported its result; unittest printed ``Ran N tests``."""
    exitstatus: int | None = None
    """pytest's exit status; None for go and unittest (their process's exit code tells)."""
    imported: list[str] = Field(default_factory=list)
    """pytest: files of the modules imported outside the standard library and site-packages."""
    notes: list[str] = Field(default_factory=list)
    """Anything odd: the probe's internal errors, a worker crash, a record cut short."""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more chars]"


def _cut_end(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"[{len(text) - limit} chars before] ..." + text[-limit:]


class _Notes:
    def __init__(self) -> None:
        self.items: list[str] = []
        self.dropped = 0

    def add(self, note: str) -> None:
        if len(self.items) < MAX_NOTES:
            self.items.append(_cut(note, 1000))
        else:
            self.dropped += 1

    def done(self) -> list[str]:
        if self.dropped:
            return [*self.items, f"{self.dropped} more notes left out"]
        return self.items


# --- the probe's environment ---


def plugin_env(probe_dir: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables to set on top of ``environ`` so that pytest loads the probe and records
    into ``probe_dir``: PYTEST_PLUGINS (``eyeful_probe`` appended to any plugins already there),
    PYTHONPATH (the probe's directory first), EYEFUL_PROBE_DIR, and EYEFUL_PROBE_SESSION emptied
    (so that a run started from inside another recorded run records too)."""
    plugins = [name.strip() for name in environ.get("PYTEST_PLUGINS", "").split(",")]
    plugins = [name for name in plugins if name]
    if PROBE_MODULE not in plugins:
        plugins.append(PROBE_MODULE)
    path = [str(PROBE_DIR)]
    path += [entry for entry in environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    return {
        "PYTEST_PLUGINS": ",".join(plugins),
        "PYTHONPATH": os.pathsep.join(path),
        "EYEFUL_PROBE_DIR": str(probe_dir),
        "EYEFUL_PROBE_SESSION": "",
    }


# --- pytest ---


class _Process:
    """One pytest process's lines."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.role = "main"
        self.worker: str | None = None
        self.pid = 0
        self.lines: list[dict[str, object]] = []
        self.finish: dict[str, object] | None = None


def _as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _as_float(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _as_dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _as_list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _read_process(path: Path, budget: int, notes: _Notes) -> tuple[_Process, int]:
    process = _Process(path.name)
    stem = path.stem.rsplit("-", 1)
    if len(stem) == 2 and stem[1] in ("main", "controller", "worker"):
        process.role = stem[1]
    limit = min(MAX_FILE_BYTES, budget)
    with path.open("rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        data = data[:limit]
        notes.add(f"{path.name}: record cut at {limit} bytes")
        data = data[: data.rfind(b"\n") + 1]
    raw_lines = data.split(b"\n")
    if raw_lines[-1]:
        notes.add(f"{path.name}: its last line is incomplete (the process was killed?)")
    for number, raw in enumerate(raw_lines[:-1], 1):
        try:
            line = json.loads(raw)
        except ValueError:
            notes.add(f"{path.name}:{number}: not a JSON line")
            continue
        if not isinstance(line, dict):
            continue
        kind = line.get("t")
        if kind == "start":
            process.role = _as_str(line.get("role")) or process.role
            process.worker = _as_str(line.get("worker"))
            process.pid = _as_int(line.get("pid")) or 0
        elif kind == "finish":
            process.finish = line
        process.lines.append(line)
    return process, len(data)


def _worker_key(process: _Process) -> tuple[int, int, str]:
    match = re.fullmatch(r"gw(\d+)", process.worker or "")
    return (int(match[1]) if match else 1 << 30, process.pid, process.name)


def _failure(value: object, text: str = "") -> FailureRecord:
    data = _as_dict(value)
    chain = []
    for link in _as_list(data.get("chain")):
        link = _as_dict(link)
        type_name, message = _as_str(link.get("type")), _as_str(link.get("message"))
        if type_name is not None:
            chain.append(ChainLink(type=type_name, message=message or ""))
    frames = []
    for frame in _as_list(data.get("frames"))[-MAX_FRAMES:]:
        frame = _as_dict(frame)
        file, line = _as_str(frame.get("file")), _as_int(frame.get("line"))
        if file is not None and line is not None:
            frames.append(
                Frame(file=file, line=line, function=_as_str(frame.get("function")) or "")
            )
    raised = _as_dict(data.get("raised_in"))
    file, line = _as_str(raised.get("file")), _as_int(raised.get("line"))
    return FailureRecord(
        chain=chain,
        crash_message=_as_str(data.get("crash_message")),
        raised_in=Location(file=file, line=line) if file is not None and line is not None else None,
        frames=frames,
        text=_cut_end(text, TEXT_CHARS),
    )


class _PhaseLine:
    def __init__(self, when: str, outcome: str, line: dict[str, object]) -> None:
        self.when = when
        self.outcome = outcome
        self.line = line


def _decide(phases: dict[str, _PhaseLine]) -> tuple[str, _PhaseLine] | None:
    """The test's outcome and the phase that decided it, or None when no phase decided yet."""
    candidates: list[tuple[str, _PhaseLine]] = []
    for when in ("setup", "call", "teardown", "crash"):
        phase = phases.get(when)
        if phase is None:
            continue
        outcome = phase.outcome
        if outcome == "failed" and when in ("setup", "teardown"):
            outcome = "error"
        if _RANK.get(outcome, 0) >= _RANK["failed"]:
            candidates.append((outcome, phase))
    if candidates:
        return max(candidates, key=lambda pair: _RANK[pair[0]])  # the first of the worst
    call = phases.get("call")
    if call is not None and call.outcome in _RANK:
        return call.outcome, call
    setup = phases.get("setup")
    if setup is not None and setup.outcome in ("skipped", "xfailed"):
        return setup.outcome, setup
    return None


def read_pytest(probe_dir: Path) -> RunRecord | None:
    """The run recorded by the probe in ``probe_dir``; None when it wrote nothing (not loaded,
    or pytest stopped before its session started: a usage error, a conftest that fails)."""
    try:
        paths = sorted(probe_dir.glob("*.jsonl"))
    except OSError:
        return None
    if not paths:
        return None
    notes = _Notes()
    processes: list[_Process] = []
    budget = MAX_TOTAL_BYTES
    for path in paths:
        if budget <= 0:
            notes.add(f"{path.name}: not read, the records passed {MAX_TOTAL_BYTES} bytes")
            continue
        try:
            process, size = _read_process(path, budget, notes)
        except OSError as error:
            notes.add(f"{path.name}: unreadable: {error}")
            continue
        budget -= size
        processes.append(process)
    leaders = [p for p in processes if p.role in ("main", "controller")]
    workers = sorted((p for p in processes if p.role == "worker"), key=_worker_key)
    leaders.sort(key=lambda p: (p.finish is None, p.pid))
    if len(leaders) > 1:
        notes.add(f"{len(leaders)} main processes recorded into one directory (reused?)")

    collected: dict[str, None] = {}
    phases: dict[str, dict[str, _PhaseLine]] = {}
    errors: dict[str, CollectError] = {}
    imported: set[str] = set()
    for process in [*leaders, *workers]:
        label = f"{process.role} {process.worker or process.pid}"
        for line in process.lines:
            kind = line.get("t")
            if kind == "collected":
                for node_id in _as_list(line.get("ids")):
                    if isinstance(node_id, str):
                        collected[node_id] = None
            elif kind in ("phase", "crash"):
                node_id = _as_str(line.get("id"))
                if node_id is None:
                    continue
                if kind == "crash":
                    when, outcome = "crash", "failed"
                    notes.add(f"{label}: {_as_str(line.get('message')) or 'worker crashed'}")
                else:
                    when = _as_str(line.get("when")) or "?"
                    outcome = _as_str(line.get("outcome")) or "?"
                if when not in ("setup", "call", "teardown", "crash") or outcome not in _RANK:
                    notes.add(f"{label}: {node_id}: unknown phase {when!r} outcome {outcome!r}")
                    continue
                test = phases.setdefault(node_id, {})
                seen = test.get(when)
                if seen is None or _RANK[outcome] > _RANK[seen.outcome]:
                    test[when] = _PhaseLine(when, outcome, line)
            elif kind == "collect_error":
                node_id = _as_str(line.get("id"))
                if node_id is not None and node_id not in errors:
                    text = _as_str(line.get("longrepr")) or ""
                    errors[node_id] = CollectError(
                        id=node_id, failure=_failure(line.get("failure"), text)
                    )
            elif kind == "imported":
                imported.update(f for f in _as_list(line.get("files")) if isinstance(f, str))
                total = _as_int(line.get("total"))
                if total is not None and total > len(_as_list(line.get("files"))):
                    notes.add(f"{label}: {total} imported files, the list was cut")
            elif kind == "internal_error":
                hook, problem = _as_str(line.get("hook")), _as_str(line.get("error"))
                notes.add(f"{label}: probe internal error in {hook}: {problem}")
            elif kind == "pytest_internal_error":
                notes.add(f"{label}: pytest INTERNALERROR: {_as_str(line.get('error'))}")
        if process.role == "worker" and process.finish is None:
            notes.add(f"worker {process.worker or process.pid} wrote no finish line")

    tests: dict[str, TestRecord] = {}
    for node_id, test in phases.items():
        decided = _decide(test)
        if decided is None:
            notes.add(f"{node_id}: started, no outcome recorded (the run ended during it?)")
            continue
        outcome, phase = decided
        if "teardown" not in test and "crash" not in test:
            notes.add(f"{node_id}: no teardown recorded")
        durations = [_as_float(p.line.get("dur")) for p in test.values()]
        failure: FailureRecord | None = None
        if _RANK[outcome] >= _RANK["failed"]:
            text = _as_str(phase.line.get("longrepr")) or ""
            if phase.when == "crash":
                text = _as_str(phase.line.get("message")) or ""
            elif outcome == "xpass_strict":
                text = _as_str(phase.line.get("reason")) or ""
            failure = _failure(phase.line.get("failure"), text)
        captured = None
        if any("captured" in p.line for p in test.values()):
            sums = {"stdout": 0, "stderr": 0, "log": 0}
            for p in test.values():
                counts = _as_dict(p.line.get("captured"))
                for key in sums:
                    sums[key] += _as_int(counts.get(key)) or 0
            captured = Captured(**sums)
        reason = _as_str(phase.line.get("reason")) if outcome != "xpass_strict" else None
        tests[node_id] = TestRecord(
            id=node_id,
            outcome=_OUTCOMES[outcome],
            phase=_PHASES[phase.when],
            duration=round(sum(d for d in durations if d is not None), 6),
            failure=failure,
            reason=reason,
            captured=captured,
        )
    finish = leaders[0].finish if leaders else None
    if not leaders:
        notes.add("no main process record: only workers wrote")
    return RunRecord(
        runner="pytest",
        collected=list(collected),
        tests=tests,
        collect_errors=list(errors.values()),
        finished=finish is not None,
        exitstatus=_as_int(finish.get("exitstatus")) if finish is not None else None,
        imported=sorted(imported),
        notes=notes.done(),
    )


# --- go test -json ---

_GO_TOP = r"(?:Test|Benchmark|Example|Fuzz)[^/.]*"
_GO_SPLIT = re.compile(r"\.(" + _GO_TOP + r"(?:/.*)?)$", re.DOTALL)
_GO_BUILD_HEADER = re.compile(r"# (\S+)(?: \[.*\])?")
_GO_PKG_FAIL = re.compile(r"FAIL\t(\S+) \[(build failed|setup failed)\]")
_GO_LOG = re.compile(r"\s+(\S+\.go):(\d+): (.*)")
_GO_FRAME_FILE = re.compile(r"\t(/.+?\.\w+):(\d+)(?: \+0x[0-9a-f]+)?")
_GO_ACTIONS: dict[str, Outcome] = {"pass": "passed", "fail": "failed", "skip": "skipped"}


def _go_internal(frame: Frame) -> bool:
    return frame.function == "panic" or frame.function.startswith(("runtime.", "testing."))


def split_go_id(test_id: str, packages: Iterable[str] = ()) -> tuple[str, str]:
    """``("example.com/m/a", "TestParse/sub")`` from ``example.com/m/a.TestParse/sub``.

    With the run's packages, the longest one the id starts with (then ``.``) is it; else the
    package ends at the first ``.`` followed by a ``Test``/``Benchmark``/``Example``/``Fuzz``
    name and then ``/`` or the end. ValueError when neither finds one.
    """
    best = ""
    for package in packages:
        if len(package) > len(best) and test_id.startswith(package + "."):
            best = package
    if best:
        return best, test_id[len(best) + 1 :]
    for match in re.finditer(r"\.", test_id):
        rest = test_id[match.end() :]
        if re.match(_GO_TOP + r"(?:/|$)", rest) and match.start() > 0:
            return test_id[: match.start()], rest
    raise ValueError(f"not a go test id: {test_id!r}")


def _go_quote(part: str) -> str:
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", part)


def go_test_args(test_id: str, packages: Iterable[str] = ()) -> list[str]:
    """``[pkg, "-run", "^TestX$/^sub$"]``: the ``go test`` arguments that run just that test."""
    package, name = split_go_id(test_id, packages)
    return [package, "-run", "/".join(f"^{_go_quote(part)}$" for part in name.split("/"))]


class _GoTest:
    def __init__(self, name: str) -> None:
        self.name = name
        self.outcome: str | None = None
        self.elapsed: float | None = None
        self.output: list[str] = []
        self.size = 0

    def add(self, text: str) -> None:
        self.output.append(text)
        self.size += len(text)
        while self.size > 4 * TEXT_CHARS and len(self.output) > 1:  # keep the end
            self.size -= len(self.output.pop(0))


class _GoPackage:
    def __init__(self, name: str) -> None:
        self.name = name
        self.tests: dict[str, _GoTest] = {}
        self.output = _GoTest("")
        self.build = _GoTest("")
        self.result: str | None = None
        self.failed_build = False


def _go_failure(output: str) -> FailureRecord:
    lines = output.splitlines()
    chain: list[ChainLink] = []
    message = None
    raised = None
    frames: list[Frame] = []
    for index, line in enumerate(lines):
        if line.startswith("panic: "):
            text = line[len("panic: ") :].removesuffix(" [recovered]")
            chain.append(ChainLink(type="panic", message=_cut(text, MESSAGE_CHARS)))
            message = message or line
            stack: list[Frame] = []
            function = None
            for later in lines[index + 1 :]:
                frame = _GO_FRAME_FILE.fullmatch(later)
                if frame and function is not None:
                    stack.append(Frame(file=frame[1], line=int(frame[2]), function=function))
                    function = None
                elif later and not later.startswith(("\t", " ", "goroutine ")):
                    function = re.sub(r"\(.*\)$", "", later.removeprefix("created by "))
            inner = [f for f in stack if not _go_internal(f)]
            if inner and raised is None:
                raised = Location(file=inner[0].file, line=inner[0].line)
            frames = list(reversed(stack))[-MAX_FRAMES:]
            break
        log = _GO_LOG.fullmatch(line)
        if log and message is None:
            message = _cut(f"{log[1]}:{log[2]}: {log[3]}", MESSAGE_CHARS)
            raised = Location(file=log[1], line=int(log[2]))
    return FailureRecord(
        chain=chain,
        crash_message=message,
        raised_in=raised,
        frames=frames,
        text=_cut_end(output, TEXT_CHARS),
    )


def read_go_json(lines: Iterable[str]) -> RunRecord:
    """The run that ``go test -json`` printed. Lines that are not JSON are read too: go 1.19-1.23
    print a build failure as ``FAIL\\t<pkg> [build failed]`` on stdout and the compiler's
    ``# <pkg>`` block on stderr, without any JSON event."""
    notes = _Notes()
    packages: dict[str, _GoPackage] = {}
    collected: list[str] = []
    build_target: _GoPackage | None = None
    events = 0

    def package_of(name: str) -> _GoPackage:
        package = packages.get(name)
        if package is None:
            package = packages[name] = _GoPackage(name)
        return package

    for raw in lines:
        line = raw[:MAX_LINE].rstrip("\r\n")
        event: object = None
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except ValueError:
                event = None
        if not isinstance(event, dict):
            header = _GO_BUILD_HEADER.fullmatch(line)
            failed = _GO_PKG_FAIL.fullmatch(line)
            if header:
                build_target = package_of(header[1])
            elif failed:
                package = package_of(failed[1])
                package.result, package.failed_build = "fail", True
                package.output.add(line + "\n")
                build_target = None
            elif build_target is not None and line:
                build_target.build.add(line + "\n")
            continue
        build_target = None
        events += 1
        action = _as_str(event.get("Action"))
        if action in ("build-output", "build-fail"):  # go 1.24+
            path = _as_str(event.get("ImportPath")) or ""
            package = package_of(path.split(" ")[0])
            if action == "build-output":
                package.build.add(_as_str(event.get("Output")) or "")
            continue
        name = _as_str(event.get("Package"))
        if name is None:
            continue
        package = package_of(name)
        test_name = _as_str(event.get("Test"))
        if test_name is None:
            if action == "output":
                package.output.add(_as_str(event.get("Output")) or "")
            elif action in ("pass", "fail", "skip"):
                package.result = action
                if event.get("FailedBuild"):
                    package.failed_build = True
            continue
        test = package.tests.get(test_name)
        if test is None:
            test = package.tests[test_name] = _GoTest(test_name)
            collected.append(f"{name}.{test_name}")
        if action == "output":
            test.add(_as_str(event.get("Output")) or "")
        elif action in ("pass", "fail", "skip"):
            test.outcome = action
            test.elapsed = _as_float(event.get("Elapsed"))

    tests: dict[str, TestRecord] = {}
    errors: list[CollectError] = []
    for package in packages.values():
        failed_tests = False
        for test in package.tests.values():
            test_id = f"{package.name}.{test.name}"
            output = "".join(test.output)
            if test.outcome is None:
                if package.result is None:
                    notes.add(f"{test_id}: started, no result (the run was cut short?)")
                    continue
                # The test binary died under it: a panic in another goroutine, os.Exit, timeout.
                failed_tests = True
                text = output + "".join(package.output.output)
                tests[test_id] = TestRecord(
                    id=test_id, outcome="failed", phase="crash", failure=_go_failure(text)
                )
                notes.add(f"{test_id}: no result of its own: the test binary ended during it")
                continue
            outcome = _GO_ACTIONS[test.outcome]
            reason = None
            if outcome == "skipped":
                log = next(filter(None, map(_GO_LOG.fullmatch, output.splitlines())), None)
                reason = log[3] if log else None
            failed_tests = failed_tests or outcome == "failed"
            tests[test_id] = TestRecord(
                id=test_id,
                outcome=outcome,
                phase="call",
                duration=test.elapsed,
                failure=_go_failure(output) if outcome == "failed" else None,
                reason=reason,
            )
        if package.result == "fail" and (package.failed_build or not failed_tests):
            # The package failed without a failing test: it did not build, TestMain or an
            # init function failed, or the binary exited before any test ended.
            text = "".join(package.build.output) + "".join(package.output.output)
            errors.append(CollectError(id=package.name, failure=_go_failure(text)))
    finished = bool(packages) and all(p.result is not None for p in packages.values())
    if events == 0 and not packages:
        notes.add("no go test -json event read")
    return RunRecord(
        runner="go",
        collected=collected,
        tests=tests,
        collect_errors=errors,
        finished=finished,
        notes=notes.done(),
    )


# --- python -m unittest -v ---

# "test_x (pkg.mod.TestCls.test_x)" (3.11+) or "test_x (pkg.mod.TestCls)" (older); a subtest adds
# " (i=1)" or " [msg]"; the description (a docstring's first line) may follow on the next line.
_UT_TEST = re.compile(r"(\w+) \(([\w.]+)\)")
_UT_RESULT = re.compile(
    r"(ok|FAIL|ERROR|expected failure|unexpected success|skipped (?:'.*'|\".*\"))\s*"
)
_UT_BLOCK = re.compile(r"(FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)(.*)")
_UT_RAN = re.compile(r"Ran (\d+) tests? in [\d.]+s")
_UT_FRAME = re.compile(r'  File "(.+)", line (\d+), in (.+)')
_UT_CHAINED = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)
_UT_FIXTURES = {
    "setUpClass": "setup",
    "tearDownClass": "teardown",
    "setUpModule": "setup",
    "tearDownModule": "teardown",
}
_UT_WORDS: dict[str, Outcome] = {
    "ok": "passed",
    "FAIL": "failed",
    "ERROR": "error",
    "expected failure": "xfailed",
    "unexpected success": "xpassed",
}


def _ut_id(name: str, inner: str) -> str:
    return inner if inner.endswith("." + name) or inner == name else f"{inner}.{name}"


def _ut_failure(text: str) -> FailureRecord:
    """The chain, frames and last exception line of a Python traceback as unittest printed it."""
    segments = re.split("|".join(re.escape(s) for s in _UT_CHAINED), text)
    chain: list[ChainLink] = []
    frames: list[Frame] = []
    for segment in segments:
        seg_frames: list[Frame] = []
        exception: list[str] = []
        after_frames = False
        for line in segment.splitlines():
            frame = _UT_FRAME.fullmatch(line)
            if frame:
                seg_frames.append(Frame(file=frame[1], line=int(frame[2]), function=frame[3]))
                after_frames, exception = True, []
            elif line.startswith("    ") and after_frames and not exception:
                continue  # the frame's source line, its carets
            elif after_frames and line.strip():
                if line.startswith(("Stdout:", "Stderr:")):
                    break  # -b's captured output
                exception.append(line)
        if exception:
            first = exception[0]
            type_name, _, message = first.partition(": ")
            message = "\n".join([message, *exception[1:]]).strip()
            chain.append(ChainLink(type=type_name.strip(), message=_cut(message, MESSAGE_CHARS)))
            frames = seg_frames
    chain.reverse()  # printed cause first: the last one printed is the one that ended the test
    last = frames[-1] if frames else None
    crash = None
    if chain:
        crash = _cut(f"{chain[0].type}: {chain[0].message}".removesuffix(": "), MESSAGE_CHARS)
    return FailureRecord(
        chain=chain,
        crash_message=crash,
        raised_in=Location(file=last.file, line=last.line) if last else None,
        frames=frames[-MAX_FRAMES:],
        text=_cut_end(text, TEXT_CHARS),
    )


def read_unittest(text: str) -> RunRecord:
    """The run that ``python -m unittest -v`` printed on stderr: each test's line
    (``test_x (pkg.mod.TestCls.test_x) ... ok``), then the FAIL and ERROR blocks with their
    tracebacks. What a test prints to stderr can come between its name and its result; a
    result is still read from the start of a later line. A module that failed to import
    (unittest's ``_FailedTest``) is a collection error."""
    notes = _Notes()
    lines = [line[:MAX_LINE] for line in text.splitlines()]
    outcomes: dict[str, tuple[Outcome, str | None]] = {}
    collected: list[str] = []
    pending: str | None = None
    index = 0
    # The verbose listing: everything before the first block or "Ran N tests".
    while index < len(lines):
        line = lines[index]
        if line.startswith(("=" * 70, "-" * 70)) or _UT_RAN.fullmatch(line):
            break
        index += 1
        rest = line
        while rest:
            test = _UT_TEST.match(rest.lstrip())
            if test is not None and not rest.startswith(" "):
                test_id = _ut_id(test[1], test[2])
                if test_id not in collected and not test[2].startswith("unittest.loader."):
                    collected.append(test_id)
                pending = test_id
                rest = rest.lstrip()[test.end() :]
                _, dots, rest = rest.partition(" ... ")
                if not dots:  # its description is on the next line
                    break
                continue
            if test is not None:  # "  test_x (...) (i=1) ... FAIL": a subtest
                _, dots, result = rest.partition(" ... ")
                parent = _ut_id(test[1], test[2])
                word = _UT_RESULT.fullmatch(result)
                if dots and word and parent in collected:
                    sub_outcome = _UT_WORDS.get(word[1])
                    if sub_outcome == "failed" or sub_outcome == "error":
                        outcomes[parent] = (sub_outcome, None)
                break
            if pending is None:
                break
            _, dots, after = rest.rpartition(" ... ")
            word = _UT_RESULT.fullmatch(after if dots else rest)
            if word is None:
                break  # the test's own output
            found = word[1]
            if found.startswith("skipped "):
                try:
                    why = str(ast.literal_eval(found[len("skipped ") :]))
                except (ValueError, SyntaxError):
                    why = found[len("skipped ") :]
                outcomes[pending] = ("skipped", why)
            else:
                outcomes.setdefault(pending, (_UT_WORDS[found], None))
            pending = None
            break

    # The blocks: "=====", "FAIL: test_x (pkg.mod.T.test_x)", "-----", the traceback.
    failures: dict[str, FailureRecord] = {}
    errors: list[CollectError] = []
    tests: dict[str, TestRecord] = {}
    finished = False
    while index < len(lines):
        line = lines[index]
        index += 1
        if _UT_RAN.fullmatch(line):
            finished = True
            continue
        block = _UT_BLOCK.fullmatch(line)
        if block is None or index >= len(lines) or not lines[index].startswith("-" * 70):
            continue
        index += 1
        body: list[str] = []
        while index < len(lines) and not lines[index].startswith("=" * 70):
            if _UT_RAN.fullmatch(lines[index]):
                break
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if lines[index].startswith("-" * 70) and _UT_RAN.fullmatch(following):
                break
            body.append(lines[index])
            index += 1
        kind, name, inner = block[1], block[2], block[3]
        failure = _ut_failure("\n".join(body).strip("\n"))
        if inner.startswith("unittest.loader._FailedTest"):
            errors.append(CollectError(id=name, failure=failure))
            continue
        if name in _UT_FIXTURES and not inner.endswith("." + name):
            tests[inner] = TestRecord(
                id=inner,
                outcome="error",
                phase=_PHASES[_UT_FIXTURES[name]],
                failure=failure,
            )
            continue
        test_id = _ut_id(name, inner)
        if kind == "UNEXPECTED SUCCESS":
            continue
        failures.setdefault(test_id, failure)  # a subtest's block: its first
        block_outcome: Outcome = "failed" if kind == "FAIL" else "error"
        previous = outcomes.get(test_id)
        if previous is None or _RANK[block_outcome] > _RANK[previous[0]]:
            outcomes[test_id] = (block_outcome, None)
        if test_id not in collected:
            collected.append(test_id)

    for test_id in collected:
        if test_id not in outcomes:
            notes.add(f"{test_id}: no result read")
            continue
        outcome, test_reason = outcomes[test_id]
        tests[test_id] = TestRecord(
            id=test_id,
            outcome=outcome,
            phase="call",
            failure=failures.get(test_id) if outcome in ("failed", "error") else None,
            reason=test_reason,
        )
    return RunRecord(
        runner="unittest",
        collected=collected,
        tests=tests,
        collect_errors=errors,
        finished=finished,
        notes=notes.done(),
    )
