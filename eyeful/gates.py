"""The six gates a finding's reproduction must pass, in order (seed: VERIFICATION.md).

``runs`` → ``not_flaky`` → ``fails_as_claimed`` → ``introduced`` (the problem is real and the change
brought it) → ``fail_to_pass`` → ``pass_to_pass`` (the suggested fix works). Each gate ends
``pass``, ``fail`` or ``not_reached``; every run is kept. Nothing here decides trust: grading.py
reads the verdict together with the oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import Field

from eyeful.cache import cache_key
from eyeful.confine import Refused
from eyeful.extra import Extra
from eyeful.failures import Failure, from_output, own_words, scrub
from eyeful.findings import Finding, Fix, Repro
from eyeful.hunks import ChangedLines, changed_lines, touched, without_docstrings
from eyeful.implicit import through_changed_function
from eyeful.model import Model
from eyeful.onbase import (
    edited_files,
    failed_alike,
    located,
    not_run_on_base,
    renamed_from_base,
    same_cause,
    skipped_on_base,
)
from eyeful.runs import Run, Runner
from eyeful.shell import TAIL_CHARS, parallel_map
from eyeful.snapshot import Snapshot, blob_at, tree_at
from eyeful.testside import side_tree
from eyeful.written import named_as_called, only_called, written_by_test

GateName = Literal[
    "runs", "not_flaky", "fails_as_claimed", "introduced", "fail_to_pass", "pass_to_pass"
]
GATE_NAMES: tuple[GateName, ...] = (
    "runs", "not_flaky", "fails_as_claimed", "introduced", "fail_to_pass", "pass_to_pass"
)  # fmt: skip
GateStatus = Literal["pass", "fail", "not_reached"]

# Text any failure prints: a `fails` text made of these says nothing about the claimed reason.
_GENERIC = {
    "fail", "failed", "failure", "failures", "error", "errors", "assertionerror", "assert",
    "assertion", "assertion failed", "traceback", "exception", "e", "f", "false", "true", "none",
    "not ok", "panic", "fatal", "test failed", "tests failed", "1 failed", "exit status 1",
    "ok", "fault", "expected", "got", "wrong", "bad", "oops",
}  # fmt: skip


class Gate(Model):
    name: GateName
    status: GateStatus = "not_reached"
    detail: str = ""


class Verdict(Model):
    """What running a finding's reproduction showed."""

    gates: list[Gate] = Field(default_factory=lambda: [Gate(name=n) for n in GATE_NAMES])
    runs: list[Run] = Field(default_factory=list)
    refused: str | None = None
    needs_correcting: bool = False
    corrected: bool = False
    base_passed: bool | None = None
    fix_verified: bool = False
    fix_note: str | None = None
    change_tail: str = ""
    failure: Failure | None = None
    """What the reproduction's own test failed with on the change (its first run)."""
    raised_by_change: bool = False
    """The failure was raised at a line the change added or changed (a ``raise`` it wrote):
    perhaps what the change meant to do, so no runtime failure for the ``implicit`` oracle."""
    through_change: bool | None = None
    """Whether its failure's traceback passed through a function holding a changed line (the
    ``implicit`` oracle needs it); None when the traceback tells nothing (no Python entry)."""
    ran_change: bool | None = None
    """Whether its runs on the change executed a line the change touched (eyeful/hunks.py);
    None when that could not be traced (no probe record, nothing traceable changed)."""
    read_as_text: list[str] = Field(default_factory=list)
    """Changed files its test looked at otherwise than by running them (read as text, stat, a
    function's ``__code__``, a child process naming them): a failure about the source's text or
    form shows nothing about what the code does."""
    looked: dict[str, str] = Field(default_factory=dict)
    """What its test did to each of them (the probe's words: ``read``, ...)."""

    def gate(self, name: GateName) -> Gate:
        return next(g for g in self.gates if g.name == name)

    def set(self, name: GateName, ok: bool, detail: str = "") -> bool:
        gate = self.gate(name)
        gate.status, gate.detail = ("pass" if ok else "fail"), detail
        return ok

    @property
    def reproduced(self) -> bool:
        """The first four gates hold: the problem is real and the change introduced it."""
        return all(self.gate(n).status == "pass" for n in GATE_NAMES[:4])

    @property
    def pre_existing(self) -> bool:
        return self.gate("introduced").status == "fail" and self.base_passed is False


