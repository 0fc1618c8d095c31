"""``python -m unittest -v``'s record of a run, read from its per-test lines and failure blocks."""

from __future__ import annotations

import ast
import re

from eyeful import records
from eyeful.completeness import UNITTEST_RAN, UNITTEST_TEST, UNITTEST_VERDICT
from eyeful.records import ChainLink, FailureRecord, Frame, Location, TestRecord
from eyeful.textsafe import uncoloured

# A test's name (completeness.UNITTEST_TEST); a subtest adds " (i=1)" or " [msg]"; the
# description (a docstring's first line) may follow on the next line.
_UT_TEST = UNITTEST_TEST
_UT_RESULT = re.compile(
    r"(ok|FAIL|ERROR|expected failure|unexpected success|skipped (?:'.*'|\".*\"))\s*"
)
_UT_BLOCK = re.compile(r"(FAIL|ERROR|UNEXPECTED SUCCESS): ([^\s()]+) \(([^\s()]+)\)(.*)")
# In the verdict: "FAILED (failures=2, errors=1, expected failures=1)"; not the expected ones.
_UT_COUNTED = re.compile(r"(?:\(|, )(failures|errors)=(\d+)")
# A module that raised SkipTest while it was imported: "mod (unittest.loader.ModuleSkipped.mod)".
_UT_MODULE_SKIP = re.compile(
    r"[\w.]+ \(unittest\.loader\.ModuleSkipped\.([\w.]+)\) \.\.\. skipped ('.*'|\".*\")\s*"
)
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


def _a_fixture(name: str, inner: str) -> bool:
    """A class's or module's fixture that unittest names as it would a test (``setUpClass
    (pkg.mod.T)``), not a test method of that name (``pkg.mod.T.setUpClass``)."""
    return name in _UT_FIXTURES and not inner.endswith("." + name)


_UT_WORDS: dict[str, records.Outcome] = {
    "ok": "passed",
    "FAIL": "failed",
    "ERROR": "error",
    "expected failure": "xfailed",
    # unittest fails the run for it (`wasSuccessful()`): pytest's strict XPASS
    "unexpected success": "xpass_strict",
}


def _ut_id(name: str, inner: str) -> str:
    return inner if inner.endswith("." + name) or inner == name else f"{inner}.{name}"


def _indented(lines: list[str], at: int) -> tuple[str, int]:
    """The block of lines indented by doctest's four spaces from ``at``, dedented, and where it
    ends."""
    block = []
    while at < len(lines) and lines[at].startswith("    "):
        block.append(lines[at][4:])
        at += 1
    return "\n".join(block).strip(), at


def _doctest_words(lines: list[str]) -> tuple[str, str] | None:
    """A doctest's failure as unittest prints it (`DocTestCase`: doctest's own report after
    `Failed doctest test for NAME`) in the words eyeful's probe gives pytest's: the example,
    what it expected and got (`AssertionError`), or what it raised (that exception's type);
    None where the report is not there."""
    if "Failed example:" not in lines:
        return None
    source, at = _indented(lines, lines.index("Failed example:") + 1)
    if lines[at : at + 1] in (["Expected:"], ["Expected nothing"]):
        want, at = _indented(lines, at + 1) if lines[at] == "Expected:" else ("", at + 1)
        got = _indented(lines, at + 1)[0] if lines[at : at + 1] == ["Got:"] else ""
        said = f"Got: {got}" if got else "Got nothing"
        return "AssertionError", f"Failed example: {source}\nExpected: {want}\n{said}"
    if lines[at : at + 1] == ["Exception raised:"]:
        raised = _indented(lines, at + 1)[0].splitlines()
        last = raised[-1].strip() if raised else "Exception"
        type_name, _, said = last.partition(": ")
        return type_name, f"{said} (raised by the doctest example: {source})".lstrip()
    return None


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
            frame = _UT_FRAME.fullmatch(line) if not exception else None
            if frame:  # (after the exception's line, a message's: doctest's report names one)
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
            if message.startswith("Failed doctest test for ") and (
                words := _doctest_words(exception[1:])
            ):
                type_name, message = words
            chain.append(
                ChainLink(
                    type=type_name.strip(), message=records.cut(message, records.MESSAGE_CHARS)
                )
            )
            frames = seg_frames
    chain.reverse()  # printed cause first: the last one printed is the one that ended the test
    last = frames[-1] if frames else None
    crash = None
    if chain:
        crash = records.cut(
            f"{chain[0].type}: {chain[0].message}".removesuffix(": "), records.MESSAGE_CHARS
        )
    return FailureRecord(
        chain=chain,
        crash_message=crash,
        raised_in=Location(file=last.file, line=last.line) if last else None,
        frames=frames[-records.MAX_FRAMES :],
        text=records.cut_end(text, records.TEXT_CHARS),
    )


