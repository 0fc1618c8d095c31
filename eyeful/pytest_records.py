"""pytest's record of a run, written by eyeful's probe (``eyeful/data/probe/eyeful_probe_main.py``).

:func:`plugin_env` gives the environment that loads the probe into a project's own pytest
command; :func:`read_pytest` reads the per-process files it wrote into one
:class:`~eyeful.records.RunRecord`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from eyeful import records
from eyeful.probeload import LOADER_VAR, PROBE_DIR, PROBE_MODULE
from eyeful.records import ChainLink, FailureRecord, Frame, Location, TestRecord
from eyeful.textsafe import uncoloured

TRACE_VAR = "EYEFUL_PROBE_TRACE"
MAP_VAR = "EYEFUL_PROBE_MAP"
IMPORTS_VAR = "EYEFUL_PROBE_IMPORTS"
"""With MAP_VAR: the file where the probe keeps the parsed sources of the map's import graph."""
SANDBOX_VAR = "EYEFUL_PROBE_SANDBOX"
FD_VAR = "EYEFUL_PROBE_FD"
"""Under the sandbox: the places the run may write (os.pathsep-joined); the probe records what
it tried beyond them."""
"""Names a JSON file of {absolute path: [line, ...]}: the lines whose running the probe records."""


RECORD = "record-main.jsonl"
"""The main pytest process's record in the probe directory: eyeful opens it (:func:`open_record`)
and the command inherits the descriptor."""


def open_record(probe_dir: Path) -> tuple[int, str]:
    """The record file's descriptor for the command to inherit, and the EYEFUL_PROBE_FD value
    that names it (``fd:device:inode``: a process that has another file at that number, one
    started by Python's subprocess which closes descriptors, writes by the path instead). A file,
    not the directory: through a directory's descriptor, ``..`` leads out of the sandbox's
    read-only view."""
    fd = os.open(probe_dir / RECORD, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    info = os.fstat(fd)
    return fd, f"{fd}:{info.st_dev}:{info.st_ino}"


def plugin_env(
    probe_dir: Path, environ: Mapping[str, str], record: str | None = None, *,
    addopts: bool = False,
) -> dict[str, str]:  # fmt: skip
    """The variables to set on top of ``environ`` so that pytest loads the probe and records
    into ``probe_dir``: PYTEST_PLUGINS (``eyeful_probe`` appended to any plugins already there),
    with ``addopts`` PYTEST_ADDOPTS (``-p eyeful_probe`` after what is there: a command that sets
    PYTEST_PLUGINS itself still loads it; only then, as ``-p`` makes every run some 15% slower),
    PYTHONPATH (the probe's directory first; where a command replaces
    it: eyeful/probeload.py), EYEFUL_PROBE_DIR, and EYEFUL_PROBE_FD (``record``:
    :func:`open_record`), through which the main pytest process writes (the directory may then
    be read-only where the tests run: the sandbox). The probe takes its own variables out of the
    environment before any test code runs."""
    plugins = [name.strip() for name in environ.get("PYTEST_PLUGINS", "").split(",")]
    plugins = [name for name in plugins if name]
    if PROBE_MODULE not in plugins:
        plugins.append(PROBE_MODULE)
    path = [str(PROBE_DIR)]
    path += [entry for entry in environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    named = environ.get("PYTEST_ADDOPTS", "")
    if addopts and f"-p {PROBE_MODULE}" not in named:
        named = " ".join(filter(None, [named, f"-p {PROBE_MODULE}"]))
    more = {"PYTEST_ADDOPTS": named} if addopts else {}
    return {
        "PYTEST_PLUGINS": ",".join(plugins),
        **more,
        "PYTHONPATH": os.pathsep.join(path),
        "EYEFUL_PROBE_DIR": str(probe_dir),
        FD_VAR: record or "",
        TRACE_VAR: "",  # traced only when asked (eyeful/testrun.py)
        MAP_VAR: "",  # mapped only when asked (a full suite run: eyeful/affected.py)
        IMPORTS_VAR: "",
        SANDBOX_VAR: "",
        LOADER_VAR: "",
    }


class _Process:
    """One pytest process's lines."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.role = "main"
        self.worker: str | None = None
        self.pid = 0
        self.lines: list[dict[str, object]] = []
        self.finish: dict[str, object] | None = None
        self.ended = False  # pytest_unconfigure's ``end`` came after the finish
        self.loaded = False  # its ``loaded`` line: pytest imported the probe
        self.args: list[str] = []  # its command line (``loaded``'s, then ``start``'s)


def _read_processes(path: Path, budget: int, notes: records.Notes) -> tuple[list[_Process], int]:
    """The processes that wrote ``path``: one, or (the record eyeful opened, which every pytest
    a command starts in a row inherits) one per ``start`` line."""
    process = _Process(path.name)
    stem = path.stem.rsplit("-", 1)
    if len(stem) == 2 and stem[1] in ("main", "controller", "worker"):
        process.role = stem[1]
    processes = [process]
    limit = min(records.MAX_FILE_BYTES, budget)
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
        if (kind == "start" and process.pid) or (
            kind == "loaded" and (process.pid or process.loaded)
        ):
            process = _Process(path.name)
            processes.append(process)
        if kind in ("loaded", "start"):
            process.args = [a for a in records.as_list(line.get("args")) if isinstance(a, str)]
        if kind == "loaded":  # pytest imported the probe; a process that never started ends here
            process.loaded = True
        elif kind == "start":
            process.role = records.as_str(line.get("role")) or process.role
            process.worker = records.as_str(line.get("worker"))
            process.pid = records.as_int(line.get("pid")) or 0
        elif kind == "finish":
            process.finish, process.ended = line, False
        elif kind == "end":
            process.ended = process.finish is not None
        process.lines.append(line)
    # A process that wrote only that its pytest is too old (or nothing) recorded no run; one
    # that wrote only that pytest loaded the probe ended before its session: a run that never
    # ended (a record without a finish), never one without a record (read from its text).
    kept = [
        p for p in processes
        if p.pid or (p.lines and not any(x.get("t") == "unsupported" for x in p.lines))
    ]  # fmt: skip
    return kept, len(data)


_INFORMS = frozenset(
    {"--version", "-V", "--help", "-h", "--markers", "--fixtures", "--funcargs",
     "--fixtures-per-test"}
)  # fmt: skip
"""pytest's options that print and end without a session of tests."""


def _informs(process: _Process) -> bool:
    """A pytest process asked only to print something (its version, help, markers)."""
    return any(arg in _INFORMS for arg in process.args)


def _worker_key(process: _Process) -> tuple[int, int, str]:
    match = re.fullmatch(r"gw(\d+)", process.worker or "")
    return (int(match[1]) if match else 1 << 30, process.pid, process.name)


def _failure(value: object, text: str = "") -> FailureRecord:
    data = records.as_dict(value)
    chain = []
    for link in records.as_list(data.get("chain")):
        link = records.as_dict(link)
        type_name, message = records.as_str(link.get("type")), records.as_str(link.get("message"))
        if type_name is not None:
            chain.append(ChainLink(type=type_name, message=uncoloured(message or "")))
    frames = []
    for frame in records.as_list(data.get("frames"))[-records.MAX_FRAMES :]:
        frame = records.as_dict(frame)
        file, line = records.as_str(frame.get("file")), records.as_int(frame.get("line"))
        if file is not None and line is not None:
            frames.append(
                Frame(file=file, line=line, function=records.as_str(frame.get("function")) or "")
            )
    raised = records.as_dict(data.get("raised_in"))
    file, line = records.as_str(raised.get("file")), records.as_int(raised.get("line"))
    crash = records.as_str(data.get("crash_message"))
    return FailureRecord(
        chain=chain,
        crash_message=None if crash is None else uncoloured(crash),
        raised_in=Location(file=file, line=line) if file is not None and line is not None else None,
        frames=frames,
        text=records.cut_end(uncoloured(text), records.TEXT_CHARS),
    )


class _PhaseLine:
    def __init__(self, when: str, outcome: str, line: dict[str, object]) -> None:
        self.when = when
        self.outcome = outcome
        self.line = line


_NARROWED = (
    ("deselected", "{} deselected"),
    ("uncollected", "{} not collected (PytestCollectionWarning)"),
    ("dropped", "{} taken out by a collection hook"),
    ("ignored", "{} test modules left uncollected beside collected ones"),
    (
        "made_none",
        "{} tests pytest dropped without a word (a decorator's result that is no "
        "function, a class turned off or made abstract by its base, a doctest hidden)",
    ),
    ("args", "the paths to collect rewritten by the project (a conftest's `config.args`)"),
)


def _narrowed(line: dict[str, object]) -> str | None:
    """What took collected tests out of the run, in a few words (the probe's counts)."""
    said = [(records.as_int(line.get(key)) or 0, words) for key, words in _NARROWED]
    return ", ".join(words.format(count) for count, words in said if count) or None


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
        if records.RANK.get(outcome, 0) >= records.RANK["failed"]:
            candidates.append((outcome, phase))
    if candidates:
        return max(candidates, key=lambda pair: records.RANK[pair[0]])  # the first of the worst
    call = phases.get("call")
    if call is not None and call.outcome in records.RANK:
        return call.outcome, call
    setup = phases.get("setup")
    if setup is not None and setup.outcome in ("skipped", "xfailed"):
        return setup.outcome, setup
    return None


def never_started() -> records.RunRecord:
    """The record of a pytest that ended before its session started: no test, no finish."""
    return records.RunRecord(runner="pytest")


def read_pytest(probe_dir: Path, exited_zero: bool = False) -> records.RunRecord | None:
    """The run recorded by the probe in ``probe_dir``; None when it wrote nothing (not loaded),
    or only that pytest loaded it and the command failed (pytest stopped before its session
    started: a usage error, a conftest that fails, whose text says why). A command that
    ``exited_zero`` after that alone gives a record of a session that never ended."""
    try:
        paths = sorted(probe_dir.glob("*.jsonl"))
    except OSError:
        return None
    if not paths:
        return None
    notes = records.Notes()
    processes: list[_Process] = []
    budget = records.MAX_TOTAL_BYTES
    for path in paths:
        if budget <= 0:
            notes.add(f"{path.name}: not read, the records passed {records.MAX_TOTAL_BYTES} bytes")
            continue
        try:
            wrote, size = _read_processes(path, budget, notes)
        except OSError as error:
            notes.add(f"{path.name}: unreadable: {error}")
            continue
        budget -= size
        processes += wrote
    if not processes or (not exited_zero and not any(p.pid for p in processes)):
        return None
    leaders = [p for p in processes if p.role in ("main", "controller")]
    workers = sorted((p for p in processes if p.role == "worker"), key=_worker_key)
    leaders.sort(key=lambda p: (p.finish is None, p.pid))
    if len(leaders) > 1:
        notes.add(f"{len(leaders)} main processes recorded into one directory (reused?)")

    collected: dict[str, None] = {}
    kinds: dict[str, str] = {}
    phases: dict[str, dict[str, _PhaseLine]] = {}
    errors: dict[str, records.CollectError] = {}
    collect_skips: dict[str, str] = {}
    imported: set[str] = set()
    shadowed: dict[str, str] = {}
    hooks: set[str] = set()
    left_out: set[str] = set()
    hidden: set[str] = set()
    executed: dict[str, set[int]] | None = None
    at_import: dict[str, set[int]] = {}
    in_module: dict[str, dict[str, set[int]]] = {}
    entered: set[str] = set()
    ran: dict[str, dict[str, list[int]]] = {}
    read: set[str] = set()
    by_tests: set[str] = set()
    unseen = False
    edited_entered = False
    looked: dict[str, str] = {}
    sandboxed: list[str] = []
    reach = _Reached()
    rootdir: str | None = None
    inifile: str | None = None
    narrowed: str | None = None
    for process in [*leaders, *workers]:
        label = f"{process.role} {process.worker or process.pid}"
        for line in process.lines:
            kind = line.get("t")
            if kind == "start":
                rootdir = rootdir or records.as_str(line.get("rootdir"))
                inifile = inifile or records.as_str(line.get("inifile"))
            elif kind == "narrowed" and narrowed is None:
                narrowed = _narrowed(line)
            elif kind == "collected":
                for node_id in records.as_list(line.get("ids")):
                    if isinstance(node_id, str):
                        collected[node_id] = None
            elif kind == "kinds":
                for node_id, name in records.as_dict(line.get("kinds")).items():
                    if isinstance(name, str):
                        kinds[node_id] = name
            elif kind in ("phase", "crash"):
                node_id = records.as_str(line.get("id"))
                if node_id is None:
                    continue
                if kind == "crash":
                    when, outcome = "crash", "failed"
                    notes.add(f"{label}: {records.as_str(line.get('message')) or 'worker crashed'}")
                else:
                    when = records.as_str(line.get("when")) or "?"
                    outcome = records.as_str(line.get("outcome")) or "?"
                if (
                    when not in ("setup", "call", "teardown", "crash")
                    or outcome not in records.RANK
                ):
                    notes.add(f"{label}: {node_id}: unknown phase {when!r} outcome {outcome!r}")
                    continue
                test = phases.setdefault(node_id, {})
                seen = test.get(when)
                if seen is None or records.RANK[outcome] > records.RANK[seen.outcome]:
                    test[when] = _PhaseLine(when, outcome, line)
            elif kind == "collect_skip":
                node_id = records.as_str(line.get("id"))
                if node_id is not None:
                    collect_skips[node_id] = records.as_str(line.get("reason")) or ""
            elif kind == "collect_error":
                node_id = records.as_str(line.get("id"))
                if node_id is not None and node_id not in errors:
                    text = records.as_str(line.get("longrepr")) or ""
                    errors[node_id] = records.CollectError(
                        id=node_id, failure=_failure(line.get("failure"), text)
                    )
            elif kind == "executed":
                files = line.get("files")
                if isinstance(files, dict):
                    executed = {} if executed is None else executed
                    for path, lines in files.items():
                        numbers = [n for n in records.as_list(lines) if isinstance(n, int)]
                        executed.setdefault(path, set()).update(numbers)
                    for name, lines in records.as_dict(line.get("at_import")).items():
                        numbers = [n for n in records.as_list(lines) if isinstance(n, int)]
                        at_import.setdefault(name, set()).update(numbers)
                    for module, found in records.as_dict(line.get("in_module")).items():
                        mine = in_module.setdefault(module, {})
                        for name, lines in records.as_dict(found).items():
                            numbers = [n for n in records.as_list(lines) if isinstance(n, int)]
                            mine.setdefault(name, set()).update(numbers)
                    names = records.as_list(line.get("entered"))
                    entered.update(n for n in names if isinstance(n, str))
                else:
                    notes.add(f"{label}: not traced ({records.as_str(line.get('why'))})")
                # What the tests looked at holds where tracing stopped too: a test that took the
                # tracer away counts as having looked at every changed file.
                names = records.as_list(line.get("read"))
                read.update(n for n in names if isinstance(n, str))
                names = records.as_list(line.get("by_tests"))
                by_tests.update(n for n in names if isinstance(n, str))
                unseen = unseen or line.get("children") is True
                # A changed module imported before tracing began ran its import unseen; a
                # changed file the changed code read is what it does too.
                unseen = unseen or bool(records.as_list(line.get("unseen")))
                unseen = unseen or bool(records.as_list(line.get("own")))
                edited_entered = edited_entered or line.get("edited_entered") is True
                for name, how in records.as_dict(line.get("how")).items():
                    if isinstance(how, str):
                        looked.setdefault(name, how[:300])
            elif kind == "ran":
                node_id = records.as_str(line.get("id"))
                if node_id is not None:
                    test_ran = ran.setdefault(node_id, {})
                    for name, lines in records.as_dict(line.get("files")).items():
                        ints = {n for n in records.as_list(lines) if isinstance(n, int)}
                        test_ran[name] = sorted(ints.union(test_ran.get(name, ())))
            elif kind == "reached":
                reach.add(line, notes, label)
            elif kind == "sandboxed":
                hits = [h for h in records.as_list(line.get("hits")) if isinstance(h, str)]
                sandboxed += hits[: 20 - len(sandboxed)]
            elif kind == "shadowed":
                modules = records.as_dict(line.get("modules"))
                shadowed |= {k: v for k, v in modules.items() if isinstance(v, str)}
            elif kind == "outcome_hooks":
                hooks.update(f for f in records.as_list(line.get("files")) if isinstance(f, str))
            elif kind == "left_out":
                left_out.update(f for f in records.as_list(line.get("paths")) if isinstance(f, str))
            elif kind == "hidden":
                hidden.update(t for t in records.as_list(line.get("ids")) if isinstance(t, str))
            elif kind == "imported":
                imported.update(f for f in records.as_list(line.get("files")) if isinstance(f, str))
                total = records.as_int(line.get("total"))
                if total is not None and total > len(records.as_list(line.get("files"))):
                    notes.add(f"{label}: {total} imported files, the list was cut")
            elif kind == "internal_error":
                hook, problem = records.as_str(line.get("hook")), records.as_str(line.get("error"))
                notes.add(f"{label}: probe internal error in {hook}: {problem}")
            elif kind == "pytest_internal_error":
                notes.add(f"{label}: pytest INTERNALERROR: {records.as_str(line.get('error'))}")
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
        durations = [records.as_float(p.line.get("dur")) for p in test.values()]
        failure: FailureRecord | None = None
        if records.RANK[outcome] >= records.RANK["failed"]:
            text = records.as_str(phase.line.get("longrepr")) or ""
            if phase.when == "crash":
                text = records.as_str(phase.line.get("message")) or ""
            elif outcome == "xpass_strict":
                text = records.as_str(phase.line.get("reason")) or ""
            failure = _failure(phase.line.get("failure"), text)
        captured = None
        if any("captured" in p.line for p in test.values()):
            sums = {"stdout": 0, "stderr": 0, "log": 0}
            for p in test.values():
                counts = records.as_dict(p.line.get("captured"))
                for key in sums:
                    sums[key] += records.as_int(counts.get(key)) or 0
            captured = records.Captured(**sums)
        reason = records.as_str(phase.line.get("reason")) if outcome != "xpass_strict" else None
        tests[node_id] = TestRecord(
            id=node_id,
            outcome=records.OUTCOMES[outcome],
            phase=records.PHASES[phase.when],
            duration=round(sum(d for d in durations if d is not None), 6),
            failure=failure,
            reason=reason,
            captured=captured,
        )
    finish = leaders[0].finish if leaders else None
    unread: str | None = None
    # (a session that only informs, `pytest --markers && pytest`, has none to end: helper-68)
    unended = [p for p in leaders if (p.finish is None or not p.ended) and not _informs(p)]
    if not leaders:
        notes.add("no main process record: only workers wrote")
    elif finish is not None and not leaders[0].ended:
        # A finish that pytest's own end did not follow: written by something else (the code
        # under test, then os._exit), or the process died between the two. No finish at all.
        notes.add("a finish line that pytest's end did not follow: the session did not end")
        finish = None
    elif finish is not None and unended:
        # A command of several pytest sessions (`pytest a && pytest b`): one that never ended
        # (only the probe's `loaded` line: it exited before its session) leaves the run unended,
        # whatever the others recorded (helper-66).
        unread = (
            f"{len(unended)} of the command's {len(leaders)} pytest sessions never reached its "
            "end (one exited before its session, or during it), so the run says nothing about "
            "the tests"
        )
        finish = None
    exitstatus = records.as_int(finish.get("exitstatus")) if finish is not None else None
    if finish is not None and len(leaders) > 1:
        # Several sessions in a row: the run failed where one of them did (helper-68).
        statuses = [records.as_int(p.finish.get("exitstatus")) for p in leaders if p.finish]
        exitstatus = next((s for s in statuses if s), exitstatus)
    return records.RunRecord(
        runner="pytest",
        collected=list(collected),
        kinds=kinds,
        tests=tests,
        collect_errors=list(errors.values()),
        collect_skips=collect_skips,
        finished=finish is not None,
        exitstatus=exitstatus,
        imported=sorted(imported),
        shadowed=shadowed,
        outcome_hooks=sorted(hooks),
        left_out=sorted(left_out),
        hidden=sorted(hidden),
        sandboxed=sandboxed,
        executed_at_import={path: sorted(lines) for path, lines in sorted(at_import.items())},
        executed_in_module={
            module: {path: sorted(lines) for path, lines in sorted(found.items())}
            for module, found in sorted(in_module.items())
        },
        entered=sorted(entered),
        ran=ran if executed is not None else {},
        read_as_text=sorted(read),
        looked_by_tests=sorted(by_tests & read),
        beyond_trace=unseen,
        edited_entered=edited_entered,
        looked={name: looked[name] for name in sorted(looked) if name in read},
        executed=None
        if executed is None
        else {path: sorted(lines) for path, lines in sorted(executed.items())},
        reached=reach.by_test(),
        reached_from=reach.place,
        rootdir=rootdir,
        inifile=inifile,
        narrowed=narrowed,
        invocation=_invocation(leaders),
        unread=unread,
        notes=notes.done(),
    )


def _invocation(leaders: list[_Process]) -> records.Invocation | None:
    """pytest's parse of its command line, from the one process that led the run (main, or
    xdist's controller): its arguments and which of them it took as paths."""
    if len(leaders) != 1:
        return None
    start = next((line for line in leaders[0].lines if line.get("t") == "start"), None)
    if start is None:
        return None
    given, took = records.as_list(start.get("args")), start.get("paths")
    args = [arg for arg in given if isinstance(arg, str)]
    paths = [at for at in records.as_list(took) if type(at) is int and 0 <= at < len(args)]
    if not isinstance(took, list) or len(args) != len(given) or len(paths) != len(took):
        return None  # not recorded (an older probe; it could not tell), or not as written
    return records.Invocation(args=args, paths=sorted(set(paths)))


class _Reached:
    """The probe's ``reached`` lines (EYEFUL_PROBE_MAP): the files each test's code ran in."""

    def __init__(self) -> None:
        self.tests: dict[str, set[str]] = {}
        self.modules: dict[str, set[str]] = {}
        self.session: set[str] = set()
        self.imports: dict[str, set[str]] = {}
        self.parents: dict[str, set[str]] = {}
        self.everything: dict[str, str] = {}
        self.at_import: dict[str, set[int]] | None = None
        self.seen = False
        self.failed = False
        self.place = records.MapPlace()

    def add(self, line: dict[str, object], notes: records.Notes, label: str) -> None:
        self.seen = True
        files = line.get("files")
        if not isinstance(files, list):
            self.failed = True
            notes.add(f"{label}: no map of what tests ran ({records.as_str(line.get('why'))})")
            return
        names = {f for f in files if isinstance(f, str)}
        test, module = records.as_str(line.get("id")), records.as_str(line.get("module"))
        if test is not None:
            self.tests.setdefault(test, set()).update(names)
            why = records.as_str(line.get("all"))
            if why is not None:
                self.everything[test] = why[:300]
        elif module is not None:
            self.modules.setdefault(module, set()).update(names)
        else:
            self.session.update(names)
            for key, graph in (("imports", self.imports), ("parents", self.parents)):
                for path, found in records.as_dict(line.get(key)).items():
                    edges = {f for f in records.as_list(found) if isinstance(f, str)}
                    graph.setdefault(path, set()).update(edges)
            if isinstance(line.get("at_import"), dict):
                self.at_import = self.at_import if self.at_import is not None else {}
                for path, first in records.as_dict(line.get("at_import")).items():
                    lines = {n for n in records.as_list(first) if isinstance(n, int)}
                    self.at_import.setdefault(path, set()).update(lines)
            if "rootdir" in line or "started" in line:
                self.place = records.MapPlace(
                    rootdir=records.as_str(line.get("rootdir")),
                    started=records.as_str(line.get("started")),
                )

    def by_test(self) -> records.Reached | None:
        """Each test's files: its own, its module's collection's, the session's; the import
        graph; the tests that cannot be traced. None: not recorded, or not everywhere."""
        if not self.seen or self.failed:
            return None
        return records.Reached(
            tests={
                test: sorted(files | self.modules.get(test.split("::")[0], set()) | self.session)
                for test, files in self.tests.items()
            },
            imports={path: sorted(found) for path, found in sorted(self.imports.items()) if found},
            parents={path: sorted(found) for path, found in sorted(self.parents.items()) if found},
            everything=dict(sorted(self.everything.items())),
            at_import=None
            if self.at_import is None
            else {path: sorted(first) for path, first in sorted(self.at_import.items())},
        )


def without_record(probe_dir: Path, output: str) -> str | None:
    """Why a pytest run left no record, when the probe says or the output shows it: a pytest
    older than the probe supports, or a command that set PYTHONPATH or PYTEST_PLUGINS itself so
    that the probe could not be loaded. None when there is no sign of either."""
    with contextlib.suppress(OSError):
        for path in sorted(probe_dir.glob("*-unsupported.txt")):
            version = path.read_text("utf-8", errors="replace")[:40].strip()
            return f"pytest {version} is older than 7.0, the oldest the probe supports"
        with (probe_dir / RECORD).open("rb") as record:
            for raw in record.read(records.MAX_FILE_BYTES).splitlines():
                with contextlib.suppress(ValueError):
                    line = json.loads(raw)
                    if isinstance(line, dict) and line.get("t") == "unsupported":
                        version = str(line.get("pytest"))[:40]
                        return f"pytest {version} is older than 7.0, the oldest the probe supports"
    if f'Error importing plugin "{PROBE_MODULE}"' in output or (
        f"No module named '{PROBE_MODULE}'" in output
    ):
        return (
            "the test command sets PYTHONPATH or PYTEST_PLUGINS itself, so eyeful's pytest "
            "probe could not be loaded (pytest's `pythonpath` ini option does not hide it)"
        )
    return None
