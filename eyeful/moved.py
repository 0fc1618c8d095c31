"""A test moved to another file is the same test: found on the base by its name and body.

git's rename detection pairs files, and misses a test moved into a file unlike the one it left (a
new module of its own, a file it joined). A test on the change whose id the base does not have,
while a test of the same name (in the same class) and the same code (``ast``: decorators,
arguments and body, positions aside) is in a base file, is that test: it is compared with it
there, never read as new.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pygit2

from eyeful.snapshot import REGULAR_FILE_MODES, blob_at, regular_file, tree_at
from eyeful.testids import id_path

_MAX_BYTES = 1_000_000  # a test file larger than this is not parsed


def _py_files(
    repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = ""
) -> Iterator[tuple[str, bytes]]:
    for entry in tree:
        if entry.type_str == "tree":
            yield from _py_files(repo, tree_at(repo, entry.id), f"{prefix}{entry.name}/")
        elif (entry.name or "").endswith(".py") and entry.filemode in REGULAR_FILE_MODES:
            blob = blob_at(repo, entry.id)
            if blob.size <= _MAX_BYTES:
                yield f"{prefix}{entry.name}", blob.data


def shape(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """A definition's code but its name: its decorators, arguments (a function's) and body,
    positions aside. Alike on two trees, it is one definition under two names (a test renamed
    out of collection, eyeful/testside.py; a function renamed, eyeful/onbase.py)."""
    parts: list[ast.AST] = [*node.decorator_list, *node.body]
    if not isinstance(node, ast.ClassDef):
        parts.insert(len(node.decorator_list), node.args)
    return "\n".join(ast.dump(part, include_attributes=False) for part in parts)


def _definition(source: bytes, names: list[str]) -> str | None:
    """The code of the function ``names`` (``[Class, ..., name]``) in ``source``, positions
    aside; None when it is not defined there (or the file does not parse)."""
    try:
        body: list[ast.stmt] = ast.parse(source).body
    except (SyntaxError, ValueError):
        return None
    for depth, name in enumerate(names):
        last = depth == len(names) - 1
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if last else (ast.ClassDef,)
        found = [node for node in body if isinstance(node, kinds) and node.name == name]
        if not found:
            return None
        node = found[-1]  # a later definition wins, as in Python
        if last:
            return ast.dump(node, include_attributes=False)
        body = node.body
    return None


def on_base(repo: pygit2.Repository, base: str, head: str, test: str) -> str | None:
    """The base's id of the test that ``test`` (a pytest id on ``head``) was: the same name
    and code in another file there; None when there is none."""
    path, _, rest = test.partition("::")
    if not rest:
        return None
    qualified, bracket, params = rest.partition("[")
    names = qualified.split("::")
    source = regular_file(repo, head, path)
    mine = _definition(source, names) if source is not None else None
    if mine is None:
        return None
    needle = f"def {names[-1]}".encode()
    candidates = [
        other
        for other, data in _py_files(repo, tree_at(repo, base))
        if other != path and needle in data and _definition(data, names) == mine
    ]
    if not candidates:
        return None
    # Where it left, by preference: a base file that no longer has it on the change.
    left = [c for c in candidates if _definition(regular_file(repo, head, c) or b"", names) != mine]
    chosen = (left or candidates)[0]
    return f"{chosen}::{qualified}{bracket}{params}"


def ids_on_base(repo: pygit2.Repository, base: str, head: str, tests: list[str]) -> dict[str, str]:
    """Of ``tests`` (ids the base does not have), the ones that moved: change id -> base id."""
    out = {}
    for test in tests:
        if id_path(test) == test:
            continue
        found = on_base(repo, base, head, test)
        if found is not None:
            out[test] = found
    return out