def read_unittest(text: str) -> records.RunRecord:
    """The run that ``python -m unittest -v`` printed on stderr: each test's line
    (``test_x (pkg.mod.TestCls.test_x) ... ok``), then the FAIL and ERROR blocks with their
    tracebacks. What a test prints to stderr can come between its name and its result; a
    result is still read from the start of a later line. A module that failed to import
    (unittest's ``_FailedTest``) is a collection error."""
    notes = records.Notes()
    text = uncoloured(text)  # (a unittest that colours its words: Python 3.14 with FORCE_COLOR)
    lines = [line[: records.MAX_LINE] for line in text.splitlines()]
    outcomes: dict[str, tuple[records.Outcome, str | None]] = {}
    collected: list[str] = []
    pending: str | None = None
    index = 0
    end = unittest_end(lines)
    counted = _counted(lines, end)
    listing = _listing_end(lines, end, counted)
    # The verbose listing: everything before the first block or the summary (what a test
    # prints there, a nested runner's `Ran N tests` or a line of dashes, included).
    module_skips: dict[str, str] = {}
    while index < listing:
        line = lines[index]
        index += 1
        module_skip = _UT_MODULE_SKIP.fullmatch(line)
        if module_skip is not None:  # its tests are not collected: the module is skipped
            module_skips[module_skip[1]] = _literal(module_skip[2])
            pending = None
            continue
        if UNITTEST_VERDICT.fullmatch(line.strip()):
            pending = None  # an earlier session's verdict, `FAILED (failures=1)`: no test's name
            continue
        rest = line
        while rest:
            test = _UT_TEST.match(rest.lstrip())
            if test is not None and _a_fixture(test[1], test[2]):
                # "setUpClass (pkg.mod.T) ... ERROR": its block says the rest. One that skipped
                # ("... skipped 'why'") skipped its class's or module's tests, which unittest
                # then never names: the class or module is skipped (helper-66).
                _, dots, after = rest.partition(" ... ")
                word = _UT_RESULT.fullmatch(after) if dots else None
                setup = _UT_FIXTURES[test[1]] == "setup"  # (a teardown's skip ran after them)
                if setup and word is not None and word[1].startswith("skipped "):
                    module_skips[test[2]] = _literal(word[1][len("skipped ") :])
                pending = None
                break
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
            # The first word read: a word standing alone later may be a class fixture's
            # ("ERROR" for a setUpClass). What the test printed can look like a result too
            # ("warming cache ... ok", then its "FAIL"): its failure block decides (below).
            found = word[1]
            if found.startswith("skipped "):
                outcomes[pending] = ("skipped", _literal(found[len("skipped ") :]))
            else:
                outcomes.setdefault(pending, (_UT_WORDS[found], None))
            pending = None
            break

    # The blocks: "=====", "FAIL: test_x (pkg.mod.T.test_x)", "-----", the traceback.
    failures: dict[str, FailureRecord] = {}
    errors: list[records.CollectError] = []
    tests: dict[str, TestRecord] = {}
    finished = end is not None
    blocks = 0
    while index < (len(lines) if end is None else end):
        line = lines[index]
        index += 1
        block = _UT_BLOCK.fullmatch(line)
        if block is None:
            continue
        blocks += block[1] != "UNEXPECTED SUCCESS"
        # The test's description (its docstring's first line) may come before the dashes.
        dashes = next((at for at in (index, index + 1) if at < len(lines)
                       and lines[at].startswith("-" * 70)), None)  # fmt: skip
        if dashes is None:
            continue
        index = dashes + 1
        body: list[str] = []
        while index < len(lines) and not lines[index].startswith("=" * 70):
            if UNITTEST_RAN.fullmatch(lines[index]):
                break
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if lines[index].startswith("-" * 70) and UNITTEST_RAN.fullmatch(following):
                break
            body.append(lines[index])
            index += 1
        kind, name, inner = block[1], block[2], block[3]
        failure = _ut_failure("\n".join(body).strip("\n"))
        if inner.startswith("unittest.loader._FailedTest"):
            errors.append(records.CollectError(id=name, failure=failure))
            continue
        if _a_fixture(name, inner):
            tests[inner] = TestRecord(
                id=inner,
                outcome="error",
                phase=records.PHASES[_UT_FIXTURES[name]],
                failure=failure,
            )
            continue
        test_id = _ut_id(name, inner)
        if kind == "UNEXPECTED SUCCESS":  # (3.11's list of them, without -v)
            outcomes.setdefault(test_id, ("xpass_strict", None))
            if test_id not in collected:
                collected.append(test_id)
            continue
        failures.setdefault(test_id, failure)  # a subtest's block: its first
        block_outcome: records.Outcome = "failed" if kind == "FAIL" else "error"
        previous = outcomes.get(test_id)
        if previous is None or records.RANK[block_outcome] > records.RANK[previous[0]]:
            outcomes[test_id] = (block_outcome, None)
        if test_id not in collected:
            collected.append(test_id)

    for test_id in collected:
        if test_id not in outcomes:
            notes.add(f"{test_id}: no result read")
            continue
        outcome, test_reason = outcomes[test_id]
        if outcome in ("failed", "error") and test_id not in failures and finished:
            # unittest prints a block for every failure and error of a run that ended: a FAIL
            # read from the listing alone was the test's own output ("checking ... FAIL").
            notes.add(f"{test_id}: no result read (a failure without its block)")
            continue
        tests[test_id] = TestRecord(
            id=test_id,
            outcome=outcome,
            phase="call",
            failure=failures.get(test_id) if outcome in ("failed", "error") else None,
            reason=test_reason,
        )
    unread = None
    if counted is not None and blocks < counted:
        unread = (
            f"unittest counted {counted} failures and errors, and {blocks} could be read (a "
            "test named otherwise than unittest's listing names tests?), so the run says "
            "nothing about the tests"
        )
    return records.record_of(
        "unittest", collected, tests, errors, finished, notes, skips=module_skips, unread=unread
    )


