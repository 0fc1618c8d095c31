"""Checks of the user's inputs that need the repository or the file system, made before anything
runs: a run that would fail on them half-way (after the tests, losing the report) fails first.

Each failure is an :class:`EyefulError`: one line naming the input and the fix, exit 2.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

import pygit2

from eyeful.errors import EyefulError
from eyeful.findings import Finding
from eyeful.gitutil import RepoPaths
from eyeful.inputfiles import kind
from eyeful.snapshot import Snapshot, tree_at


def check_output_file(path: Path, option: str) -> None:
    """``path`` can be written as a file: a regular file, or a new name in an existing, writable
    directory. Never a symlink (the rename that writes it would replace the link, not what it
    points to), a FIFO (opening it waits for a reader), a device or a socket."""
    try:
        mode: int | None = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # the checks of its directory say why
        mode = None
    except OSError as err:
        raise EyefulError(f"{option} {path}: cannot look at it: {err.strerror}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise EyefulError(f"{option} {path}: is a directory; give a file name")
    if mode is not None and not stat.S_ISREG(mode):
        raise EyefulError(
            f"{option} {path}: is {kind(mode)}, not a regular file; give a regular file or a "
            "new name in an existing directory"
        )
    parent = path.absolute().parent
    if parent.exists() and not parent.is_dir():
        raise EyefulError(f"{option} {path}: {parent} is not a directory; give a file in one")
    if not parent.is_dir():
        raise EyefulError(f"{option} {path}: its directory {parent} does not exist; create it")
    try:
        if mode is not None:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK))
        else:  # made and removed again: only trying tells (root, read-only file systems)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            path.unlink()
    except OSError as err:
        raise EyefulError(f"{option} {path}: cannot write it: {err.strerror}") from None


def check_state_dir(paths: RepoPaths) -> None:
    """eyeful's state directory (``<git dir>/eyeful``) is a directory, or can become one."""
    state = paths.state_dir
    if state.exists() and not state.is_dir():
        raise EyefulError(
            f"{state} is not a directory: eyeful keeps its worktrees and cache there; "
            "move that file away and run again"
        )


def _kind(tree: pygit2.Tree, repo: pygit2.Repository, path: str) -> tuple[str, str] | None:
    """The first part of ``path`` that is not a directory in ``tree``: (prefix, type), or None."""
    parts = PurePosixPath(path).parts
    current = tree
    for depth, part in enumerate(parts, 1):
        try:
            entry = current[part]
        except KeyError:
            return None
        prefix = "/".join(parts[:depth])
        if entry.filemode == pygit2.enums.FileMode.LINK:
            return None  # where a symlink leads is checked on the checked-out tree (runs.py)
        if entry.type_str != "tree":
            return (prefix, "file") if depth < len(parts) else None
        if depth == len(parts):
            return prefix, "directory"
        current = tree_at(repo, entry.id)
    return None


def check_repro_paths(
    repo: pygit2.Repository, snapshot: Snapshot, findings: Iterable[Finding]
) -> None:
    """Every reproduction's path can be a file on both trees: not a directory, not under a file."""
    for finding in findings:
        if finding.repro is None:
            continue
        path = finding.repro.path
        for side in (snapshot.head, snapshot.base):
            found = _kind(tree_at(repo, side.tree), repo, path)
            if found is None:
                continue
            prefix, kind = found
            where = "the change" if side is snapshot.head else "the base"
            if kind == "directory":
                problem = f"repro.path {path!r} is a directory in {where}; name a test file in it"
            else:
                problem = (
                    f"repro.path {path!r} goes through {prefix!r}, which is a file in {where}; "
                    "name a test file in a directory"
                )
            raise EyefulError(f"finding {finding.id!r}: repro.path: {problem}")
