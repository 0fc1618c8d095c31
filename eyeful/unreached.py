"""The facts clean needs beyond the change's own run: the tests it did not reach, run by id, and
the base's word on the tests it skipped (eyeful/claims.py derives what they mean).

- A change run that stopped early (`-x`, `--maxfail`, a test calling `pytest.exit`) collected
  tests it never ran. They run on the change by id with `test_one`, again while that reaches
  more of them (a command with `-x` stops at each failure); a test that ends the session every
  time it runs is set aside. What still did not run is ``incomplete`` (exit 3).
- A test skipped on the change runs on the base by id (one command for all of them), unless the
  base's cached suite run skipped it too; so does one that run passed and the change's run did
  not collect although the change still defines it. One that passed live there is a question
  naming the skip's reason.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pygit2

from eyeful import claims
from eyeful.cache import cache_key
from eyeful.claims import Incomplete, Seen
from eyeful.evidence import FAILING
from eyeful.focus import passable
from eyeful.regressions import exists_in_tree, file_unchanged, in_run, names, newly_skipped
from eyeful.report import Report
from eyeful.runs import Run, Runner, suite_run
from eyeful.snapshot import EMPTY_TREE, Snapshot
from eyeful.testids import id_path
from eyeful.testside import (
    collection_changed,
    command_files,
    left_out_tests,
    named_configs,
    read_text,
    renamed_files,
    renamed_out_id,
    tests_renamed_out,
)

_ROUNDS = 8
"""Commands run on the change to reach the tests a stopped run did not: each reaches at least
one more (or sets one aside), so a suite with many failures under `-x` is cut short here."""


def reach_every_test(
    runner: Runner, repo: pygit2.Repository, snap: Snapshot, report: Report, change: Run
) -> Run:
    """What clean needs of the change's run beyond itself: the tests it did not reach, run by
    id; the tests it skipped, on the base. Into ``report``; returns the change's run with the
    tests it reached by id."""
    reached = catch_up(runner, snap.head.tree, change)
    report.runs += reached.runs
    if reached.incomplete is not None:
        report.did_not_run(reached.incomplete)
    if snap.base.tree == EMPTY_TREE:
        return reached.change
    silent = _named_nothing(change) and _silent_where_the_base_recorded(
        runner, snap.base.tree, change, report
    )
    if silent:
        report.did_not_run(silent)
        return reached.change
    skips = _skips_on_base(runner, repo, snap, report, reached.change)
    _ask(report, reached.change, skips)
    return reached.change


def _skips_on_base(
    runner: Runner, repo: pygit2.Repository, snap: Snapshot, report: Report, change: Run
) -> Skips:
    """The base's word on the tests the change skipped or no longer collects. Which of the
    base's tests the change no longer collects needs a run of the base's suite: the cached one,
    else one run where the change edits what decides collection, where the change's run took
    collected tests out (a hook or `-k`/`-m` deselected them or a hook dropped them, pytest would
    not collect a class, a test module sits uncollected beside collected ones, a Go package ran
    none of its tests: the code decides each), where its collection left out a directory or
    test module of the tree by a conftest's or hook's word (a `collect_ignore` the code
    computes, a `pyvenv.cfg`), under any unittest command (no probe says what its loader, or a
    module's ``load_tests``, left out), or where it skipped tests under ids the base does not
    have (new parametrize ids: the base's own ids may be gone)."""
    base = snap.base.tree

    def on_base(test: str) -> bool:
        with runner.lock_repo():
            return exists_in_tree(repo, base, test)

    @functools.cache
    def moved_to() -> dict[str, str]:
        """The files the change renamed, by their path on the base (asked only for a test the
        change's run did not collect: not on every review)."""
        with runner.lock_repo():
            return {old: new for new, old in renamed_files(repo, base, snap.head.tree).items()}

    def on_change(test: str) -> str:
        """``test``'s id on the change: in the file the change renamed its file to."""
        path = id_path(test)
        renamed = moved_to()
        return renamed[path] + test[len(path) :] if path in renamed else test

    def on_head(test: str) -> bool:
        """Whether the change still defines ``test``: in its file, or where it renamed it, or
        under a name no runner collects (``_test_mul``: helper-79); or its file is the base's (a
        class `load_tests` makes: the change did not take it away)."""
        with runner.lock_repo():
            return (
                exists_in_tree(repo, snap.head.tree, on_change(test))
                or file_unchanged(repo, base, snap.head.tree, test)
                or renamed_out_id(test, tests_renamed_out(repo, base, snap.head.tree))
            )

    def named_by(run: Run) -> Callable[[str], bool]:
        """:func:`on_head`, for a test a run on another tree names (the last review's change):
        only one the base defines, or whose file there is that tree's (helper-54: a test the
        last review's change added, in a file the base has otherwise, ran on the base by id,
        not found, then the base's whole suite)."""

        def check(test: str) -> bool:
            if not on_head(test):
                return False
            with runner.lock_repo():
                return exists_in_tree(repo, base, test) or file_unchanged(
                    repo, run.tree, base, test
                )

        return check

    def asked(hint: Run | None) -> Skips:
        # Without the base's own, the suite's latest run on another tree (the last review's
        # change, say) says which tests to look for; a test it names runs on the base live.
        gone = disappeared(change, hint, on_head, on_change) if hint is not None else {
            test: why for run in earlier
            for test, why in disappeared(change, run, named_by(run), on_change).items()
        }  # fmt: skip
        skips = skipped_on_change(runner, base, change, hint, on_base, gone)
        report.runs += skips.runs
        return skips

    hint = runner.cached_suite(base, "base")
    # (read only where they can tell something: no base run cached, a whole-suite change run)
    earlier = (
        runner.recent_suites("base", snap.head.tree) if hint is None and _comparable(change) else []
    )
    if hint is None and _comparable(change):
        with runner.lock_repo():
            command = runner.config.commands.test or ""
            # No probe runs under unittest: what its loader left out without a word (a test the
            # code's decorator made None: helper-79) shows only beside the base's suite (an
            # earlier run on another tree may not have had the test: helper-81).
            changed = change.tests_from == "unittest" or (
                collection_changed(repo, base, snap.head.tree, _configs(repo, snap, command))
                is not None
            )
            if not changed and change.left_out:
                changed = left_out_tests(repo, snap.head.tree, change.left_out, command) is not None
        if changed or change.narrowed:
            hint = _base_suite(runner, base, report)
    skips = asked(hint)
    if skips.unknown and hint is None and _comparable(change):
        hint = _base_suite(runner, base, report)
        if hint is not None:
            skips = asked(hint)
    return skips


def _configs(repo: pygit2.Repository, snap: Snapshot, command: str) -> frozenset[str]:
    """The files a test command names as pytest's configuration, or runs or reads (a script,
    a Makefile, and what they name in turn, on either side)."""

    def read(path: str) -> str | None:
        return read_text(repo, snap.head.tree, path) or read_text(repo, snap.base.tree, path)

    return named_configs(command) | command_files(command, read)


def _ask(report: Report, change: Run, skips: Skips) -> None:
    """The tests the change skipped that passed on the base: questions (exit 3); those the base's
    runs did not name: a line."""
    made_skip = newly_skipped(change, skips.passed_on_base)
    report.other_failures += made_skip
    if made_skip:
        report.note(
            f"{names([f.test for f in made_skip])} passed on the base and did not run on the "
            "change (skipped or not collected): what they check went unchecked", unverified=True,
        )  # fmt: skip
    if skips.unknown:
        report.note(
            f"{names(skips.unknown)} skipped on the change: whether they passed on the base "
            "could not be told (no run there named them)", unverified=False,
        )  # fmt: skip


def _named_nothing(change: Run) -> bool:
    """A whole run that passed without the record its runner keeps: one whose text named no
    test (a wrapper whose pytest ended before eyeful's probe loaded, say), or one of a command
    that runs pytest that the probe did not record (`pytest && python -m unittest`, whose
    unittest's record is all there is: helper-69). What it ran is not known."""
    if change.status != "PASSED" or change.selected:
        return False
    if change.tests_from in ("output", "junit", None) and not change.tests and not change.counts:
        return True
    # (another runner's record: a pytest read from its text is read so on the base too)
    return "pytest" in change.command and change.tests_from in ("unittest", "go-json")


def _silent_where_the_base_recorded(
    runner: Runner, base: str, change: Run, report: Report
) -> Incomplete | None:
    """The change's run lacks its runner's record (:func:`_named_nothing`): the base's run of
    the same command (cached, else live) that named its tests (in any words, where the change's
    named none; else by the probe's record) says the command runs them, and the change's never
    got to them (helper-66: the ini's `-p` plugin imported code that now exits 0, before the
    probe loaded). None where the base's names none either: a runner eyeful does not read,
    whose exit code is all there is."""
    # (Not the command's recent runs: an earlier review's silent change would answer for it,
    # helper-69. The base's run is cached: asked once a base.)
    base_run = _base_suite(runner, base, report)
    if base_run is None:
        return None
    recorded = len(base_run.collected or base_run.tests or {}) or sum(
        (base_run.counts or {}).values()
    )
    silent = change.tests_from in ("output", "junit", None)
    # Named no test where the base named some (read from its text too: helper-70), or another
    # runner's record where the base's pytest kept the probe's.
    if not recorded or not (silent or base_run.tests_from == "probe"):
        return None
    return Incomplete(
        side="change",
        tests=recorded,
        why=(
            f"the test command exited 0 without what its run on the base named of {recorded} "
            f"tests (read from {base_run.tests_from}): its runner ended before it ran them (a "
            "plugin or a conftest.py, or what they import, exited)"
        ),
        reached_no_test=True,
    )


def _comparable(change: Run) -> bool:
    """Whether the change's run says which tests it collected, of the whole suite."""
    return change.collected is not None and not change.selected


def _base_suite(runner: Runner, base: str, report: Report) -> Run | None:
    """The base's suite (its code and its tests), to compare the change's collection with."""
    runs = runner.suite(base, "base")
    report.runs += runs
    suite = suite_run(runs)
    return None if suite is None or suite.status == "ERROR" else suite


@dataclass
class Reached:
    """The change's run with the tests it had not reached run by id, and what still did not run."""

    change: Run
    runs: list[Run] = field(default_factory=list)
    incomplete: Incomplete | None = None


def _can_focus(runner: Runner, tests: list[str]) -> bool:
    return runner.alone.how() is not None and all(map(passable, tests))


def _why_not_by_id(runner: Runner) -> str:
    if runner.alone.how() is None:
        return runner.alone.why_none()
    return "an id is not one eyeful passes to a command (README: how test ids reach `test_one`)"


def catch_up(runner: Runner, tree: str, change: Run) -> Reached:
    """The tests ``change`` collected and never ran, run on ``tree`` by id."""
    todo = claims.unrun(change.collected, dict(change.tests or {}))
    if change.stopped and change.status != "ERROR" and (change.collected is None or not todo):
        # Read from text, or a runner that names only the tests it started (go, unittest): which
        # tests it did not reach is not known.
        why = f"the run did not cover every test: {change.stopped}"
        return Reached(change, incomplete=Incomplete(side="change", tests=0, why=why))
    if not todo:
        return Reached(change)
    why = claims.stop_cause(change.command, change.exit_code, change.status, change.tail)
    if not _can_focus(runner, todo):
        return Reached(change, incomplete=Incomplete(
            side="change", tests=len(todo), ids=todo[:5],
            why=f"{why}, and they cannot be run by id: {_why_not_by_id(runner)}",
        ))  # fmt: skip
    out = Reached(change)
    tests, failures = dict(change.tests or {}), dict(change.failures or {})
    skips = dict(change.skips or {})
    ends_session: list[str] = []
    for _ in range(_ROUNDS):
        if not todo:
            break
        batch = runner.one(tree, "change", todo)
        out.runs += batch
        run = next((r for r in reversed(batch) if r.name == "test_one"), None)
        got = {t: o for t, o in ((run.tests or {}) if run else {}).items() if t in todo}
        if run is not None:  # a module that did not collect is a failure of its own id
            got |= {t: o for t, o in (run.tests or {}).items() if o in FAILING and t not in tests}
        if not got:
            if run is None or run.status == "ERROR":
                break  # the command itself could not run them
            ends_session.append(todo.pop(0))  # it ends the session every time it runs
            continue
        tests |= got
        failures |= {t: f for t, f in (run.failures or {}).items() if t in got} if run else {}
        skips |= {t: r for t, r in (run.skips or {}).items() if t in got} if run else {}
        todo = [t for t in todo if t not in got]
    left = ends_session + todo
    failing = any(o in FAILING for o in tests.values())
    out.change = change.model_copy(
        update={
            "tests": tests, "failures": failures or None, "skips": skips or None,
            "status": "FAILED" if failing else change.status,
            "stopped": f"{len(left)} collected tests did not run" if left else None,
        }
    )  # fmt: skip
    if left:
        because = f"{why}; run by id, " + (
            f"{names(ends_session)} ended the session each time" if ends_session
            else "they still did not run"
        )  # fmt: skip
        out.incomplete = Incomplete(side="change", tests=len(left), ids=left[:5], why=because)
    return out


@dataclass
class Skips:
    """What the base said of the tests skipped on the change."""

    passed_on_base: dict[str, str] = field(default_factory=dict)
    """Skipped on the change, passed live on the base: test id -> the skip's reason."""
    runs: list[Run] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    """Skipped on the change; the base's runs did not say what they are there."""


_NOT_COLLECTED = "its definition is still there"
_XFAILED = "an xfail: whether it fails there says nothing of the change"
_XPASSED = "marked xfail: an XPASS on the base; the change broke what it checks, or it is flaky"
_HELD = ("skipped", "xfailed")
"""What a test the change's run held back ended as: skipped, or failing as expected (an `xfail`
whose condition the change may have turned on)."""
_NOT_RUN = ("skipped", "xfailed", "xpassed")
"""What a base's test that ran to no verdict ended as: skipped, or marked as a known failure
(an XPASS is marked too)."""


def disappeared(
    change: Run,
    hint: Run | None,
    on_head: Callable[[str], bool],
    on_change: Callable[[str], str] = str,
) -> dict[str, str]:
    """Tests the base's cached suite run (a pointer only) passed that the change's whole-suite
    run did not collect, though the change still defines them (``on_change``: a test's id on the
    change, its file renamed): test id -> why."""
    if hint is None or hint.collected is None or change.collected is None or change.selected:
        return {}
    collected = set(change.collected) | set(change.tests or {})
    passed = [t for t in hint.collected if (hint.tests or {}).get(t) == "passed"]
    missing = [t for t in passed if t not in collected and on_change(t) not in collected]
    # A test module that failed to import on the change is one failure, its tests not gone.
    broken = [t for t, o in (change.tests or {}).items() if o == "error" and _module_id(t)]
    missing = [t for t in missing if not any(_in_module(on_change(t), m) for m in broken)]
    # A function the change runs under other ids (parametrized, its ids renamed) has not gone:
    # unless it holds back (skips, xfails) ids the base did not have (ids renamed to hide), or
    # runs under fewer ids than the base collected (a case the code no longer lists).
    ran: set[str] = set()
    held: set[str] = set()
    known = hint.tests or {}
    for test, outcome in (change.tests or {}).items():
        if outcome not in _HELD:
            ran.add(_function(test))
        elif test not in known:
            held.add(_function(test))
    before = Counter(map(_function, hint.collected))
    now = Counter(_function(on_change(t)) for t in collected)

    def gone(test: str) -> bool:
        function = _function(on_change(test))
        fewer = now[function] < before[_function(test)]
        return function not in ran or function in held or fewer

    return {t: _NOT_COLLECTED for t in missing if on_head(t) and gone(t)}


def _module_id(test: str) -> bool:
    """Whether ``test`` names a module (a collection error's id): pytest's path, unittest's
    dotted name; never a Go package's (a path with a dot in it)."""
    return test.endswith(".py") if "::" not in test and "/" in test else "::" not in test


def _in_module(test: str, module: str) -> bool:
    if module.endswith(".py"):
        return id_path(test) == module
    return test.startswith(module + ".")


def _function(test: str) -> str:
    """A test id without its parameters: the function it runs."""
    return test.split("[", 1)[0]


def skipped_on_change(
    runner: Runner,
    base_tree: str,
    change: Run,
    hint: Run | None,
    on_base: Callable[[str], bool],
    gone: dict[str, str] | None = None,
) -> Skips:
    """Each test ``change`` skipped (and each it no longer collects: ``gone``), on the base:
    live, by id; one the base does not have (``on_base``), or its cached suite run (``hint``)
    skipped too, is not run (it is new, or its skip held)."""
    gone = gone or {}
    outcomes = change.tests or {}
    xfailed = {t: _XFAILED for t, o in outcomes.items() if o == "xfailed"}
    reasons = {**xfailed, **dict(change.skips or {}), **gone}
    skipped = sorted(t for t, o in outcomes.items() if o in _HELD and on_base(t))
    if hint is not None and hint.tests is not None and hint.collected is not None:
        skipped = [t for t in skipped if _ran_there(hint, t, t in xfailed)]
    skipped += sorted(gone)
    out = Skips()
    if not skipped:
        return out
    if not _can_focus(runner, skipped):
        _in_a_live_base_suite(runner, base_tree, hint, skipped, xfailed, reasons, out)
        return out
    cached = _skipped_there(runner, base_tree, skipped)
    if cached is not None:
        out.runs = [cached]
    else:
        out.runs = runner.one(base_tree, "base", skipped, grouped=True)
    # One command for them all (pytest), or one per id (go, unittest): each names its own.
    runs = [r for r in out.runs if r.name == "test_one"]
    if cached is None and runs and all(r.status != "ERROR" for r in runs):
        merged = _merged(runs)
        runner.cache.put("skips", _key(runner, base_tree, skipped), merged.model_dump(mode="json"))
    xpassed = [t for t in skipped if t in xfailed and _outcome(runs, t) == "xpassed"]
    flaky = _passes_again(runner, change, xpassed, out)
    for test in skipped:
        there = _seen(runs, test)
        passed = _outcome(runs, test) == "passed"
        if test in flaky:
            continue  # it passes on the change too, at another run
        if test in xpassed:
            reasons[test] = _XPASSED  # helper-53: an XPASS there, an XFAIL here, every time
        elif test in xfailed and runs and not passed:
            continue  # failing as expected on the base too
        if claims.skip_kind(there) or (test in gone and _passed_live(hint, test)):
            # (A test the change no longer collects that the base's suite, run live in this
            # review, passed: its run by id may not reach it, as a class load_tests makes.)
            out.passed_on_base[test] = reasons.get(test, "")
        elif there == "unknown":
            out.unknown.append(test)
    _in_the_base_suite(runner, base_tree, hint, out)
    return out


def _outcome(runs: list[Run], test: str) -> str | None:
    """What the run naming ``test`` among ``runs`` ended it as."""
    return next((r.tests[test] for r in runs if r.tests and test in r.tests), None)


def _passes_again(runner: Runner, change: Run, tests: list[str], out: Skips) -> set[str]:
    """Of the tests the change's run failed as expected (xfail) and the base's passed (XPASS),
    those that pass when run alone on the change too, and in its suite run again: a flaky test,
    not the change. (One that fails in the suite every time fails by the tests before it, a
    cache they warm: helper-55.)"""
    if not tests:
        return set()
    runs = runner.one(change.tree, "change", tests, grouped=True)
    out.runs += runs
    alone = {t for t in tests if _outcome(runs, t) in ("passed", "xpassed")}
    if not alone:
        return alone
    again = runner.suite(change.tree, "change", live=True)
    out.runs += again
    suite = suite_run(again)
    if suite is None or suite.status == "ERROR":
        return set()
    return {t for t in alone if (suite.tests or {}).get(t) in ("passed", "xpassed")}


def _ran_there(hint: Run, test: str, xfailed: bool) -> bool:
    """Whether the base's cached suite ran ``test`` to a verdict: not skipped, nor marked as a
    known failure, unless it passed there marked so (an XPASS, for a test the change's run
    has failing as expected)."""
    outcome = (hint.tests or {}).get(test)
    return outcome not in (*_NOT_RUN, None) or (xfailed and outcome == "xpassed")


def _passed_live(hint: Run | None, test: str) -> bool:
    return hint is not None and not hint.cached and in_run(hint, test) == "passed"


def _seen(runs: list[Run], test: str) -> Seen:
    """What the runs of some tests by id said of ``test``: the one that names it decides (each
    of the others, run for another id, has it absent)."""
    said = [in_run(run, test) for run in runs]
    for word in ("passed", "failed", "unknown"):
        if word in said:
            return word
    return "absent" if said else "unknown"


def _merged(runs: list[Run]) -> Run:
    """Runs of tests by id, one per id, as one run (for the cache): their outcomes together."""
    if len(runs) == 1:
        return runs[0]
    tests = {t: o for run in runs for t, o in (run.tests or {}).items()}
    collected = [t for run in runs for t in (run.collected or [])]
    skips = {t: r for run in runs for t, r in (run.skips or {}).items()}
    return runs[-1].model_copy(update={
        "tests": tests, "skips": skips or None,
        "collected": collected if all(r.collected is not None for r in runs) else None,
        "status": "FAILED" if any(r.status == "FAILED" for r in runs) else runs[-1].status,
    })  # fmt: skip


def _in_a_live_base_suite(
    runner: Runner,
    base_tree: str,
    hint: Run | None,
    skipped: list[str],
    xfailed: dict[str, str],
    reasons: dict[str, str],
    out: Skips,
) -> None:
    """The skipped tests that cannot be run by id, looked for in a live suite run on the base."""
    suite = _live_base_suite(runner, base_tree, hint, out)
    for test in skipped:
        there = in_run(suite, test)
        if test in xfailed and _outcome([] if suite is None else [suite], test) == "xpassed":
            reasons[test] = _XPASSED  # an XPASS there, an XFAIL here (no run by id to tell)
        if claims.skip_kind(there):
            out.passed_on_base[test] = reasons.get(test, "")
        elif there == "unknown":
            out.unknown.append(test)


def _in_the_base_suite(runner: Runner, base_tree: str, hint: Run | None, out: Skips) -> None:
    """The tests that passed alone on the base but were skipped in the change's suite, looked
    for in a live suite run on the base where none is cached: one the base's suite skips too
    was skipped by the suite's order (a cache an earlier test warmed), as on the change, not by
    the change; the sides are compared in one context. Run alone on the change instead, a skip
    the change causes only in the suite (its code leaves a flag set) passed: a false clean."""
    if not out.passed_on_base or hint is not None:
        return  # a suite run of the base already kept those it skipped out (skipped_on_change)
    suite = _live_base_suite(runner, base_tree, hint, out)
    if suite is None or suite.status == "ERROR":
        return
    for test in list(out.passed_on_base):
        # Skipped there too, or not in the base's suite at all (an id run by name bypasses
        # `testpaths`: a test another branch's configuration collected): no question.
        there = (suite.tests or {}).get(test)
        if there == "xpassed" and out.passed_on_base[test] == _XPASSED:
            continue  # passed marked xfail there too: what the question is about
        if there in _NOT_RUN or in_run(suite, test) == "absent":
            del out.passed_on_base[test]


def _live_base_suite(runner: Runner, base_tree: str, hint: Run | None, out: Skips) -> Run | None:
    """The base's suite, run live: the one this review ran (``hint``, when not cached), else
    one run now (into ``out``); a cached one only says where to look."""
    if hint is not None and not hint.cached:
        return hint
    runs = runner.suite(base_tree, "base", live=True)
    out.runs += runs
    return suite_run(runs)


def _key(runner: Runner, tree: str, tests: list[str]) -> str:
    commands = runner.config.commands
    return cache_key(suite=runner.suite_key(tree), test_one=commands.test_one, tests=tests)


def _skipped_there(runner: Runner, tree: str, tests: list[str]) -> Run | None:
    """A cached run of ``tests`` on the base in which none passed: their skips held there (so
    a review asked again runs nothing more). One in which a test passed is not served: that is a
    question, and a question is asked on a live run only."""
    cached = runner.cache.get(
        "skips", _key(runner, tree, tests),
        lambda entry: Run.model_validate({**entry, "cached": True}),
    )  # fmt: skip
    if cached is None or any(in_run(cached, t) == "passed" for t in tests):
        return None
    return cached
