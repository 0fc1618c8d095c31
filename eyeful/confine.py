"""Where a path given by a finding or the configuration lands in a worktree: never outside it."""

from __future__ import annotations

from pathlib import Path, PurePosixPath


class Refused(Exception):
    """What a finding asked to put on a tree cannot go there (ignored path, escaping symlink,
    a patch that does not apply)."""


def inside(worktree: Path, rel: str) -> Path:
    """Where ``rel`` lands in the worktree, refused with the real reason when it cannot be a file
    there: absolute, with '..', the root, through a symlink out, in .git, a directory, under a
    file."""
    pure = PurePosixPath(rel)
    if pure.is_absolute():
        raise Refused(f"{rel!r} is absolute; eyeful writes only inside the repository")
    if ".." in pure.parts:
        raise Refused(f"{rel!r} leads out of the repository ('..')")
    if not pure.parts:
        raise Refused(f"{rel!r} names the repository root, not a file")
    root = worktree.resolve()
    try:
        target = (root / rel).resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        raise Refused(f"{rel!r} cannot be resolved (a symlink loop)") from None
    if not target.is_relative_to(root) or target == root:
        raise Refused(f"{rel!r} leads out of the repository through a symlink")
    if ".git" in target.relative_to(root).parts[:1]:
        raise Refused(f"{rel!r} is inside .git")
    if target.is_dir():
        raise Refused(f"{rel!r} is a directory, not a file")
    for parent in target.relative_to(root).parents:
        if parent.parts and (root / parent).exists() and not (root / parent).is_dir():
            raise Refused(f"{rel!r} goes through {str(parent)!r}, which is a file")
    return target
