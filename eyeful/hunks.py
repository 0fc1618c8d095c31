"""The lines a change touched, on the change's side: what a test must run to show a problem of
this change (the probe traces them: eyeful/data/probe/eyeful_probe_main.py).

Only Python files count (the probe can trace nothing else). An added or modified line counts as
itself and as the first line of the statement it falls in (a tracer sees only that line of a
constant spanning several: :func:`_statements`), but for a docstring's (:func:`without_docstrings`:
what the code says of itself, not what it does); a deletion counts as the lines around where it was
(the one before and the one after), which is where code that ran through the deleted lines now
runs. A file the change added counts whole; a file it deleted counts for nothing (no code of it is
left to run).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pygit2

from eyeful.snapshot import blob_at, regular_file, tree_at

ChangedLines = dict[str, frozenset[int]]
"""Repository path -> line numbers in the change's version of the file."""


def changed_lines(repo: pygit2.Repository, base_tree: str, head_tree: str) -> ChangedLines:
    """The Python lines ``head_tree`` adds or changes against ``base_tree``, and the lines around
    each of its deletions."""
    diff = tree_at(repo, base_tree).diff_to_tree(tree_at(repo, head_tree), context_lines=0)
    try:
        found = _from_patches(diff)
    except pygit2.GitError:
        # libgit2 reads the index for the files' attributes when it makes a patch, and cannot
        # read a split or sparse index (`unsupported mandatory extension`): the same lines from
        # the blobs themselves (the tree diff alone reads no index).
        found = _from_blobs(repo, diff)
    return {path: _statements(regular_file(repo, head_tree, path), lines)
            for path, lines in found.items()}  # fmt: skip


def _statements(source: bytes | None, lines: frozenset[int]) -> frozenset[int]:
    """``lines`` and the first line of each statement they fall in (of a compound statement,
    its header: a default value, a condition): a tracer sees a statement's lines only where
    their code is its own (a tuple, a string, a list of constants spanning lines is one
    constant, run on the statement's first line), so the statement running is the change
    running."""
    try:
        tree = ast.parse(source or b"")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return lines
    out = set(lines) | _code_around(source or b"", lines)
    lines = frozenset(out)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.stmt, ast.ExceptHandler)):
            continue
        body = getattr(node, "body", None)
        if isinstance(node, ast.Match):  # (its header ends where its first case begins)
            last = node.cases[0].pattern.lineno - 1 if node.cases else node.lineno
        elif isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = body[0].lineno - 1
        else:
            last = node.end_lineno or node.lineno
        if any(node.lineno <= line <= last for line in lines):
            out.add(node.lineno)
            decorators = getattr(node, "decorator_list", None) or []
            out.update(d.lineno for d in decorators[:1])
    return frozenset(out)


def _code_around(source: bytes, lines: frozenset[int]) -> set[int]:
    """For each of ``lines`` that holds no code (blank, a comment, past the end: where a deletion
    was), the nearest lines with code before and after it: a `return` deleted after a blank line
    left both its neighbours blank or outside the function it ended (helper-76)."""
    text = source.decode("utf-8", "replace").splitlines()
    code = [bool(t.strip()) and not t.strip().startswith("#") for t in text]
    found: set[int] = set()
    for line in lines:
        if 1 <= line <= len(code) and code[line - 1]:
            continue
        before = next((n for n in range(min(line, len(code) + 1) - 1, 0, -1) if code[n - 1]), None)
        after = next((n for n in range(line + 1, len(code) + 1) if code[n - 1]), None)
        found.update(n for n in (before, after) if n is not None)
    return found


def _from_patches(diff: pygit2.Diff) -> ChangedLines:
    out: ChangedLines = {}
    for patch in diff:
        if patch is None or patch.delta.status_char() == "D":
            continue
        path = patch.delta.new_file.path
        if path.endswith(".py") and not patch.delta.is_binary and (lines := _lines(patch)):
            out[path] = lines
    return out


def _lines(patch: pygit2.Patch) -> frozenset[int]:
    lines: set[int] = set()
    for hunk in patch.hunks:
        if hunk.new_lines == 0:  # a deletion: the lines on either side of it
            lines.update(n for n in (hunk.new_start, hunk.new_start + 1) if n > 0)
        else:
            lines.update(range(hunk.new_start, hunk.new_start + hunk.new_lines))
    return frozenset(lines)


def _from_blobs(repo: pygit2.Repository, diff: pygit2.Diff) -> ChangedLines:
    """Each file's patch made from its two blobs' contents: git's own diff (linear where
    difflib is quadratic on a long file), with no repository to read attributes from."""
    out: ChangedLines = {}
    for delta in diff.deltas:
        path = delta.new_file.path
        if delta.status_char() == "D" or not path.endswith(".py"):
            continue
        old = blob_at(repo, delta.old_file.id).data if delta.status_char() != "A" else b""
        new = blob_at(repo, delta.new_file.id).data
        if b"\0" in old[:8000] or b"\0" in new[:8000]:  # binary, as git would call it
            continue
        patch = pygit2.Patch.create_from(old, new, context_lines=0)
        if lines := _lines(patch):
            out[path] = lines
    return out


def touched(executed: dict[str, list[int]] | None, changed: ChangedLines) -> bool | None:
    """Whether a run executed a changed line: None when the run was not traced (no record of
    what it executed) or nothing traceable changed."""
    if executed is None or not changed:
        return None
    return any(
        changed.get(path, frozenset()).intersection(lines) for path, lines in executed.items()
    )


def without_docstrings(
    repo: pygit2.Repository, head_tree: str, changed: ChangedLines
) -> ChangedLines:
    """``changed`` without the lines of docstrings (a module's, a class's, a function's): a
    module's runs at import (``__doc__``), so a test that then ran the module's code would count
    as running a change that only rewrote what the code says of itself. A file left with none
    stays, empty: the change touched it, and no test can run what it touched."""
    out: ChangedLines = {}
    for path, lines in changed.items():
        data = regular_file(repo, head_tree, path)
        try:
            tree = ast.parse(data or b"")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            out[path] = lines
            continue
        docs: set[int] = set()
        for doc in docstrings(tree):
            docs.update(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1))
        out[path] = frozenset(lines - docs)
    return out


def docstrings(tree: ast.Module) -> Iterator[ast.Constant]:
    """The docstrings of a module, its classes and functions."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                yield first.value
