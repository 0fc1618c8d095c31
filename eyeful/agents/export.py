"""The change's files for an agent, with no link to the user's repository.

eyeful's worktrees share objects, refs, config and hooks with the user's repository: a `git`
run in one of them, or a file written through its `.git` pointer, reaches the user. An agent
reads files and needs none of that, so it gets an *export* of the change's tree: the files written
from the tree's blobs into a fresh temporary directory outside any repository. There is no
`.git` in it, none above it, and the agent gets no `GIT_*` variable (eyeful/agents/env.py), so a
`git` run there finds no repository. The directory is removed when the agents are done.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pygit2

from eyeful.errors import EyefulError
from eyeful.gitutil import git
from eyeful.snapshot import blob_at, tree_at

_LINK = 0o120000
_EXECUTABLE = 0o100755
_SKIPPED_NAMES = frozenset({"", ".", "..", ".git"})


def _inside_a_repository(path: Path) -> bool:
    """Whether git, run in ``path`` with no GIT_* variables, finds a repository around it."""
    return git("rev-parse", "--git-dir", cwd=path, check=False).returncode == 0


def _base_dir() -> Path:
    """A temporary directory no repository encloses ($TMPDIR, else /tmp, else /var/tmp)."""
    for candidate in (tempfile.gettempdir(), "/tmp", "/var/tmp"):  # noqa: S108
        path = Path(candidate)
        if path.is_dir() and not _inside_a_repository(path):
            return path
    raise EyefulError(
        "no temporary directory outside a git repository for the agent's files; set TMPDIR to one"
    )


def _link_stays_inside(root: Path, where: Path, target: str) -> bool:
    if Path(target).is_absolute():
        return False
    resolved = os.path.normpath(where.parent / target)
    return resolved == str(root) or resolved.startswith(str(root) + os.sep)


def write_tree(repo: pygit2.Repository, tree: str, root: Path) -> None:
    """Write the files of ``tree`` under ``root``: file modes kept, submodules left out, and a
    symlink only when it points inside ``root`` (the agent reads the change, not the disk)."""
    stack: list[tuple[Path, pygit2.Tree]] = [(root, tree_at(repo, tree))]
    while stack:
        directory, current = stack.pop()
        directory.mkdir(exist_ok=True)
        for entry in current:
            name = entry.name or ""
            if name.lower() in _SKIPPED_NAMES or "/" in name:
                continue
            path = directory / name
            if entry.type_str == "tree":
                stack.append((path, tree_at(repo, entry.id)))
            elif entry.type_str != "blob":  # a submodule's commit
                continue
            elif entry.filemode == _LINK:
                target = blob_at(repo, entry.id).data.decode("utf-8", errors="replace")
                if _link_stays_inside(root, path, target):
                    path.symlink_to(target)
            else:
                path.write_bytes(blob_at(repo, entry.id).data)
                if entry.filemode == _EXECUTABLE:
                    path.chmod(0o755)


def _drop_escaping_links(root: Path) -> None:
    """Remove every symlink that resolves outside ``root``, however links chain (``a -> b/..``
    where ``b -> ..``); each alone stayed inside by its text. Again until none is left, since a
    link's way out may run through another."""
    while True:
        escaping = []
        for directory, dirs, files in os.walk(root):  # never follows links
            for name in dirs + files:
                path = Path(directory) / name
                if path.is_symlink():
                    resolved = os.path.realpath(path)
                    if resolved != str(root) and not resolved.startswith(str(root) + os.sep):
                        escaping.append(path)
        if not escaping:
            return
        for path in escaping:
            path.unlink()


def _remove(root: Path) -> None:
    """Remove the export, also where an agent took away write permission."""
    for directory, _, _ in os.walk(root):
        with contextlib.suppress(OSError):
            Path(directory).chmod(stat.S_IRWXU)
    shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def exported_tree(repo: pygit2.Repository, tree: str) -> Iterator[Path]:
    """A fresh directory holding the files of ``tree``, removed when the block ends."""
    root = Path(tempfile.mkdtemp(prefix="eyeful-agent-", dir=_base_dir())).resolve()
    try:
        write_tree(repo, tree, root)
        _drop_escaping_links(root)
        yield root
    finally:
        _remove(root)
