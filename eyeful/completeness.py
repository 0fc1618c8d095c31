"""Whether a test run covered the tests it set out to run.

A run that stopped early (`-x`, `--maxfail`, an interruption, a file that could not be collected,
a Go package that did not build or panicked) lists only some tests: its silence about a test
says nothing. Only a complete run that lists its passes (JUnit, verbose output) can say a test is
not there, and no run's silence ever says a test passed.
"""

from __future__ import annotations

import re

from eyeful.textsafe import uncoloured

_STOPS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"!+ stopping after \d+ failures? !+"),
     "it stopped after its first failures (-x or --maxfail)"),
    (re.compile(r"!+ Interrupted: (.+?) !+"), "it was interrupted ({0})"),
    (re.compile(r"!+ KeyboardInterrupt !+"), "it was interrupted"),
    (re.compile(r"_+ ERROR collecting (\S+) _+"), "{0} could not be collected"),
    (re.compile(r"\[gw\d+\] node down: .*"), "a pytest-xdist worker crashed"),
    (re.compile(r"(?:FAIL|ok)\s+(\S+)\s+\[build failed\]"), "Go package {0} did not build"),
    (re.compile(r"FAIL\s+(\S+)\s+\[setup failed\]"), "Go package {0} could not be set up"),
    (re.compile(r"panic: .*"), "a Go test panicked, so the tests after it did not run"),
)  # fmt: skip
UNITTEST_TEST = re.compile(r"([^\s()]+) \(([^\s()]+)\)")
"""unittest's name of a test in its verbose listing: "test_x (pkg.mod.TestCls.test_x)" (3.11+)
or "test_x (pkg.mod.TestCls)" (older); a method a table-driven suite made with `setattr` may be
named "test_double-2"."""
UNITTEST_RAN = re.compile(r"Ran (\d+) tests? in [\d.]+s")
"""unittest's summary, the last thing its runner prints: a run without it never reached its end."""
UNITTEST_VERDICT = re.compile(r"(?:OK|FAILED|NO TESTS RAN)(?: \(.*\))?")
"""The line after it: unittest's verdict. A `Ran N tests` line a test prints itself has none."""
UNITTEST_FAILED_UNREAD = (
    "a unittest run of this command says FAILED, and the record eyeful read (another session's, "
    "or another runner's) does not hold that failure: the command runs more than one session "
    "(or a test printed a runner's summary), and eyeful reads one record, so which tests failed "
    "is not known"
)
UNITTEST_UNFINISHED = (
    "unittest never printed its summary (`Ran N tests in ...` and its verdict), the last thing it "
    "prints: the process ended before unittest did (killed, or `os._exit` in the code under "
    "test), or the command discards its stderr (`2>/dev/null`), where unittest prints it; so its "
    "exit status says nothing about the tests"
)
_NONE_RAN = re.compile(
    r"(?:=+ )?no tests ran in .*|.*\[no tests to run\]|testing: warning: no tests to run"
)


class CompletenessScanner:
    """Fed a run's output line by line: whether the run stopped early, and whether it ran none."""

    def __init__(self) -> None:
        self.stopped: str | None = None
        self.none_ran = False
        self.unittest_ended = False
        self.unittest_failed = 0  # how many unittest verdicts said FAILED
        self.unittest_last_failed = False  # whether the last one did
        self._unittest_ran = False  # a `Ran N tests` line, its verdict not seen yet

    def unread_failure(self, runner: str) -> bool:
        """Whether a unittest session said FAILED that a record of ``runner`` does not hold:
        any, beside pytest's record; one before the last, beside unittest's own (the last
        session's). A summary a test prints (a nested runner's, under `pytest -s`) reads the
        same: the review is then a question, never clean (helper-77, helper-78: the command's
        text cannot tell, `python run_ut.py` runs unittest without naming it)."""
        if runner == "pytest":
            return self.unittest_failed > 0
        if runner == "unittest":
            return self.unittest_failed > int(self.unittest_last_failed)
        return False

    def feed(self, line: str) -> None:
        line = uncoloured(line[:4096]).strip()  # (`--color=yes`: helper-68)
        if not line:
            return
        if _NONE_RAN.fullmatch(line):
            self.none_ran = True
            return
        if UNITTEST_RAN.fullmatch(line):
            self._unittest_ran, self.unittest_ended = True, False
            return
        if self._unittest_ran:
            self._unittest_ran = False
            self.unittest_ended = bool(UNITTEST_VERDICT.fullmatch(line))
            if self.unittest_ended:
                self.unittest_last_failed = line.startswith("FAILED")
                self.unittest_failed += self.unittest_last_failed
            return
        if self.unittest_ended and UNITTEST_TEST.match(line) and " ... " in line:
            self.unittest_ended = False  # a test's line after it: that was a test's output
        if self.stopped is not None:
            return
        for pattern, why in _STOPS:
            match = pattern.fullmatch(line)
            if match:
                self.stopped = why.format(*match.groups())
                return