def generic_fails_text(text: str) -> bool:
    """True when ``text`` is something any failure prints (FAIL, Error, AssertionError, ...)."""
    norm = " ".join(text.split()).casefold().strip(" :.!-")
    return len(norm) < 4 or norm in _GENERIC


def fails_text_problem(finding: Finding, test_file: str | None) -> str | None:
    """Why the ``fails`` text cannot show the claimed reason, or None when it can."""
    assert finding.repro is not None
    fails = finding.repro.fails
    if generic_fails_text(fails):
        return f"the fails text {fails!r} is printed by any failure; give the test's own message"
    if finding.oracle.kind == "implicit":
        return None
    if test_file is None or not written_by_test(fails, test_file):
        return (
            f"the fails text {fails!r} is not written by the test file itself: in none of its "
            "string literals or assertions' comparisons (only an implicit oracle may rely on "
            "text from the runtime)"
        )
    return None


def own_failure(run: Run, test: str, test_file: str | None, fails: str) -> Failure | None:
    """The failure of the reproduction's own test(s) in ``run``, never other text of the output.

    From the run's per-test failures (the runner's record, JUnit, or the test's section of the
    output) when it has any for this test (or its file's collection error), else from the
    output; the lines that repeat a line of the test file are removed from its text. The first
    failure showing ``fails`` (:func:`shows`) is chosen.
    """
    if run.status != "FAILED":
        return None
    path = test.split("::", 1)[0]
    mine = [
        f for t, f in sorted((run.failures or {}).items())
        if _same_test(t, test) or t == path
    ]  # fmt: skip
    if not mine:
        found = from_output(run.tail[-TAIL_CHARS:], {}, None)
        mine = [found] if found is not None else []
    cleaned = [f.model_copy(update={"text": scrub(f.text, test_file)}) for f in mine]
    as_call = _as_call(fails, test_file)
    seen = [f for f in cleaned if shows(f, fails, as_call)]
    chosen = seen or cleaned
    return chosen[0] if chosen else None


def _as_call(fails: str, test_file: str | None) -> bool:
    """Whether ``fails`` is the test file's own words only as the name of a call it makes."""
    return test_file is not None and only_called(fails, test_file)


def shows(failure: Failure | None, fails: str, as_call: bool = False) -> bool:
    """Whether ``failure`` shows ``fails``. A failure from a runner's record shows what it
    raised (eyeful.failures.own_words: the exception chain's types and messages), never the
    text around it (source, arguments, locals, captured output); one read from text (the
    fallback) shows its message or its text, without the lines that repeat the test file.
    ``as_call``: ``fails`` is the test's own only as the name of a call it makes, shown only
    where the failure names it as called (eyeful.written.named_as_called)."""
    if failure is None:
        return False
    said = own_words(failure) if failure.source == "probe" else [failure.message, failure.text]
    if as_call:
        return any(named_as_called(fails, text) for text in said)
    return any(fails in text for text in said)


def _observe(run: Run | None, test: str, test_file: str | None, fails: str) -> bool:
    """Record on ``run`` what its test's failure was and whether ``fails`` is in it."""
    if run is None:
        return False
    run.failure = own_failure(run, test, test_file, fails)
    as_call = _as_call(fails, test_file)
    run.fails_seen = shows(run.failure, fails, as_call) if run.status == "FAILED" else None
    return bool(run.fails_seen)


def _failing_ids(run: Run, test: str, test_file: str | None, fails: str) -> list[str]:
    """The tests of ``run`` (not a file's collection error) whose own failure shows ``fails``."""
    as_call = _as_call(fails, test_file)
    return sorted(
        t for t, f in (run.failures or {}).items()
        if "::" in t and _same_test(t, test)
        and shows(f.model_copy(update={"text": scrub(f.text, test_file)}), fails, as_call)
    )  # fmt: skip


def _test_id(repro: Repro) -> str:
    return repro.test or repro.path