def unittest_end(lines: list[str]) -> int | None:
    """Where unittest's own summary is: the last ``Ran N tests in ...`` line that its verdict
    (``OK``, ``FAILED (...)``) follows, no test's line after it; None when the run never
    printed it (the process ended first). A test that prints such a line itself (a nested
    runner's) is no end."""
    found = None
    for index, line in enumerate(lines):
        if found is not None and _UT_TEST.match(line) and " ... " in line:
            found = None  # a test after it: what came before was a test's own output
        if UNITTEST_RAN.fullmatch(line):
            after = [text for text in lines[index + 1 : index + 4] if text.strip()]
            if after and UNITTEST_VERDICT.fullmatch(after[0].strip()):
                found = index
    return found


def _counted(lines: list[str], end: int | None) -> int | None:
    """The failures and errors unittest's verdict counts (``FAILED (failures=1, errors=2)``: its
    failure blocks); None without a summary."""
    if end is None:
        return None
    verdict = next((text.strip() for text in lines[end + 1 : end + 4] if text.strip()), "")
    return sum(int(count) for _, count in _UT_COUNTED.findall(verdict))


def _listing_end(lines: list[str], end: int | None, counted: int | None = None) -> int:
    """Where the verbose listing ends: at the first failure block (a line of ``=`` then
    ``FAIL:`` or ``ERROR:``), else at the line of dashes before the summary. With the verdict's
    count of them, the blocks are the last that many: one a test printed itself (a banner of
    ``=`` and ``ERROR: port (settings.ini)``, helper-55) comes before them, in the listing."""
    stop = len(lines) if end is None else end
    starts = [
        index for index in range(stop)
        if lines[index].startswith("=" * 70) and index + 1 < len(lines)
        and _UT_BLOCK.fullmatch(lines[index + 1])
    ]  # fmt: skip
    if counted is not None:
        unexpected = sum(1 for i in starts if lines[i + 1].startswith("UNEXPECTED SUCCESS"))
        starts = starts[len(starts) - counted - unexpected :] if counted + unexpected else []
    if starts:
        return starts[0]
    if end is not None and end > 0 and lines[end - 1].startswith("-" * 70):
        return end - 1
    return stop


def _literal(text: str) -> str:
    """A skip's reason as unittest printed it (its repr)."""
    try:
        return str(ast.literal_eval(text))
    except (ValueError, SyntaxError):
        return text
