"""One test command in a worktree, with eyeful's probe loaded, and what it says.

The command runs as the user wrote it; the probe comes in through the environment
(``PYTEST_PLUGINS``, eyeful/records.py). What the run says is read from the runner's record when
there is one: the probe's (pytest), ``go test -json`` events, unittest's verbose lines
(eyeful/evidence.py). A run with no record is read from its JUnit report or its output, the
labelled fallback (``tests_from`` says which).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from eyeful import (
    claims,
    evidence,
    focus,
    go_records,
    imports,
    probeload,
    pytest_records,
    records,
    results,
    unittest_records,
    unrunnable,
)
from eyeful import failures as failures_
from eyeful.completeness import UNITTEST_FAILED_UNREAD, CompletenessScanner
from eyeful.config import Config
from eyeful.confine import Refused, inside
from eyeful.environment import go_flags
from eyeful.sandbox import Jail, refused_by_sandbox
from eyeful.shell import CommandResult, Status, run_command
from eyeful.testids import IdCommand


class _KeptOutput:
    """A run's output lines, kept (bounded) for the runners whose record is their output:
    ``go test -json`` events and unittest's verbose lines."""

    LIMIT = 4 * 1024 * 1024  # past it, the run is read from its text

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.size = 0
        self.go = False

    def feed(self, line: str) -> None:
        if self.size > self.LIMIT:
            return
        self.size += len(line)
        self.lines.append(line)
        if not self.go and (
            (line.startswith("{") and '"Action"' in line) or go_records.build_failed(line)
        ):
            self.go = True  # a package that did not build prints no event before go 1.24

    def record(self) -> records.RunRecord | None:
        if self.size > self.LIMIT:
            return None
        if self.go:
            return go_records.read_go_json(self.lines)
        unittest = unittest_records.read_unittest("\n".join(self.lines))
        if unittest.collected or unittest.collect_errors or unittest.collect_skips:
            # (a test it started and never ended: the process ended there; a module or class
            # that skipped all it holds: a run that named no test)
            return unittest
        return None


@dataclass
class Attempt:
    """One run of a test command: its result, and its runner's record or text readers."""

    result: CommandResult
    record: records.RunRecord | None
    scanner: results.OutputScanner
    coverage: CompletenessScanner
    sections: failures_.SectionScanner
    why_text: str | None = None
    """Why a pytest run has no record (it is read from its text)."""
    junit: tuple[dict[str, results.Outcome], dict[str, failures_.Failure]] | None = None
    """Outcomes and failures from the JUnit report eyeful asked for (a run without the probe)."""

    def imported_from(self, user_root: Path) -> list[Path]:
        """Files of the project's code this run imported from the user's working tree."""
        if self.record is None or self.record.runner != "pytest":
            return []
        return imports.from_user_tree(self.record.imported, user_root)


def attempt(
    given: str | IdCommand,
    cwd: Path,
    env: dict[str, str],
    tmp_dir: Path,
    timeout: float,
    *,
    sections: bool,
    trace: Mapping[str, Iterable[int]] | None = None,
    jail: Jail | None = None,
    reach: bool = False,
    imports: Path | None = None,
) -> Attempt:
    """Run ``given`` in ``cwd`` with the probe loaded; ``sections``: keep each failure's section
    of the output (for a run with no record and no JUnit report); ``trace``: the lines (by path
    in ``cwd``) whose running the probe records (eyeful/hunks.py); ``reach``: record which files
    each test ran (the map of eyeful/affected.py), keeping the parsed sources of its import graph
    in ``imports`` (a cache).

    A command that sets PYTHONPATH itself gets the probe's loader in ``cwd`` (eyeful/
    probeload.py), also when its pytest could not load the probe without it; where even that
    does not reach it, it runs without the probe, asked for a JUnit report of each test."""
    run = _Runner(given, cwd, env, tmp_dir, timeout, sections, jail)
    try:
        extra = run.probe_env(trace, reach, imports)
        loader = probeload.sets_pythonpath(run.actual) and not probeload.venv_route(env)
        done = run.probed(extra, loader)
        if _not_loaded(done.why_text) and not loader:
            done = run.probed(extra, True)
        if _not_loaded(done.why_text):
            done = run.unprobed(done.why_text)
        return done
    finally:
        shutil.rmtree(run.probe_dir, ignore_errors=True)


def uncached_go(env: Mapping[str, str]) -> dict[str, str]:
    """GOFLAGS for a test command: the command's (the environment's, or ``go env -w``'s) with
    ``-count=1``, which ``go test`` takes as "run, do not answer from the cache of test
    results". go's cache knows only the files a test opens once the test log started: a
    package that reads its data at init (a `var` initializer) got a stale pass (helper-66). A
    count the flags set already stays; a command that sets GOFLAGS itself replaces them."""
    flags = go_flags(env)
    if any(flag.lstrip("-").startswith("count") for flag in flags.split()):
        return {}
    return {"GOFLAGS": f"{flags} -count=1".strip()}


