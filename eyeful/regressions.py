"""Tests the change breaks: failing on the change, passing on the base.

Only a test that demonstrably passed on the base can block (a `derived` oracle: the repository's
own test). A test failing on both sides is pre-existing, a test the base does not have is new;
neither blocks. When a side names no tests, the suite is compared as a whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

import pygit2
from pydantic import BaseModel

from eyeful.failures import Failure
from eyeful.runs import Run
from eyeful.snapshot import blob_at, tree_at

SUITE = "the test suite"
_EXCERPT_LINES = 15
_FAILURE_LINES = 40  # of a test's own failure: its end, where the error and its frame are

FailureKind = Literal["regression", "pre_existing", "new_test", "undetermined"]


class TestFailure(BaseModel):
    """A test failing on the change, and what the base says about it."""

    test: str
    kind: FailureKind
    blocking: bool
    oracle: Literal["derived"] = "derived"
    on_change: str
    on_base: str
    excerpt: str
    message: str = ""
    """One line: what the test failed with (exception and message), for grouping."""


def excerpt(tail: str, test: str, failure: Failure | None = None) -> str:
    """The test's own failure (JUnit text or its section of the output), never another test's.

    The whole suite (no test named) shows the last lines of the output; a named test whose own
    failure was not recorded shows only the lines of the output that name it.
    """
    if failure is not None and failure.text.strip():
        lines = [line for line in failure.text.splitlines() if line.strip()]
        return "\n".join(lines[-_FAILURE_LINES:])
    lines = [line for line in tail.splitlines() if line.strip()]
    if test == SUITE:
        return "\n".join(lines[-_EXCERPT_LINES:])
    short = test.split("::")[-1]
    named = [line for line in lines if short in line][-3:]
    return "\n".join(named) or f"(the output has no section of its own for {test})"


def _blobs(
    repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = ""
) -> Iterator[tuple[str, pygit2.Object]]:
    for entry in tree:
        if entry.type_str == "tree":
            yield from _blobs(repo, tree_at(repo, entry.id), f"{prefix}{entry.name}/")
        elif entry.type_str == "blob":
            yield f"{prefix}{entry.name}", entry


def exists_in_tree(repo: pygit2.Repository, tree_id: str, test: str) -> bool:
    """Whether the base has this test, judged from its id when the run did not list it.

    pytest ids name their file (``path::[Class::]name[params]``): the file must exist and define
    the function. go test ids name a ``TestX`` function in some ``_test.go`` file.
    """
    tree = tree_at(repo, tree_id)
    if "::" in test or test.endswith(".py"):
        path, _, rest = test.partition("::")
        try:
            blob = blob_at(repo, tree[path].id)
        except KeyError:
            return False
        if not rest:
            return True
        name = re.sub(r"\[.*\]$", "", rest.split("::")[-1])
        return (
            re.search(rf"\bdef {re.escape(name)}\b", blob.data.decode(errors="replace")) is not None
        )
    top = test.split("/")[0]
    needle = re.compile(rf"\bfunc {re.escape(top)}\(".encode())
    return any(
        path.endswith("_test.go") and needle.search(blob_at(repo, entry.id).data)
        for path, entry in _blobs(repo, tree)
    )


def compare(
    change: Run, base: Run | None, repo: pygit2.Repository
) -> tuple[list[TestFailure], list[str]]:
    """Classify the change's failures against the base; also say what could not be told apart."""
    notes: list[str] = []
    if change.status != "FAILED":
        return [], notes
    if base is None or base.status == "ERROR":
        why = base.reason if base is not None and base.reason else "setup failed there"
        notes.append(
            f"the tests could not be run on the base ({why}), so failures are unclassified"
        )
        failures = sorted(change.failing) if change.names_known else [SUITE]
        return [_failure(t, "undetermined", change, "unknown") for t in failures], notes
    if not change.names_known:
        notes.append("the test output names no failing tests: the suite was compared as a whole")
        if base.status == "PASSED":
            return [_failure(SUITE, "regression", change, "passed")], notes
        return [_failure(SUITE, "pre_existing", change, "failed")], notes
    if not base.names_known:
        notes.append(
            "the base failed without naming its failing tests, so the change's failures "
            "could not be compared test by test"
        )
        return [
            _failure(t, "undetermined", change, "unknown") for t in sorted(change.failing)
        ], notes
    out: list[TestFailure] = []
    base_tests = base.tests or {}
    for test in sorted(change.failing):
        outcome = base_tests.get(test)
        if outcome in ("failed", "error"):
            out.append(_failure(test, "pre_existing", change, outcome))
        elif outcome == "passed":
            out.append(_failure(test, "regression", change, "passed"))
        elif outcome == "skipped":
            out.append(_failure(test, "undetermined", change, "skipped"))
        elif base.tests_from == "junit":
            out.append(_failure(test, "new_test", change, "absent"))
        elif exists_in_tree(repo, base.tree, test):
            # Output lists failures only: a test the base has and did not fail passed there.
            out.append(_failure(test, "regression", change, "passed"))
        else:
            out.append(_failure(test, "new_test", change, "absent"))
    return out, notes


def all_new(change: Run) -> list[TestFailure]:
    """The change's failures when the base has no files at all: new tests, none blocking."""
    if change.status != "FAILED":
        return []
    tests = sorted(change.failing) if change.names_known else [SUITE]
    return [_failure(t, "new_test", change, "absent") for t in tests]


def _failure(test: str, kind: FailureKind, change: Run, on_base: str) -> TestFailure:
    on_change = (change.tests or {}).get(test, "failed")
    failure = (change.failures or {}).get(test)
    return TestFailure(
        test=test,
        kind=kind,
        blocking=kind == "regression",
        on_change=on_change,
        on_base=on_base,
        excerpt=excerpt(change.tail, test, failure),
        message=_message(failure),
    )


def _message(failure: Failure | None) -> str:
    if failure is None:
        return ""
    if failure.type and not failure.message.startswith(failure.type):
        return f"{failure.type}: {failure.message}"[:200]
    return failure.message[:200]
