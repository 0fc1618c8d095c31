"""Where a test is defined: the line of `def name` in its file, read from a snapshot's tree.

SARIF and the report point a regression at this line so that code scanning can show it on the
diff. pytest ids name their file (``path::[Class::]name[params]``); the class, when given, narrows
the search to the lines after ``class Class``.
"""

from __future__ import annotations

import re

import pygit2

from eyeful.regressions import SUITE, TestFailure
from eyeful.snapshot import blob_at, tree_at


def definition_line(source: str, test: str) -> int | None:
    """The 1-based line of the test's ``def`` in ``source``, or None when it is not there."""
    _, _, rest = test.partition("::")
    if not rest:
        return None
    parts = [re.sub(r"\[.*\]$", "", part) for part in rest.split("::")]
    lines = source.splitlines()
    start = 0
    for cls in parts[:-1]:
        pattern = re.compile(rf"\s*class {re.escape(cls)}\b")
        start = next((i for i in range(start, len(lines)) if pattern.match(lines[i])), start)
    pattern = re.compile(rf"\s*(?:async\s+)?def {re.escape(parts[-1])}\s*\(")
    for number in range(start, len(lines)):
        if pattern.match(lines[number]):
            return number + 1
    return None


def locate_tests(repo: pygit2.Repository, tree_id: str, failures: list[TestFailure]) -> None:
    """Set each failure's ``line`` from the test file in ``tree_id`` (pytest ids only)."""
    tree = tree_at(repo, tree_id)
    sources: dict[str, str | None] = {}
    for failure in failures:
        if failure.test == SUITE or "::" not in failure.test:
            continue
        path = failure.test.split("::", 1)[0]
        if path not in sources:
            try:
                entry = tree[path]
                sources[path] = (
                    blob_at(repo, entry.id).data.decode("utf-8", errors="replace")
                    if entry.type_str == "blob"
                    else None
                )
            except (KeyError, ValueError):
                sources[path] = None
        source = sources[path]
        if source is not None:
            failure.line = definition_line(source, failure.test)