def _not_loaded(why_text: str | None) -> bool:
    return why_text is not None and "could not be loaded" in why_text


class _Runner:
    """One test command's runs in ``attempt``: with the probe, and the fallback without it."""

    def __init__(self, given: str | IdCommand, cwd: Path, env: dict[str, str], tmp_dir: Path,
                 timeout: float, sections: bool, jail: Jail | None) -> None:  # fmt: skip
        self.actual = focus.for_record(given.script if isinstance(given, IdCommand) else given)
        self.args = given.args if isinstance(given, IdCommand) else ()
        self.cwd, self.env, self.timeout = cwd, env, timeout
        self.sections, self.jail = sections, jail
        tmp_dir.mkdir(parents=True, exist_ok=True)
        self.probe_dir = Path(tempfile.mkdtemp(prefix="probe-", dir=tmp_dir))

    def probe_env(
        self, trace: Mapping[str, Iterable[int]] | None, reach: bool, imports: Path | None = None
    ) -> dict[str, str]:
        probe_dir, cwd = self.probe_dir, self.cwd
        probe_env = pytest_records.plugin_env(
            probe_dir, self.env, addopts="PYTEST_PLUGINS" in self.actual
        )
        # Every test command (`make test`, `/usr/bin/go test` too: helper-68); go takes a flag
        # of GOFLAGS only in a command that has it (`go test`), and other programs none.
        probe_env.update(uncached_go(self.env))
        if self.jail is not None:
            # The record directory is not among them: the probe writes through the descriptor
            # of its record file (:meth:`probed`), so the code it records cannot write it by its
            # path (README "What untrusted code can do").
            writable = [cwd, self.jail.private / "tmp", self.jail.private / "home"]
            probe_env[pytest_records.SANDBOX_VAR] = os.pathsep.join(str(p) for p in writable)
        if trace:
            spec = probe_dir / "trace.json"
            spec.write_text(
                json.dumps({str(cwd / p): sorted(n) for p, n in trace.items()}), "utf-8"
            )
            probe_env[pytest_records.TRACE_VAR] = str(spec)
        elif reach:
            probe_env[pytest_records.MAP_VAR] = str(cwd)
            if imports is not None and self.jail is None:  # the sandbox keeps it read-only
                probe_env[pytest_records.IMPORTS_VAR] = str(imports)
        return probe_env

    def _run(
        self, env: dict[str, str], writable: Sequence[Path] = (), pass_fds: tuple[int, ...] = ()
    ) -> Attempt:
        scanner, coverage = results.OutputScanner(), CompletenessScanner()
        found, kept = failures_.SectionScanner(), _KeptOutput()

        def feed(line: str) -> None:
            scanner.feed(line)
            coverage.feed(line)
            kept.feed(line)
            if self.sections:
                found.feed(line)

        result = run_command(
            self.actual, self.cwd, timeout=self.timeout, on_line=feed, args=self.args, env=env,
            jail=self.jail, writable=writable, pass_fds=pass_fds,
        )  # fmt: skip
        return Attempt(result, kept.record(), scanner, coverage, found)

    def probed(self, probe_env: dict[str, str], loader: bool) -> Attempt:
        """A run with the probe (its loader in the worktree's root with ``loader``)."""
        for old in self.probe_dir.glob("*.jsonl"):
            old.unlink()  # a run before this one's
        record_fd, named = pytest_records.open_record(self.probe_dir)
        probe_env = {**probe_env, pytest_records.FD_VAR: named}
        try:
            with contextlib.ExitStack() as stack:
                found = stack.enter_context(probeload.root_loader(self.cwd)) if loader else None
                done = self._run({**self.env, **probe_env, **(found or {})}, (), (record_fd,))
        finally:
            os.close(record_fd)
        exited_zero = done.result.exit_code == 0
        record = pytest_records.read_pytest(self.probe_dir, exited_zero)
        why = None if record is not None else pytest_records.without_record(
            self.probe_dir, done.result.tail
        )  # fmt: skip
        if record is None and why is None and exited_zero and self._probe_always_loads():
            # It exited 0 without even loading the probe (a `-p` plugin of its `addopts`, or
            # what it imports, ended the process first): a session that never ran, not one to
            # read from its text (helper-64).
            record = pytest_records.never_started()
        if record is not None:
            done.record = record
        else:
            done.why_text = why
        return done

    def _probe_always_loads(self) -> bool:
        """Whether any pytest session of this command loads the probe: a plain pytest command,
        unless it sets both variables the probe comes by itself (with PYTEST_PLUGINS of its own
        the probe comes by a `-p` in PYTEST_ADDOPTS, which its own PYTEST_ADDOPTS then drops:
        helper-65; a whole run leaves no record either). Either alone leaves the other route
        (helper-66)."""
        own_route = "PYTEST_PLUGINS" in self.actual and "PYTEST_ADDOPTS" in self.actual
        return not own_route and focus.plain_pytest(self.actual)

    def unprobed(self, why_text: str | None) -> Attempt:
        """The command as written, without the probe (its pytest could not load it), asked for a
        JUnit report of each test."""
        report = self.probe_dir / "report.xml"
        # Its JUnit report is the run's own text, written where it runs (no record to protect).
        done = self._run({**self.env, **probeload.text_env(report, self.env)}, [self.probe_dir])
        done.why_text = f"{why_text}; {probeload.NO_ROUTE}"
        if report.is_file():
            junit: dict[str, failures_.Failure] = {}
            with contextlib.suppress(results.ResultsError):
                done.junit = (dict(results.parse_junit(report, junit)), junit)
        return done


@dataclass(frozen=True)
class Context:
    """Which command ran where, for the reasons a run gives."""

    command: str
    side: str
    name: Literal["setup", "test", "test_one"]
    config: Config
    worktree: Path
    report: Path | None
    """The configured JUnit report in the worktree (``junit``), for the test command."""
    sandboxed: bool = False
    """Run in the sandbox: a failure the sandbox caused (a write outside, the network) is an
    error of the run, not a failure of the code."""
    goflags: str = ""
    """The GOFLAGS the go command took (the environment's, or ``go env -w``'s)."""


@dataclass
class Said:
    """What one run says: its status and reason, and its tests' outcomes and failures."""

    status: Status
    reason: str | None
    tests: dict[str, evidence.Outcome] | None = None
    tests_from: evidence.Source | None = None
    collected: list[str] | None = None
    kinds: dict[str, str] | None = None
    executed: dict[str, list[int]] | None = None
    executed_at_import: dict[str, list[int]] = field(default_factory=dict)
    executed_in_module: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    entered: list[str] = field(default_factory=list)
    ran: dict[str, dict[str, list[int]]] | None = None
    read_as_text: list[str] = field(default_factory=list)
    looked_by_tests: list[str] = field(default_factory=list)
    outcome_hooks: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    beyond_trace: bool = False
    edited_entered: bool = False
    looked: dict[str, str] = field(default_factory=dict)
    reached: records.Reached | None = None
    reached_from: records.MapPlace | None = None
    rootdir: str | None = None
    narrowed: str | None = None
    stopped: str | None = None
    none_ran: bool = False
    failures: dict[str, failures_.Failure] = field(default_factory=dict)
    skips: dict[str, str] = field(default_factory=dict)


def read(attempt: Attempt, context: Context) -> Said:
    """What ``attempt`` says, from its runner's record, else from its text."""
    result = attempt.result
    said = Said(
        status=result.status,
        reason=unrunnable.missing_command(result.exit_code, result.tail) or result.reason,
    )
    if attempt.record is not None:
        _from_record(said, attempt.record, result, context)
        unread = attempt.coverage.unread_failure(attempt.record.runner)
        if unread and said.status != "ERROR":
            # (helper-75: `unittest ...; pytest ...`, or a quiet unittest run before a verbose
            # one: the record is the last session's; helper-77: whatever else failed)
            said.status, said.reason = "ERROR", UNITTEST_FAILED_UNREAD
            said.tests, said.tests_from = {}, None
    else:
        _from_text(said, attempt, context)
    if context.sandboxed and said.status == "FAILED":
        texts = [result.tail, *(f.text for f in said.failures.values())]
        texts += [link for f in said.failures.values() for link in f.chain]
        tried = attempt.record.sandboxed if attempt.record is not None else []
        refused = tried[0] if tried else refused_by_sandbox(texts)
        if refused is not None:
            said.status = "ERROR"
            said.reason = (
                f"the sandbox stopped it ({refused}): code nobody confirmed may write only in "
                "the worktree and its TMPDIR and HOME, and reaches no network; a failure the "
                "sandbox causes says nothing about the code"
            )
    return said


def _why_not(said: Said, result: CommandResult, context: Context, failing: bool,
             junit_missing: str | None) -> str | None:  # fmt: skip
    return unrunnable.why_not_run(
        unrunnable.Attempt(
            command=context.command, side=context.side, name=context.name, status=said.status,
            exit_code=result.exit_code, tail=result.tail, failing_read=failing,
            isolated=context.config.effective_isolate == "venv", junit_missing=junit_missing,
        )
    )  # fmt: skip


def _from_record(
    said: Said, record: records.RunRecord, result: CommandResult, context: Context
) -> None:
    reading = evidence.read(record, context.worktree.resolve())
    said.stopped, said.none_ran = reading.stopped, reading.none_ran
    said.failures, said.skips = reading.failures, reading.skips
    failing = any(o in evidence.FAILING for o in reading.outcomes.values())
    if failing and said.stopped is None and record.runner != "pytest":
        # go and unittest name only the tests they started: one stopped at its first failure
        # (`-failfast`, `-f`) leaves the rest unnamed.
        said.stopped = claims.stops_at_first_failure(
            context.command, record.runner, context.goflags
        )
    why = reading.unfinished or _why_not(said, result, context, failing, _junit_missing(context))
    if result.reason is not None and result.reason.startswith("timed out"):
        # The kill is why the session never ended: say so, and where it was (helper-58).
        waiting = next((t for t in record.collected if t not in record.tests), None)
        where = f"; the first test without a result: `{waiting}`" if waiting else ""
        why = f"{result.reason} (`timeout` in [tool.eyeful]){where}"
    if why is not None:
        said.status, said.reason = "ERROR", why
        return
    if said.status == "PASSED" and failing:
        said.status = "FAILED"  # a failing test is a failing run, whatever the exit code
    if said.status == "FAILED" and not failing and not reading.none_ran:
        said.status = "ERROR"
        said.reason = (
            f"the command failed (exit {result.exit_code}) but its runner recorded no failing test"
        )
        return
    said.tests, said.tests_from = dict(reading.outcomes), reading.source
    said.collected, said.kinds, said.executed = reading.collected, reading.kinds, reading.executed
    said.executed_at_import = reading.executed_at_import
    said.executed_in_module = reading.executed_in_module
    said.entered, said.read_as_text = reading.entered, reading.read_as_text
    said.looked_by_tests = reading.looked_by_tests
    said.outcome_hooks = reading.outcome_hooks
    said.left_out = reading.left_out
    said.hidden = reading.hidden
    said.beyond_trace = reading.beyond_trace
    said.edited_entered = reading.edited_entered
    said.ran = reading.ran
    said.looked = reading.looked
    said.reached, said.reached_from = record.reached, record.reached_from
    said.rootdir = record.rootdir
    said.narrowed = record.narrowed


def _from_text(said: Said, attempt: Attempt, context: Context) -> None:
    """The fallback for a runner eyeful has no record of: its JUnit report or its text."""
    result = attempt.result
    said.stopped, said.none_ran = attempt.coverage.stopped, attempt.coverage.none_ran
    outcomes: dict[str, evidence.Outcome] = {}
    found: dict[str, failures_.Failure] = {}
    report = _report(context)
    junit_missing = _junit_missing(context)
    if report is not None and report.is_file():
        with contextlib.suppress(results.ResultsError):
            outcomes = dict(results.parse_junit(report, found))
            said.tests_from = "junit"
    if said.tests_from is None and attempt.junit is not None:
        outcomes, found = dict(attempt.junit[0]), dict(attempt.junit[1])
        said.tests_from = "junit"
    if said.tests_from is None:
        outcomes = dict(attempt.scanner.outcomes)
        said.tests_from = "output" if outcomes else None
        found = failures_.by_test(attempt.scanner.outcomes, attempt.sections.sections)
    said.failures = found
    failing = any(o in evidence.FAILING for o in outcomes.values())
    why = _why_not(said, result, context, failing, junit_missing)
    if why is None and said.status == "PASSED" and not failing:
        why = claims.unittest_unfinished(context.command, attempt.coverage.unittest_ended)
    if why is not None:
        said.status, said.reason = "ERROR", why
    elif said.status == "PASSED" and failing:
        said.status = "FAILED"  # the output names a failing test, whatever the exit code says
    # pytest exits 5 when it collected no test at all (an empty base, say): every test is
    # then absent there, which is a known answer rather than an unnamed failure.
    no_tests = result.exit_code == 5 and not outcomes and "no tests ran" in result.tail
    if said.status == "PASSED" or (said.status == "FAILED" and (failing or no_tests)):
        said.tests = outcomes
    else:
        said.tests_from = None
    if failing and said.stopped is None:
        # Read from text too: go and unittest name only the tests they started.
        for runner in ("go", "unittest"):
            said.stopped = said.stopped or claims.stops_at_first_failure(
                context.command, runner, context.goflags
            )


def _report(context: Context) -> Path | None:
    """The configured JUnit report, when it still leads to a file inside the worktree: the tests
    ran there, and whatever they left must not lead eyeful out of it."""
    if context.report is None or not context.config.junit:
        return None
    try:
        return inside(context.worktree, context.config.junit)
    except Refused:
        return None


def _junit_missing(context: Context) -> str | None:
    """The configured JUnit report's path when the run did not write it."""
    report = _report(context)
    if context.report is not None and (report is None or not report.is_file()):
        return context.config.junit
    return None
