"""The live runs behind a regression: the change's failing tests run on their own, on each side.

When the change fails, the base's evidence comes from its cached suite run if there is one,
otherwise from `test_one` runs of just the failing tests on the base (a focused run costs a
fraction of the suite). Every test that could still be a regression is then run alone `reruns`
times on the change and on the base, in parallel worktrees and never from the cache, so a cached
or stale result can save time but never block on its own. Several ids go in one command where the
runner takes several (pytest).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pygit2

from eyeful import focus
from eyeful.failures import same_failure
from eyeful.focus import passable
from eyeful.regressions import (
    Evidence,
    Seen,
    alone,
    decide,
    exists_in_tree,
    file_in_tree,
    in_run,
)
from eyeful.runs import Extra, Run, Runner
from eyeful.shell import parallel_map
from eyeful.snapshot import REGULAR_FILE_MODES, Snapshot, blob_at, tree_at
from eyeful.testids import id_path


@dataclass
class Confirmation:
    evidence: list[Evidence]
    runs: list[Run] = field(default_factory=list)


def can_focus(runner: Runner, change: Run) -> bool:
    """Whether the change's failing tests can be run on their own: `test_one` is configured (or
    derived: eyeful/focus.py) and the run named them with ids that can be passed to it."""
    commands = runner.config.commands
    return (
        focus.of(commands.test, commands.test_one) is not None
        and change.names_known
        and any(passable(t) for t in change.failing)
    )


def confirm(
    runner: Runner,
    repo: pygit2.Repository,
    snap: Snapshot,
    change: Run,
    base_suite: Run | None,
    jobs: int,
) -> Confirmation:
    """Evidence for each failing test, with the live runs on their own where they can decide."""
    evidence = [
        Evidence(t, base_suite=in_run(base_suite, t), change_cached=change.cached)
        for t in sorted(change.failing)
    ]
    # A test whose file the base does not have is not there. Whether the file has the test is
    # the base's collection's to say (doctests, inherited tests, any parameter): guessed from
    # the file's text only when the runner keeps no record.
    exists = exists_in_tree if change.collected is None else file_in_tree
    with runner.lock_repo():
        for ev in evidence:
            if ev.base_suite == "unknown" and not exists(repo, snap.base.tree, ev.test):
                ev.base_suite = "absent"
    # An id that cannot be an argument (a NUL or a line break) stays unconfirmed on its own;
    # it never keeps the others from their live runs.
    live = [ev for ev in evidence if ev.base_suite in ("passed", "unknown") and passable(ev.test)]
    if not live:
        return Confirmation(evidence)
    ids = [ev.test for ev in live]
    reruns = runner.config.reruns
    sides = [("change", snap.head.tree)] * reruns + [("base", snap.base.tree)] * reruns
    batches = parallel_map(lambda side: runner.one(side[1], side[0], ids), sides, jobs)
    runs = [run for batch in batches for run in batch]
    if _not_found([b for (name, _), b in zip(sides, batches, strict=True) if name == "base"]):
        # pytest refuses a whole command when one id is not in the tree (a parameter the change
        # added): the base runs again with one command per id.
        base = [(name, tree) for name, tree in sides if name == "base"]
        again = parallel_map(lambda side: runner.one(side[1], "base", ids, each=True), base, jobs)
        batches = [b for (name, _), b in zip(sides, batches, strict=True) if name == "change"]
        sides, batches = [s for s in sides if s[0] == "change"] + base, batches + again
        runs += [run for batch in again for run in batch]
    for (side, _), batch in zip(sides, batches, strict=True):
        seen = _per_test(ids, batch)
        for ev in live:
            if side == "change":
                ev.change_alone = [*(ev.change_alone or []), seen[ev.test]]
            else:
                ev.base_alone = [*(ev.base_alone or []), seen[ev.test]]
    runs += _edited_tests(runner, repo, snap, change, live, jobs)
    return Confirmation(evidence, runs)


def _edited_tests(
    runner: Runner,
    repo: pygit2.Repository,
    snap: Snapshot,
    change: Run,
    evidence: list[Evidence],
    jobs: int,
) -> list[Run]:
    """For each regression whose file the change edited, two runs, once each: the base's version
    of the file on the change's code, and the change's version on the base's code. When the
    first passes (the change's code still does what the test asked before) and the second
    fails exactly as on the change (same failure, traceback and values: the old code fails the
    new test at the same point), the failure comes from the test's new demands, not from the
    change's code. Anything else (either cannot run, fails elsewhere) leaves it a regression.
    Only for tests the runner says are test functions (read from text: not known otherwise).
    """
    candidates: list[tuple[Evidence, str, str, str]] = []
    for ev in evidence:
        if decide(ev)[0] != "regression" or (change.kinds or {}).get(ev.test):
            # A doctest's file (a plugin item's too) may be the very code the change edits:
            # swapping it swaps the code, and says nothing of the test's demands.
            continue
        path = id_path(ev.test)
        with runner.lock_repo():
            new, old = _text_at(repo, snap.head.tree, path), _text_at(repo, snap.base.tree, path)
        if new is not None and old is not None and new != old:
            candidates.append((ev, path, old, new))
    if not candidates:
        return []
    swaps = [
        (ev, side, tree, {path: text})
        for ev, path, old, new in candidates
        for side, tree, text in (("change", snap.head.tree, old), ("base", snap.base.tree, new))
    ]
    batches = parallel_map(
        lambda s: runner.one(s[2], s[1], s[0].test, Extra(files=s[3])), swaps, jobs
    )
    swapped: dict[tuple[str, str], Run] = {}  # (test, side) -> its test_one run
    for (ev, side, _, _), batch in zip(swaps, batches, strict=True):
        tests = [run for run in batch if run.name == "test_one"]
        if tests:
            swapped[(ev.test, side)] = tests[-1]
    for ev, _, _, _ in candidates:
        old_on_new_code = swapped.get((ev.test, "change"))
        new_on_old_code = swapped.get((ev.test, "base"))
        ev.edited_fails_on_base = (
            old_on_new_code is not None
            and alone(old_on_new_code, ev.test, only=True) == "passed"
            and new_on_old_code is not None
            and alone(new_on_old_code, ev.test, only=True) == "failed"
            and _same_failure(change, new_on_old_code, ev.test)
        )
    return [run for batch in batches for run in batch]


def _same_failure(change: Run, other: Run, test: str) -> bool:
    """Whether ``test`` failed in ``other`` exactly as in the change's run: the same failure,
    raising frame and values (eyeful.failures.same_failure: addresses, object ids and
    temporary paths aside; anything else that differs keeps it a regression)."""
    mine = (change.failures or {}).get(test)
    theirs = (other.failures or {}).get(test)
    return mine is not None and theirs is not None and same_failure(mine, theirs)


def _text_at(repo: pygit2.Repository, tree: str, path: str) -> str | None:
    """A regular file of ``tree`` as text, or None."""
    try:
        entry = tree_at(repo, tree)[path]
    except KeyError:
        return None
    if entry.filemode not in REGULAR_FILE_MODES:
        return None
    try:
        return blob_at(repo, entry.id).data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _not_found(batches: list[list[Run]]) -> bool:
    """Whether pytest said it could not find an id it was given ("ERROR: not found: ...")."""
    runs = [r for batch in batches for r in batch if r.name == "test_one"]
    if any(run.status == "ERROR" and run.none_ran for run in runs):
        return True  # refused before it ran anything (its record collected nothing)
    return any(
        f"\nERROR: {what}not found: " in "\n" + run.tail
        for run in runs
        for what in ("", "file or directory ")
    )


def _per_test(ids: list[str], batch: list[Run]) -> dict[str, Seen]:
    """What one `Runner.one` call said about each id (setup runs first; a failed setup: unknown)."""
    tests = [run for run in batch if run.name == "test_one"]
    if not tests:
        return dict.fromkeys(ids, "unknown")
    if len(tests) == len(ids):  # one command per id
        return {test: alone(run, test, only=True) for test, run in zip(ids, tests, strict=True)}
    run = tests[-1]
    return {test: alone(run, test, only=len(ids) == 1) for test in ids}