class GateRunner:
    """Runs the gates for findings of one review; thread-safe through the runner's pool."""

    def __init__(
        self,
        runner: Runner,
        snapshot: Snapshot,
        change_suite: Run | None,
        jobs: int,
        in_change: Callable[[str], bool],
        read_base: Callable[[str], str | None] | None = None,
    ) -> None:
        self.in_change = in_change
        self.read_base = read_base
        """A file of the base, as text (None when it has none): to see whether the change
        edited an existing test file."""
        self.runner = runner
        self.snapshot = snapshot
        self.change_suite = change_suite
        self.jobs = max(1, jobs)
        self.repro_runs = runner.config.repro_runs
        with runner.lock_repo():
            self.changed = without_docstrings(
                runner.repo,
                snapshot.head.tree,
                changed_lines(runner.repo, snapshot.base.tree, snapshot.head.tree),
            )
            collected = [] if change_suite is None else change_suite.test_files()
            rootdir = None if change_suite is None else change_suite.rootdir
            documented = [] if change_suite is None else change_suite.doctest_files()
            # What the probe watches on the change: the changed lines to trace, and every file
            # the change added or edited, for a test that looks at one otherwise than by
            # running it (its text, its size, a function's code object, a child process).
            self.watched: dict[str, frozenset[int]] = {
                **dict.fromkeys(edited_files(runner.repo, snapshot), frozenset()),
                **self.changed,
            }
            # The base's code with the change's tests: where `introduced` runs first.
            self.tested = side_tree(runner.repo, snapshot.base.tree, snapshot.head.tree, collected,
                                    rootdir=rootdir, documented=documented)  # fmt: skip

    def _repro_extra(self, repro: Repro) -> Extra:
        return Extra(files={repro.path: repro.code}) if repro.code is not None else Extra()

    def _last(self, runs: list[Run], verdict: Verdict) -> Run | None:
        verdict.runs += runs
        return runs[-1] if runs and runs[-1].name != "setup" else None

    def verify(
        self,
        finding: Finding,
        test_file: str | None,
        corrector: Callable[[Finding, Verdict], Finding | None] | None = None,
        fixer: Callable[[Finding], Fix | None] | None = None,
    ) -> tuple[Verdict, Finding]:
        """Run every gate that can be reached; return the verdict and the finding as verified.

        ``corrector`` is asked once for a corrected reproduction when the first one fails
        without its fails text; ``fixer`` for a fix when the problem is reproduced and the
        finding brought none. Either may answer None (a fault): the finding then stays as it is.
        """
        verdict = self._reproduce(finding, test_file)
        if verdict.needs_correcting and corrector is not None:
            corrected = corrector(finding, verdict)
            if corrected is not None and corrected.repro is not None:
                earlier = verdict.runs
                finding = corrected
                verdict = self._reproduce(finding, corrected.repro.code)
                verdict.runs = [*earlier, *verdict.runs]
                verdict.corrected = True
        if not verdict.reproduced:
            return verdict, finding
        assert finding.repro is not None
        if finding.fix is None and fixer is not None:
            fix = fixer(finding)
            if fix is not None:
                finding = finding.model_copy(update={"fix": fix})
        repro = finding.repro
        assert repro is not None
        if finding.fix is not None:
            self._fix_gates(verdict, finding, self._repro_extra(repro), _test_id(repro))
        else:
            verdict.fix_note = "no fix was suggested"
        return verdict, finding

    def verify_remembered(
        self,
        finding: Finding,
        test_file: Callable[[Finding], str | None],
        skey: str | None,
        corrector: Callable[[Finding, Verdict], Finding | None] | None,
        fixer: Callable[[Finding], Fix | None] | None,
    ) -> tuple[Verdict, Finding]:
        """:meth:`verify`, with what the agents made of the finding (a corrected reproduction,
        a fix) remembered in the cache: on a hit they are not asked again, and the gates run
        again, live: a cached verdict never makes a finding fail, nor keeps it from failing."""
        snap, config, runner = self.snapshot, self.runner.config, self.runner
        key = cache_key(
            kind="verdict",
            head=snap.head.tree,
            base=snap.base.tree,
            finding=finding.model_dump(mode="json"),
            test_file=test_file(finding),
            commands=config.commands.model_dump(),
            agent=None if config.agent is None else config.agent.model_dump(mode="json"),
            setup=skey,
            junit=config.junit,
            timeout=config.timeout,
            environment=runner.environment_key(),
        )
        hit = runner.cache.get("verdicts", key, _remembered)
        if hit is not None:
            earlier, final = hit
            verdict, final = self.verify(final, test_file(final))
            verdict.corrected = verdict.corrected or earlier.corrected
            return verdict, final
        verdict, final = self.verify(finding, test_file(finding), corrector, fixer)
        if not any(r.status == "ERROR" for r in verdict.runs):
            value = {
                "verdict": verdict.model_dump(mode="json"),
                "finding": final.model_dump(mode="json"),
            }
            runner.cache.put("verdicts", key, value)
        return verdict, final

    def _repeated(
        self,
        verdict: Verdict,
        tree: str,
        side: str,
        test: str,
        extra: Extra,
        test_file: str | None,
        fails: str,
    ) -> list[Run | None]:
        """The reproduction run ``repro_runs`` times on ``tree`` in parallel: each run's last
        step (None where setup failed), with its own failure recorded. Refused when the test
        cannot be put on the tree.

        Only the first run on the change is traced (the lines it ran, what it looked at): a
        tracer slows the code and shows in ``sys.gettrace()``, so a test it alone fails (a
        timing, say) ends the traced run unlike the others, which `not_flaky` then sees, and
        never makes the change fail where the untraced base passes."""

        def nth(index: int) -> list[Run]:
            trace = self.watched if side == "change" and index == 0 else None
            return self.runner.one(tree, side, test, extra, trace=trace, from_root=True)

        batches = parallel_map(nth, list(range(self.repro_runs)), self.jobs)
        finals = [self._last(runs, verdict) for runs in batches]
        for run in finals:
            _observe(run, test, test_file, fails)
        return finals

    def _on_change(self, path: str) -> str | None:
        """A file of the change's tree, as text (None when it has none)."""
        with self.runner.lock_repo():
            try:
                entry = tree_at(self.runner.repo, self.snapshot.head.tree)[path]
                return blob_at(self.runner.repo, entry.id).data.decode("utf-8", "replace")
            except (KeyError, ValueError):
                return None

    def _raised_by_change(self, failure: Failure | None) -> bool:
        """Whether ``failure`` was raised by a ``raise`` statement on a line the change wrote."""
        if failure is None or not failure.raised_in or not failure.raised_line:
            return False
        if failure.raised_line not in self.changed.get(failure.raised_in, frozenset()):
            return False
        text = self._on_change(failure.raised_in)
        if text is None:
            return False
        lines = text.splitlines()
        if failure.raised_line > len(lines):
            return False
        return lines[failure.raised_line - 1].lstrip().startswith("raise")

    def _reproduce(self, finding: Finding, test_file: str | None) -> Verdict:
        """The first four gates."""
        verdict = Verdict()
        repro = finding.repro
        assert repro is not None
        problem = fails_text_problem(finding, test_file)
        if repro.code is not None and self.in_change(repro.path):
            problem = f"{repro.path} exists in the change; a reproduction must be a new file"
        elif repro.code is None and not self.in_change(repro.path):
            problem = f"{repro.path} names an existing test, but it is not in the change"
        if problem is not None:
            verdict.refused = problem
            return verdict
        extra = self._repro_extra(repro)
        test = _test_id(repro)
        head, base = self.snapshot.head.tree, self.snapshot.base.tree
        try:
            finals = self._repeated(verdict, head, "change", test, extra, test_file, repro.fails)
        except Refused as err:
            verdict.refused = str(err)
            return verdict
        first = finals[0]
        if first is None or first.status == "ERROR":
            why = "setup failed" if first is None else (first.reason or "it did not finish")
            verdict.set("runs", False, f"the test could not run on the change: {why}")
            return verdict
        verdict.change_tail = first.tail
        # The first run is the traced one (`_repeated`).
        verdict.ran_change = _ran(first, self.changed, test)
        read = {
            p for r in finals if r is not None for p in r.read_as_text or () if p in self.watched
        }
        verdict.read_as_text = sorted(read)
        for r in finals:
            for path, how in ((r.looked or {}) if r is not None else {}).items():
                if path in read:
                    verdict.looked.setdefault(path, how)
        verdict.set("runs", True, f"ran on the change: {first.status}")
        ends = {(r.status, bool(r.fails_seen)) if r else ("SETUP", False) for r in finals}
        if len(ends) != 1:
            summary = ", ".join(r.status if r else "setup failed" for r in finals)
            verdict.set("not_flaky", False, f"{self.repro_runs} runs ended differently: {summary}")
            return verdict
        verdict.set("not_flaky", True, f"{self.repro_runs} runs, all {first.status}")
        if first.status != "FAILED":
            verdict.set("fails_as_claimed", False, "the test passes on the change")
            return verdict
        verdict.failure = first.failure
        verdict.raised_by_change = self._raised_by_change(first.failure)
        verdict.through_change = through_changed_function(
            first.failure, self.changed, self._on_change
        )
        if not first.fails_seen:
            verdict.needs_correcting = True
            got = _said(first.failure)
            verdict.set(
                "fails_as_claimed",
                False,
                f"the test's failure ({got}) does not show {repro.fails!r}{_read(first.failure)}"
                ": it needs correcting",
            )
            return verdict
        verdict.set(
            "fails_as_claimed", True, f"its failure shows {repro.fails!r}{_read(first.failure)}"
        )
        failing = _failing_ids(first, test, test_file, repro.fails)
        if self.tested != base:
            # The base's code with the change's tests (eyeful/testside.py): a test made
            # stricter, or fed a new case, is not a problem the change's code brought.
            decided = self._introduced(
                verdict, self.tested, test, extra, repro, test_file, failing, edited=True
            )
            if decided is not None:
                return verdict
            # It told nothing there (it could not run, its test did not): the base as it is
            # decides, as for a test side the change left alone.
        self._introduced(verdict, base, test, extra, repro, test_file, failing)
        return verdict

    def _introduced(
        self,
        verdict: Verdict,
        base: str,
        test: str,
        extra: Extra,
        repro: Repro,
        test_file: str | None,
        failing: list[str],
        edited: bool = False,
    ) -> bool | None:
        """As many runs on the base as on the change; any failure there showing the fails text
        makes the problem pre-existing. ``failing`` are the tests whose failure showed it on
        the change: each must have run in every base run (a run of a file the base has an
        older copy of passes without the test the change added to it).

        ``edited``: ``base`` is the base's code with the change's test side (its test files as
        the change wrote them). Failing there with the text, the problem is pre-existing (a test
        made stricter fails the old code too); passing with each failing test run, introduced.
        Anything else (it could not run, its test did not) sets no gate and returns None."""
        version = " (with the change's tests)" if edited else ""
        try:
            finals = self._repeated(verdict, base, "base", test, extra, test_file, repro.fails)
        except Refused as err:
            if edited:
                return None
            return verdict.set("introduced", False, f"could not put the test on the base: {err}")
        same = sum(1 for r in finals if r is not None and r.fails_seen)
        if same:
            verdict.base_passed = False
            return verdict.set(
                "introduced",
                False,
                f"fails the same way on the base{version} ({same} of {self.repro_runs} runs): "
                "pre-existing",
            )
        repo, lock = self.runner.repo, self.runner.lock_repo()
        on_base = located(repo, base, lock)
        on_change = located(repo, self.snapshot.head.tree, lock)
        one_cause = sum(
            1
            for r in finals
            if r is not None and same_cause(r, verdict.failure, on_base, on_change)
        )
        if one_cause:
            verdict.base_passed = False
            return verdict.set(
                "introduced",
                False,
                f"fails on the base{version} by the same cause ({one_cause} of "
                f"{self.repro_runs} runs: the same exception at the same line, numbers aside), "
                "whatever its message: pre-existing",
            )
        if edited and any(r is None or r.status == "ERROR" for r in finals):
            return None
        if any(r is None or r.status == "ERROR" for r in finals):
            broken = next(r for r in finals if r is None or r.status == "ERROR")
            why = "setup failed" if broken is None else broken.reason
            return verdict.set("introduced", False, f"the test could not run on the base: {why}")
        own_copy = repro.code is None and repro.test is None and not edited
        unshown = not_run_on_base(failing, [r for r in finals if r is not None], own_copy)
        unshown = unshown or skipped_on_base(failing, [r for r in finals if r is not None])
        if unshown is not None:
            return None if edited else verdict.set("introduced", False, unshown)
        alike = sum(
            1 for r in finals if r is not None and failed_alike(r, verdict.failure, repro.path)
        )
        if alike:
            failure = verdict.failure
            assert failure is not None  # failed_alike holds only with one
            return verdict.set(
                "introduced",
                False,
                f"fails on the base{version} too ({alike} of {self.repro_runs} runs: "
                f"{failure.type} raised in {failure.raised_in}, in other words): not shown to be "
                "brought by the change",
            )
        statuses = sorted({r.status for r in finals if r is not None})
        verdict.base_passed = statuses == ["PASSED"]
        renamed = None
        if not verdict.base_passed:
            renamed = renamed_from_base(repo, base, self.snapshot.head.tree, verdict.failure, lock)
        if renamed is not None:
            return verdict.set(
                "introduced",
                False,
                f"fails on the base{version} too ({', '.join(statuses)}: it cannot reach the "
                f"code there), and what raised on the change is the base's {renamed} under "
                "another name, alike: not shown to be brought by the change",
            )
        return verdict.set("introduced", True, f"on the base{version}, {self.repro_runs} runs: "
                           f"{', '.join(statuses)}")  # fmt: skip

    def _fix_gates(self, verdict: Verdict, finding: Finding, extra: Extra, test: str) -> None:
        assert finding.fix is not None and finding.repro is not None
        head = self.snapshot.head.tree
        fixed = Extra(files=extra.files, patch=finding.fix.diff)
        try:
            if finding.repro.path in fixed.patch_paths():
                verdict.fix_note = "the fix edits the test, so it is not verified"
                verdict.set("fail_to_pass", False, verdict.fix_note)
                return
            with_fix = self._last(
                self.runner.one(head, "fix", test, fixed, from_root=True), verdict
            )
        except Refused as err:
            verdict.fix_note = str(err)
            verdict.set("fail_to_pass", False, str(err))
            return
        if with_fix is None or with_fix.status != "PASSED":
            status = "setup failed" if with_fix is None else with_fix.status
            verdict.set("fail_to_pass", False, f"with the fix the test still ends {status}")
            return
        verdict.set("fail_to_pass", True, "with the fix the test passes")
        suite = self._last(self.runner.suite(head, "fix", fixed), verdict)
        ok, detail = self._pass_to_pass(suite, test)
        verdict.set("pass_to_pass", ok, detail)
        verdict.fix_verified = ok

    def _pass_to_pass(self, suite: Run | None, test: str) -> tuple[bool, str]:
        if suite is None or suite.status == "ERROR":
            return False, "the suite could not run with the fix"
        if suite.status == "PASSED":
            return True, "the whole suite passes with the fix"
        before = self.change_suite
        if before is None or not before.names_known or not suite.names_known:
            return False, "the suite fails with the fix and names no tests to compare"
        newly = sorted(t for t in suite.failing - before.failing if not _same_test(t, test))
        if newly:
            shown = ", ".join(newly[:5])
            return False, f"with the fix, tests that passed on the change fail: {shown}"
        return True, "no test that passed on the change fails with the fix"


