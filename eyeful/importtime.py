"""Which changed Python files changed what their import runs.

A module's import runs its top-level code: module-level statements, class bodies, a function's
decorators, default values, annotations and docstring. A function's body runs only when it is
called. A change whose lines (on either side: what it removed, what it wrote) all lie in function
bodies, or hold no code (blank lines, comments between statements), leaves the import as it
was: a test whose imports only pass through a package that imports the file (eyeful/affected.py)
sees none of it. Anything else, and a file that does not parse, may change every import of it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import pygit2

from eyeful.snapshot import blob_at, tree_at

__all__ = ["at_import"]


def at_import(
    repo: pygit2.Repository, old_tree: str, new_tree: str, paths: Iterable[str]
) -> set[str]:
    """The paths among ``paths`` (Python files that differ between the trees) whose change may
    change what importing them runs."""
    old_root, new_root = tree_at(repo, old_tree), tree_at(repo, new_tree)
    found = set()
    for path in paths:
        old, new = _data(repo, old_root, path), _data(repo, new_root, path)
        if old is None or new is None:
            found.add(path)  # added, deleted, not a regular file: its import is new or gone
            continue
        patch = pygit2.Patch.create_from(old, new, context_lines=0)
        removed: set[int] = set()  # the old file's lines the change took out or rewrote
        written: set[int] = set()  # the new file's lines it wrote
        for hunk in patch.hunks:
            removed.update(range(hunk.old_start, hunk.old_start + hunk.old_lines))
            written.update(range(hunk.new_start, hunk.new_start + hunk.new_lines))
        if _runs_at_import(old, removed) or _runs_at_import(new, written):
            found.add(path)
    return found


def _data(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> bytes | None:
    try:
        entry = tree[path]
    except KeyError:
        return None
    return blob_at(repo, entry.id).data if entry.type_str == "blob" else None


def _runs_at_import(source: bytes, lines: set[int]) -> bool:
    """Whether any of ``lines`` holds code the module's import runs."""
    if not lines:
        return False
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return True
    code: set[int] = set()
    for statement in module.body:
        first = min([statement.lineno, *(d.lineno for d in _decorators(statement))])
        code.update(range(first, (statement.end_lineno or statement.lineno) + 1))
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body[1:] if _docstring(node.body[0]) else node.body
            if body:  # from the line after the signature (`def f(): return 1` has none)
                start = max(body[0].lineno, _signature_end(node) + 1)
                code.difference_update(range(start, (body[-1].end_lineno or 0) + 1))
    return not code.isdisjoint(lines)


def _signature_end(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The last line of a function's signature: its defaults and annotations run at import."""
    parts = [node.args, *([node.returns] if node.returns is not None else [])]
    ends = [getattr(n, "end_lineno", None) for part in parts for n in ast.walk(part)]
    return max([node.lineno, *(e for e in ends if isinstance(e, int))])


def _decorators(node: ast.stmt) -> list[ast.expr]:
    return list(getattr(node, "decorator_list", []))


def _docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )
