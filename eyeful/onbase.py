"""What a reproduction's runs on the base are evidence of, for the ``introduced`` gate
(eyeful/gates.py): whether each failing test ran there, was skipped or ended in an error there
(no evidence), or failed there by the cause it failed by on the change (pre-existing)."""

from __future__ import annotations

import pygit2

from eyeful.failures import Failure, cause
from eyeful.runs import Run
from eyeful.snapshot import Snapshot, tree_at

__all__ = ["edited_files", "not_run_on_base", "same_cause", "skipped_on_base"]


def not_run_on_base(failing: list[str], runs: list[Run], own_copy: bool) -> str | None:
    """Why the base's runs are no evidence that each failing test ran there, or None.

    `introduced` asks that the test, run on the base, not fail with the claimed text (failing
    otherwise is fine: a function the change adds is not there). So a run that names its tests
    must name each; one that names none (a runner whose output lists failures only) is evidence
    only when the base ran the change's own test: a reproduction's new file, or one named test
    (absent, it would not have run); not when the base has its own, older copy of the file
    (``own_copy``), which may lack the test.
    """
    for run in runs:
        if run.tests is None:
            continue  # a failed run with nothing named: the status rules decide
        if not run.tests:
            if own_copy and failing:
                return (
                    f"the base's runs do not name their tests, and the base has its own copy "
                    f"of the file: no evidence that `{failing[0]}` ran there"
                )
            continue
        for test in failing:
            if test not in run.tests:
                return f"`{test}` is not on the base: no evidence of how it ends there"
    return None


def edited_files(repo: pygit2.Repository, snap: Snapshot) -> list[str]:
    """The files the change added or edited (any kind of file)."""
    diff = tree_at(repo, snap.base.tree).diff_to_tree(tree_at(repo, snap.head.tree))
    return [d.new_file.path for d in diff.deltas if d.status_char() != "D"]


def skipped_on_base(failing: list[str], runs: list[Run]) -> str | None:
    """Why a base run of a failing test is no evidence: it was skipped, or ended in an error
    (a fixture's, setup's) there, so the base never ran what the change failed."""
    for run in runs:
        for test in failing:
            outcome = (run.tests or {}).get(test)
            if outcome in ("skipped", "error"):
                word = "skipped" if outcome == "skipped" else "an error"
                return f"the test could not be run on the base: `{test}` ended {word} there"
    return None


def same_cause(run: Run, failure: Failure | None) -> bool:
    """Whether ``run`` (on the base) failed by the cause ``failure`` (the change's) did: the
    exception type and raising line, the message with numbers aside (eyeful.failures.cause)."""
    if run.status != "FAILED" or run.failure is None or failure is None:
        return False
    if run.failure.kind == "collection" or failure.kind == "collection":
        return False
    mine = cause(failure)
    return mine is not None and cause(run.failure) == mine