def _same_test(test_id: str, repro_id: str) -> bool:
    """Whether ``test_id`` is the reproduction's test (a file, a function, its parameters or
    Go subtests; unittest's dotted ids, of a module or of the file's module)."""
    root = repro_id.rstrip("/")
    if test_id == repro_id or test_id.startswith((root + "::", root + "[", root + "/")):
        return True
    module = root.removesuffix(".py").replace("/", ".") if "::" not in root else None
    return module is not None and (test_id == module or test_id.startswith(module + "."))


def _read(failure: Failure | None) -> str:
    """What a gate adds when the failure was read from text: the fallback, labelled."""
    if failure is None or failure.source == "probe":
        return ""
    return f" (read from the runner's {failure.source}, a fallback: no record of the exception)"


def _said(failure: Failure | None) -> str:
    if failure is None:
        return "none recorded"
    said = f"{failure.type}: {failure.message}" if failure.type else failure.message
    if failure.type and failure.message.startswith(failure.type):
        said = failure.message
    return said[:200] or "no message"


def _remembered(entry: dict[str, Any]) -> tuple[Verdict, Finding]:
    return Verdict.model_validate(entry["verdict"]), Finding.model_validate(entry["finding"])


def _ran(run: Run, changed: ChangedLines, test: str) -> bool | None:
    """Whether a reproduction's run executed a line the change touched: while its test ran; in a
    function or class body while its own module was collected (a decorator the module applied);
    at import in a file whose code the test then ran (a module's constant its functions read:
    not a line of a module the test only imported, or read as text); or, for a test whose
    failure was its module's import, while the modules were collected. Entering a function
    that holds a changed line runs the change too, whichever of its lines ran (how it compiles
    may differ: a name an unreached assignment made local, helper-74)."""
    seen = touched(run.executed, changed)
    if seen is not None and run.edited_entered:
        return True
    module = test.partition("::")[0]
    if not seen and module in (run.executed_in_module or {}):
        seen = touched((run.executed_in_module or {})[module], changed) or seen
    used = set(run.entered or ())
    if not seen and used:
        early = {p: lines for p, lines in (run.executed_at_import or {}).items() if p in used}
        seen = touched(early, changed) or seen
    if not seen and run.failure is not None and run.failure.kind == "collection":
        return touched(run.executed_at_import or {}, changed) or seen
    return seen
