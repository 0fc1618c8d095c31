"""Which changed Python files changed what their import runs.

A module's import runs its top-level code: module-level statements, class bodies, a function's
decorators, default values, annotations and docstring, and the body of every function that code
calls. The map's full run says which functions ran outside any test, at an import (by their
first lines, on the map's tree; :data:`ANY_FUNCTION` where it could not see which). A change
whose lines (on either side: what it took out, what it wrote) all lie in the bodies of other
functions (but their ``yield`` lines: a generator function is another kind of function at
import), or hold no code (blank lines, comments between statements), leaves the import as it
was: a test whose imports only pass through a package that imports the file
(eyeful/affected.py) sees none of it. Anything else, and a file that does not
parse or whose coding declaration changed, may change every import of it.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterable, Iterator, Mapping

import pygit2

from eyeful.snapshot import regular_file, tree_at

__all__ = ["ANY_FUNCTION", "at_import"]

ANY_FUNCTION = -1
"""Among a file's first lines: its code ran at an import unwatched (run by ``exec``, compiled
by pytest), so any of its functions may have."""

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def at_import(
    repo: pygit2.Repository,
    old_tree: str,
    new_tree: str,
    paths: Iterable[str],
    called: Mapping[str, Iterable[int]] | None = None,
) -> set[str]:
    """The paths among ``paths`` (Python files that differ between the trees) whose change may
    change what importing them runs; ``called``: the first lines of the functions that ran at
    an import, by file, on ``old_tree`` (None: not known, every function's body counts)."""
    old_root, new_root = tree_at(repo, old_tree), tree_at(repo, new_tree)
    found = set()
    for path in paths:
        old, new = regular_file(repo, old_root, path), regular_file(repo, new_root, path)
        old_module, new_module = _parse(old), _parse(new)
        if old is None or new is None or old_module is None or new_module is None:
            found.add(path)  # added, deleted, not a regular file, not Python: its import changed
            continue
        if _encoding(old) != _encoding(new):
            found.add(path)  # a coding declaration (a comment) changes every string it makes
            continue
        patch = pygit2.Patch.create_from(old, new, context_lines=0)
        removed: set[int] = set()  # the old file's lines the change took out or rewrote
        written: set[int] = set()  # the new file's lines it wrote
        for hunk in patch.hunks:
            removed.update(range(hunk.old_start, hunk.old_start + hunk.old_lines))
            written.update(range(hunk.new_start, hunk.new_start + hunk.new_lines))
        if called is None:  # not known: any function may run at an import
            ran = {name for module in (old_module, new_module) for name, _ in _functions(module)}
        else:
            first = set(called.get(path, ()))
            every = ANY_FUNCTION in first
            ran = {
                name for name, node in _functions(old_module) if every or _first_line(node) in first
            }
        if _runs(old_module, ran) & removed or _runs(new_module, ran) & written:
            found.add(path)
    return found


def _parse(source: bytes | None) -> ast.Module | None:
    if source is None:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _encoding(source: bytes) -> str:
    """How Python decodes a source file (its BOM, its coding declaration)."""
    try:
        return tokenize.detect_encoding(io.BytesIO(source).readline)[0]
    except SyntaxError:
        return ""


def _runs(module: ast.Module, ran: set[str]) -> set[int]:
    """The lines of ``module`` that hold code its import runs: every top-level statement's,
    but the bodies of the functions not in ``ran`` (qualified names)."""
    code: set[int] = set()
    for statement in module.body:
        code.update(range(_first_line(statement), (statement.end_lineno or 0) + 1))
    for name, node in _functions(module):
        body = node.body[1:] if _docstring(node.body[0]) else node.body
        if body and name not in ran:  # from the line after the signature
            start = max(body[0].lineno, _signature_end(node) + 1)
            code.difference_update(range(start, (body[-1].end_lineno or 0) + 1))
            code.update(_yields(node))  # whether it is a generator function shows at import
    return code


def _yields(node: ast.AST) -> Iterator[int]:
    """The lines of the ``yield`` expressions in a function's own scope."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Yield | ast.YieldFrom):
            yield from range(child.lineno, (child.end_lineno or child.lineno) + 1)
        if not isinstance(
            child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
        ):
            yield from _yields(child)


def _functions(node: ast.AST, prefix: str = "") -> Iterator[tuple[str, _Function]]:
    """Every function in ``node``, with its qualified name (``C.get``, ``f.<locals>.g``)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, _Function):
            yield prefix + child.name, child
            yield from _functions(child, f"{prefix}{child.name}.<locals>.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.stmt):
            yield from _functions(child, prefix)  # an if, a try, a with: the same scope


def _first_line(node: ast.stmt) -> int:
    """A statement's first line: a decorated one's first decorator (``co_firstlineno``)."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _signature_end(node: _Function) -> int:
    """The last line of a function's signature: its defaults and annotations run at import."""
    parts = [node.args, *([node.returns] if node.returns is not None else [])]
    ends = [getattr(n, "end_lineno", None) for part in parts for n in ast.walk(part)]
    return max([node.lineno, *(e for e in ends if isinstance(e, int))])


def _docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )
