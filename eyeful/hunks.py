"""The lines a change touched, on the change's side: what a test must run to show a problem of
this change (the probe traces them: eyeful/data/probe/eyeful_probe.py).

Only Python files count (the probe can trace nothing else). An added or modified line counts as
itself; a deletion counts as the lines around where it was (the one before and the one after),
which is where code that ran through the deleted lines now runs. A file the change added counts
whole; a file it deleted counts for nothing (no code of it is left to run).
"""

from __future__ import annotations

import difflib

import pygit2

from eyeful.snapshot import blob_at, tree_at

ChangedLines = dict[str, frozenset[int]]
"""Repository path -> line numbers in the change's version of the file."""


def changed_lines(repo: pygit2.Repository, base_tree: str, head_tree: str) -> ChangedLines:
    """The Python lines ``head_tree`` adds or changes against ``base_tree``, and the lines around
    each of its deletions."""
    diff = tree_at(repo, base_tree).diff_to_tree(tree_at(repo, head_tree), context_lines=0)
    try:
        return _from_patches(diff)
    except pygit2.GitError:
        # libgit2 reads the index for the files' attributes when it makes a patch, and cannot
        # read a split or sparse index (`unsupported mandatory extension`): the same lines from
        # the blobs themselves (the tree diff alone reads no index).
        return _from_blobs(repo, diff)


def _from_patches(diff: pygit2.Diff) -> ChangedLines:
    out: ChangedLines = {}
    for patch in diff:
        if patch is None or patch.delta.status_char() == "D":
            continue
        path = patch.delta.new_file.path
        if not path.endswith(".py") or patch.delta.is_binary:
            continue
        lines: set[int] = set()
        for hunk in patch.hunks:
            if hunk.new_lines == 0:  # a deletion: the lines on either side of it
                lines.update(n for n in (hunk.new_start, hunk.new_start + 1) if n > 0)
            else:
                lines.update(range(hunk.new_start, hunk.new_start + hunk.new_lines))
        if lines:
            out[path] = frozenset(lines)
    return out


def _from_blobs(repo: pygit2.Repository, diff: pygit2.Diff) -> ChangedLines:
    out: ChangedLines = {}
    for delta in diff.deltas:
        path = delta.new_file.path
        if delta.status_char() == "D" or not path.endswith(".py"):
            continue
        old = _text(repo, delta.old_file.id) if delta.status_char() != "A" else []
        new = _text(repo, delta.new_file.id)
        if old is None or new is None:  # binary, as git would call it
            continue
        lines: set[int] = set()
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
            if tag == "delete":  # the lines on either side of it
                lines.update(n for n in (j1, j1 + 1) if n > 0)
            elif tag != "equal":
                lines.update(range(j1 + 1, j2 + 1))
        if lines:
            out[path] = frozenset(lines)
    return out


def _text(repo: pygit2.Repository, oid: pygit2.Oid) -> list[bytes] | None:
    data = blob_at(repo, oid).data
    return None if b"\0" in data[:8000] else data.splitlines()


def touched(executed: dict[str, list[int]] | None, changed: ChangedLines) -> bool | None:
    """Whether a run executed a changed line: None when the run was not traced (no record of
    what it executed) or nothing traceable changed."""
    if executed is None or not changed:
        return None
    return any(
        changed.get(path, frozenset()).intersection(lines) for path, lines in executed.items()
    )
