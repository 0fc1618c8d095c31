"""``go test -json``'s record of a run, and Go test ids (``<import path>.<TestName>[/sub]``)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from eyeful import records
from eyeful.records import ChainLink, FailureRecord, Frame, Location, TestRecord

_GO_TOP = re.compile(r"(?:Test|Benchmark|Example|Fuzz)[^/.]*(?:/|$)")
_GO_BUILD_HEADER = re.compile(r"# (\S+)(?: \[.*\])?")
_GO_PKG_FAIL = re.compile(r"FAIL\t(\S+) \[(build failed|setup failed)\]")
_GO_LOG = re.compile(r"\s+(\S+\.go):(\d+): (.*)")
_GO_FRAME_FILE = re.compile(r"\t(/.+?\.\w+):(\d+)(?: \+0x[0-9a-f]+)?")
_GO_ACTIONS: dict[str, records.Outcome] = {"pass": "passed", "fail": "failed", "skip": "skipped"}


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
        if bare_name(rest) and match.start() > 0:
            return test_id[: match.start()], rest
    raise ValueError(f"not a go test id: {test_id!r}")


def bare_name(test_id: str) -> bool:
    """Whether ``test_id`` is a Go test's own name, without its package (``TestX[/sub]``: read
    from text, where go names no package)."""
    return _GO_TOP.match(test_id) is not None


def _go_quote(part: str) -> str:
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", part)


def run_pattern(name: str) -> str:
    """``^TestX$/^sub$``: the ``-run`` pattern that selects just the test of that name (Go's own
    name: a subtest's spaces already ``_``, a repeated name ``#01``), anchored per level, each
    level's regexp characters escaped."""
    return "/".join(f"^{_go_quote(part)}$" for part in name.split("/"))


# An import path: the id of a package that did not build (its collection error), no test name.
_GO_PACKAGE = re.compile(r"[A-Za-z0-9_~+-][A-Za-z0-9_.~+-]*(?:/[A-Za-z0-9_.~+-]+)*")


def go_package(test_id: str) -> bool:
    """Whether ``test_id`` is a package's own id (one that did not build), not a test's (a bare
    ``TestX[/sub]``, read from text, is a test's)."""
    if bare_name(test_id):
        return False
    try:
        split_go_id(test_id)
    except ValueError:
        return _GO_PACKAGE.fullmatch(test_id) is not None and not test_id.startswith("-")
    return False


def go_test_args(test_id: str, packages: Iterable[str] = ()) -> list[str]:
    """``[pkg, "-run", "^TestX$/^sub$"]``: the ``go test`` arguments that run just that test;
    for a package's own id (it did not build), the package: ``[pkg, "-run", "^"]``; for a bare
    name (read from text, no package), every package: ``["./...", "-run", "^TestX$"]``."""
    if go_package(test_id):
        return [test_id, "-run", "^"]
    if bare_name(test_id):
        return ["./...", "-run", run_pattern(test_id)]  # a bare name, read from text: anywhere
    package, name = split_go_id(test_id, packages)
    return [package, "-run", run_pattern(name)]


def check_go_id(value: str, what: str = "the test id") -> str:
    """A Go id (``<import path>.<TestName>[/sub]``, or a bare ``TestName[/sub]`` read from text)
    that can be an argument; raises ValueError naming ``what`` otherwise. Go's names may hold
    ``#`` (a repeated subtest), ``\\`` and quotes (its escapes): they travel as arguments."""
    bad = next((c for c in value if c in "\0\n\r"), None)
    if bad is not None or not value or value.startswith("-") or len(value) > 1000:
        raise ValueError(f"{what} {value!r} cannot be passed as an argument")
    if not bare_name(value) and not go_package(value):
        split_go_id(value)
    return value


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
        while self.size > 4 * records.TEXT_CHARS and len(self.output) > 1:  # keep the end
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
            chain.append(ChainLink(type="panic", message=records.cut(text, records.MESSAGE_CHARS)))
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
            frames = list(reversed(stack))[-records.MAX_FRAMES :]
            break
        log = _GO_LOG.fullmatch(line)
        if log and message is None:
            message = records.cut(f"{log[1]}:{log[2]}: {log[3]}", records.MESSAGE_CHARS)
            raised = Location(file=log[1], line=int(log[2]))
    return FailureRecord(
        chain=chain,
        crash_message=message,
        raised_in=raised,
        frames=frames,
        text=records.cut_end(output, records.TEXT_CHARS),
    )


def build_failed(line: str) -> bool:
    """Whether ``line`` is go test's own line for a package that did not build (go 1.19-1.23
    print it without any JSON event)."""
    return _GO_PKG_FAIL.fullmatch(line.rstrip("\r\n")) is not None


def read_go_json(lines: Iterable[str]) -> records.RunRecord:
    """The run that ``go test -json`` printed. Lines that are not JSON are read too: go 1.19-1.23
    print a build failure as ``FAIL\\t<pkg> [build failed]`` on stdout and the compiler's
    ``# <pkg>`` block on stderr, without any JSON event."""
    notes = records.Notes()
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
        line = raw[: records.MAX_LINE].rstrip("\r\n")
        event = records.json_object(line) if line.startswith("{") else None
        if event is None:
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
        action = records.as_str(event.get("Action"))
        if action in ("build-output", "build-fail"):  # go 1.24+
            path = records.as_str(event.get("ImportPath")) or ""
            package = package_of(path.split(" ")[0])
            if action == "build-output":
                package.build.add(records.as_str(event.get("Output")) or "")
            continue
        name = records.as_str(event.get("Package"))
        if name is None:
            continue
        package = package_of(name)
        test_name = records.as_str(event.get("Test"))
        if test_name is None:
            if action == "output":
                package.output.add(records.as_str(event.get("Output")) or "")
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
            test.add(records.as_str(event.get("Output")) or "")
        elif action in ("pass", "fail", "skip"):
            test.outcome = action
            test.elapsed = records.as_float(event.get("Elapsed"))

    tests: dict[str, TestRecord] = {}
    errors: list[records.CollectError] = []
    ended: list[str] = []
    none_ran: list[str] = []
    for package in packages.values():
        failed_tests = False
        if _ran_no_test(package):
            none_ran.append(package.name)
        started = list(package.tests.values())
        for index, test in enumerate(started):
            test_id = f"{package.name}.{test.name}"
            output = "".join(test.output)
            if test.outcome is None:
                test.outcome = _said_in_output(test.name, output)  # go 1.19: a line run on
            if test.outcome == "fail" and _panicked(output):
                # testing re-panics after reporting a test (or subtest) that panicked, with
                # the goroutines' dump: the binary ends.
                ended.append(f"{test_id} panicked")
            if test.outcome is None:
                if package.result is None:
                    notes.add(f"{test_id}: started, no result (the run was records.cut short?)")
                    continue
                later = any(t.outcome is not None for t in started[index + 1 :])
                if package.result == "pass" or later:
                    # The binary went on (its package passed, a later test has a result): not
                    # a crash; go's own line was lost (printed after a line with no newline).
                    notes.add(f"{test_id}: no result read, though the test binary went on")
                    continue
                # The test binary died under it: a panic in another goroutine, os.Exit, timeout.
                failed_tests = True
                ended.append(f"{test_id} ended it")
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
            errors.append(records.CollectError(id=package.name, failure=_go_failure(text)))
    finished = bool(packages) and all(p.result is not None for p in packages.values())
    if events == 0 and not packages:
        notes.add("no go test -json event read")
    return records.record_of(
        "go", collected, tests, errors, finished, notes,
        narrowed=_none_ran(none_ran), ended_early=_ended(ended),
    )  # fmt: skip


_PANIC = re.compile(r"^panic: ", re.MULTILINE)
_GOROUTINE = re.compile(r"^goroutine \d+ \[running\]:$", re.MULTILINE)
_NONE_TO_RUN = re.compile(
    r"^(?:testing: warning: no tests to run|\?\s+\S+\s+\[no test files\]"
    r"|ok\s+\S+\s+.*\[no tests to run\])\s*$",
    re.MULTILINE,
)
_GO_RESULT_WORDS = {"PASS": "pass", "FAIL": "fail", "SKIP": "skip"}


def _panicked(output: str) -> bool:
    """A panic's line, then the goroutines' dump the runtime prints as the binary ends (not a
    line a test printed that starts with ``panic:``)."""
    found = _PANIC.search(output)
    return found is not None and _GOROUTINE.search(output, found.end()) is not None


def _said_in_output(name: str, output: str) -> str | None:
    """A test's result from go's own ``--- PASS: TestX (0.00s)`` line where test2json did not
    read it (go 1.19: the line followed output with no newline)."""
    leaf = re.escape(name.rsplit("/", 1)[-1])
    found = re.findall(rf"--- (PASS|FAIL|SKIP): (?:\S+/)?{leaf} \(", output)
    return _GO_RESULT_WORDS[found[-1]] if found else None


def _ran_no_test(package: _GoPackage) -> bool:
    """A package that passed with test files and ran no test, though go did not say it found
    none to run (its own line: ``testing: warning: no tests to run``, ``[no tests to run]``):
    its TestMain returned (``os.Exit(0)``) before ``m.Run``, which the code may decide (a
    backend it reports missing)."""
    if package.result != "pass" or package.tests or package.failed_build:
        return False
    return _NONE_TO_RUN.search("".join(package.output.output)) is None


def _none_ran(packages: list[str]) -> str | None:
    if not packages:
        return None
    more = f" and {len(packages) - 1} more" if len(packages) > 1 else ""
    return f"package {packages[0]}{more} ran no test though it has some (its TestMain returned)"


def _ended(tests: list[str]) -> str | None:
    if not tests:
        return None
    more = f" (and {len(tests) - 1} more)" if len(tests) > 1 else ""
    return (
        f"a test binary ended during a test: {tests[0]}{more}; the tests after it in its "
        "package did not run"
    )
