"""Paths of a snapshot's tree, with its symlinks followed as a checkout of it would follow them.

A documentation file is often a link (`README.rst -> doc/source/index.rst`); read through the
link it is the document. A link that leads out of the snapshot (an absolute target, or `..` past
its root) is not followed: what it names is not part of the change.
"""

from __future__ import annotations

import pygit2

from eyeful.snapshot import blob_at

_MAX_LINKS = 40  # what Linux allows a path lookup before ELOOP
_LINK_MODE = 0o120000


def resolve_in_tree(repo: pygit2.Repository, tree: str, path: str) -> pygit2.Object | None:
    """The entry ``path`` names in ``tree`` after following symlinks, or None (absent, escaping,
    or a loop)."""
    root = repo[tree]
    assert isinstance(root, pygit2.Tree)
    done: list[str] = []
    todo = path.split("/")
    links = 0
    entry: pygit2.Object | None = root
    while todo:
        name = todo.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            if not done:
                return None  # above the root: out of the snapshot
            done.pop()
            continue
        try:
            found = root["/".join([*done, name])]
        except KeyError:
            return None
        if found.filemode == _LINK_MODE:
            links += 1
            target = blob_at(repo, found.id).data.decode("utf-8", errors="surrogateescape")
            if links > _MAX_LINKS or target.startswith("/"):
                return None
            todo = target.split("/") + todo
            continue
        if todo and found.type_str != "tree":
            return None
        done.append(name)
        entry = found
    return entry if done else None
