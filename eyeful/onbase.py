"""What a reproduction's runs on the base are evidence of, for the ``introduced`` gate
(eyeful/gates.py): whether each failing test ran there, was skipped or ended in an error there
(no evidence), failed there by the cause it failed by on the change (pre-existing), or failed
there alike in another message (no evidence the change brought it)."""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable, Iterator

import pygit2

from eyeful.failures import Failure, cause
from eyeful.moved import shape
from eyeful.runs import Run
from eyeful.snapshot import Snapshot, tree_at
from eyeful.testside import read_text

__all__ = [
    "edited_files",
    "failed_alike",
    "not_run_on_base",
    "renamed_from_base",
    "same_cause",
    "skipped_on_base",
]


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


def same_cause(
    run: Run,
    failure: Failure | None,
    on_base: Callable[[Failure], str | None] = cause,
    on_change: Callable[[Failure], str | None] = cause,
) -> bool:
    """Whether ``run`` (on the base) failed by the cause ``failure`` (the change's) did: the
    exception type and raising line, the message with numbers aside (eyeful.failures.cause; the
    raising line by its text in each side's tree where ``on_base`` and ``on_change`` are
    :func:`located`'s)."""
    if run.status != "FAILED" or run.failure is None or failure is None:
        return False
    if run.failure.kind == "collection" or failure.kind == "collection":
        return False
    mine = on_change(failure)
    return mine is not None and on_base(run.failure) == mine


def located(
    repo: pygit2.Repository, tree: str, lock: threading.Lock
) -> Callable[[Failure], str | None]:
    """A failure's cause with its raising line named by the line's text in ``tree`` rather than
    its number: a comment the change put above the code moves the line, not the cause. A file
    the tree lacks (a reproduction's own test) keeps the number. ``lock``: the runner's, held
    around pygit2."""
    lines_of: dict[str, list[str] | None] = {}

    def at(failure: Failure) -> str | None:
        said = cause(failure)
        where = failure.in_repository
        if said is None or not where:
            return said
        path, _, number = where.rpartition(":")
        if path not in lines_of:
            with lock:
                text = read_text(repo, tree, path)
            lines_of[path] = None if text is None else text.splitlines()
        lines = lines_of[path]
        if lines is None or not number.isdigit() or not 0 < int(number) <= len(lines):
            return said
        return said.replace(f" at {where}: ", f" at {path}: {lines[int(number) - 1].strip()}: ", 1)

    return at


def failed_alike(run: Run, failure: Failure | None, test_file: str) -> bool:
    """Whether ``run`` (on the base) failed as ``failure`` (the change's) did in kind, if not in
    words: the same exception type, raised in the same file of the code (``test_file``, the
    reproduction's own, is not: a precondition it asserts first may fail on the base, where the
    change brought what it asserts next). A change that only reordered an
    expression (``a + b`` to ``b + a``) changes the message (`'int' and 'NoneType'`) and the
    raising line's text, not the failure: the test does not pass on the base, so it shows no
    problem the change brought. Failing otherwise (an import error where the change adds the
    function, an assertion of the test where the code raised on the change) is no such sign."""
    if run.status != "FAILED" or run.failure is None or failure is None:
        return False
    theirs = run.failure
    if "collection" in (theirs.kind, failure.kind) or not failure.type or not failure.raised_in:
        return False
    if failure.raised_in == test_file:
        return False  # the test's own assertions: an earlier one failing on the base says no more
    return (theirs.type, theirs.raised_in) == (failure.type, failure.raised_in)


def renamed_from_base(
    repo: pygit2.Repository, base: str, head: str, failure: Failure | None, lock: threading.Lock
) -> str | None:
    """The base's function that raised the change's ``failure`` under another name: the
    function of the code holding the raising line has no namesake in its file on the base,
    while a function of the base's same file with the same decorators, arguments and body
    (positions aside) is gone from the change (renamed, not copied: helper-80). None
    otherwise. Such a failure is the base's behaviour, reached by its new name."""
    where = failure.in_repository if failure is not None else None
    if not where:
        return None
    path, _, number = where.rpartition(":")
    if not path.endswith(".py") or not number.isdigit():
        return None
    with lock:
        texts = read_text(repo, head, path), read_text(repo, base, path)
    if texts[0] is None or texts[1] is None:
        return None
    try:
        trees = ast.parse(texts[0]), ast.parse(texts[1])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    raised = [f for f in _functions(trees[0]) if f.lineno <= int(number) <= (f.end_lineno or 0)]
    if not raised:
        return None
    inner = max(raised, key=lambda f: f.lineno)
    on_change = {f.name for f in _functions(trees[0])}
    on_base = list(_functions(trees[1]))
    if inner.name in {f.name for f in on_base}:
        return None  # (the same name there: not renamed)
    same = shape(inner)
    twins = [f for f in on_base if f.name not in on_change and shape(f) == same]
    return f"`{twins[0].name}` of {path}" if twins else None


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
