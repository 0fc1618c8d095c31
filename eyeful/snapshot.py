"""The two trees a review compares: the base and the change.

By default the base is HEAD's commit (the empty tree on an unborn branch) and the change is the
staged index, turned into a tree object without writing the user's index file. Reviewing commits
(``--base``/``--head`` or pre-commit's PRE_COMMIT_FROM_REF/PRE_COMMIT_TO_REF) compares commits.
Objects may be added to the object database; nothing else of the user's is written.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from eyeful.errors import GitError, MissingBase
from eyeful.gitutil import RepoPaths, clean_env, git, index_path

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
REGULAR_FILE_MODES = (pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.BLOB_EXECUTABLE)
"""A tree entry that is a file's own text: not a symlink, a submodule or a directory."""
_MAX_MESSAGES = 50


@dataclass(frozen=True)
class Side:
    """One side of the comparison."""

    tree: str
    commit: str | None
    label: str

    @property
    def short(self) -> str:
        return (self.commit or self.tree)[:7]


@dataclass(frozen=True)
class Snapshot:
    base: Side
    head: Side
    messages: tuple[str, ...] = ()
    submodules: tuple[str, ...] = field(default=())
    moved_submodules: tuple[str, ...] = field(default=())
    """Submodules the change adds, removes or points at another commit: what that changes is
    never tested (eyeful does not check submodules out), so the review cannot be clean."""

    @property
    def empty(self) -> bool:
        return self.base.tree == self.head.tree


def open_repository(paths: RepoPaths) -> pygit2.Repository:
    try:
        return pygit2.Repository(str(paths.git_dir))
    except pygit2.GitError as err:
        if "sha256" in str(err):
            raise GitError(
                "this repository uses SHA-256 object names, which eyeful's git library (libgit2) "
                "cannot read yet; eyeful reviews SHA-1 repositories only"
            ) from None
        raise GitError(f"cannot open the repository {paths.git_dir}: {err}") from None


class _Index(pygit2.Index):
    """pygit2's Index, without the second error its ``__del__`` raises when opening failed."""

    def __del__(self) -> None:
        if hasattr(self, "_index"):
            super().__del__()


def tree_at(repo: pygit2.Repository, oid: str | pygit2.Oid) -> pygit2.Tree:
    tree = repo[oid]
    assert isinstance(tree, pygit2.Tree)
    return tree


def blob_at(repo: pygit2.Repository, oid: str | pygit2.Oid) -> pygit2.Blob:
    blob = repo[oid]
    assert isinstance(blob, pygit2.Blob)
    return blob


def regular_file(
    repo: pygit2.Repository, tree: pygit2.Tree | str | pygit2.Oid, path: str
) -> bytes | None:
    """The bytes of ``path`` in ``tree`` where it is a regular file (not a directory, a symlink,
    a submodule), else None."""
    root = tree if isinstance(tree, pygit2.Tree) else tree_at(repo, tree)
    try:
        entry = root[path]
    except KeyError:
        return None
    if entry.type_str != "blob" or entry.filemode not in REGULAR_FILE_MODES:
        return None
    return bytes(blob_at(repo, entry.id).data)


class NotACommit(GitError):
    """The revision names an object that is no commit (a blob, a tree): nothing to fetch."""


def _peel_commit(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    try:
        obj = repo.revparse_single(rev)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise GitError(f"unknown revision {rev!r}: give a commit, branch or tag") from None
    try:
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise NotACommit(
            f"{rev!r} is a {obj.type_str}, not a commit: give a commit, branch or tag"
        ) from None
    assert isinstance(commit, pygit2.Commit)
    return commit


_HEX_ID = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
_DEEPEN = "`git fetch --deepen=1` (or `git fetch --unshallow` for the whole history)"


def _shallow_commits(paths: RepoPaths) -> frozenset[str]:
    """The commits whose parents a shallow clone does not have (git's `shallow` file)."""
    try:
        text = (paths.common_dir / "shallow").read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return frozenset()
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def _side_for_rev(repo: pygit2.Repository, rev: str, shallow: frozenset[str] | None = None) -> Side:
    """A commit to compare with; with ``shallow`` given, it is the base, which must be here."""
    if rev.strip("0") == "" or rev == EMPTY_TREE:
        # pre-push passes all zeros for a ref the remote does not have yet.
        return _empty_side(repo)
    try:
        commit = _peel_commit(repo, rev)
    except GitError as err:
        if shallow is None or isinstance(err, NotACommit):
            raise
        if shallow:
            raise MissingBase(
                f"the base {rev!r} is not in this shallow clone: fetch more history with "
                f"{_DEEPEN}, then run again"
            ) from None
        if _HEX_ID.fullmatch(rev):
            raise MissingBase(
                f"the base commit {rev[:12]} is not in this repository (a ref not fetched yet): "
                "`git fetch` it, then run again"
            ) from None
        raise
    return Side(tree=str(commit.tree_id), commit=str(commit.id), label=rev)


def _empty_side(repo: pygit2.Repository) -> Side:
    tree = str(repo.TreeBuilder().write())
    return Side(tree=tree, commit=None, label="empty tree")


_UNMERGED = "the index has unmerged paths: resolve the conflicts and stage them, then run again"
_MERGING = "a merge is in progress: commit or abort it (git merge --abort) first"


def _check_clean_state(repo: pygit2.Repository, paths: RepoPaths, index: pygit2.Index) -> None:
    if index.conflicts is not None:
        raise GitError(_UNMERGED)
    if (paths.git_dir / "MERGE_HEAD").exists():
        raise GitError(_MERGING)


def _head_side(repo: pygit2.Repository) -> Side:
    if repo.head_is_unborn:
        return _empty_side(repo)
    try:
        ref = repo.head
        commit = ref.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        name = repo.references.get("HEAD")
        target = name.target if name is not None else "HEAD"
        raise GitError(
            f"HEAD ({target}) names an object that is not in the repository; the "
            "repository is damaged: run `git fsck`, and point the branch at a commit that exists"
        ) from None
    return Side(tree=str(commit.tree_id), commit=str(commit.id), label="HEAD")


def _staged_side(repo: pygit2.Repository, paths: RepoPaths) -> Side:
    index_file = index_path(paths)
    try:
        index = _Index(str(index_file)) if index_file.exists() else pygit2.Index()
    except pygit2.GitError:
        # A split index, a sparse index or a newer format libgit2 cannot read: git can.
        return Side(tree=_tree_by_git(paths, index_file), commit=None, label="staged")
    _check_clean_state(repo, paths, index)
    if _may_intend_to_add(index_file, index):
        # `git add -N`: git leaves such a path out of the tree it writes, libgit2 writes it as
        # an empty file (which shadowed a module of the standard library: helper-58).
        return Side(tree=_tree_by_git(paths, index_file), commit=None, label="staged")
    try:
        tree = index.write_tree(repo)
    except pygit2.GitError as err:
        raise GitError(f"cannot build a tree from the index: {err}") from None
    return Side(tree=str(tree), commit=None, label="staged")


_EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def _may_intend_to_add(index_file: Path, index: pygit2.Index) -> bool:
    """Whether the index may hold a path added with intent to add (``git add -N``): a flag only
    an index of version 3 or later has, on an entry whose blob is the empty one."""
    try:
        with index_file.open("rb") as handle:
            header = handle.read(8)
    except OSError:
        return False
    if len(header) < 8 or int.from_bytes(header[4:8], "big") < 3:
        return False
    return any(str(entry.id) == _EMPTY_BLOB for entry in index)


def _tree_by_git(paths: RepoPaths, index_file: Path) -> str:
    """The index's tree by `git write-tree` on a copy: git may rewrite the index it reads."""
    with tempfile.TemporaryDirectory(prefix="eyeful-index-") as scratch:
        copy = Path(scratch) / "index"
        shutil.copyfile(index_file, copy)
        env = {**clean_env(), "GIT_DIR": str(paths.git_dir), "GIT_INDEX_FILE": str(copy)}
        # Unsplit and unsparse only the copy: nothing new is written into the git dir.
        flags = ("-c", "core.splitIndex=false", "-c", "index.sparse=false")
        if git(*flags, "ls-files", "--unmerged", cwd=paths.root, env=env).stdout.strip():
            raise GitError(_UNMERGED)
        if (paths.git_dir / "MERGE_HEAD").exists():
            raise GitError(_MERGING)
        proc = git(*flags, "write-tree", cwd=paths.root, env=env)
    return proc.stdout.decode().strip()


def _messages(repo: pygit2.Repository, base: Side, head: Side) -> tuple[str, ...]:
    if head.commit is None:
        return ()
    walker = repo.walk(head.commit, pygit2.enums.SortMode.TOPOLOGICAL)
    if base.commit is not None:
        walker.hide(base.commit)
    out: list[str] = []
    for commit in walker:
        out.append(commit.message.strip())
        if len(out) >= _MAX_MESSAGES:
            break
    return tuple(out)


def blobs(
    repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = ""
) -> Iterator[tuple[str, pygit2.Object]]:
    """Every blob entry of a tree, with its path, subtrees walked."""
    for entry in tree:
        if entry.type_str == "tree":
            yield from blobs(repo, tree_at(repo, entry.id), f"{prefix}{entry.name}/")
        elif entry.type_str == "blob":
            yield f"{prefix}{entry.name}", entry


def gitlinks(repo: pygit2.Repository, tree_id: str) -> dict[str, str]:
    """The submodules in a tree (eyeful does not check them out): path -> the commit named."""

    def walk(tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, str]]:
        # The entry's type, as git derives it from the mode: a submodule's (a gitlink, 160000)
        # is "commit". Not `filemode`, an enum made per entry: 10,000 files cost 4 ms more.
        for entry in tree:
            kind = entry.type_str
            if kind == "commit":
                yield f"{prefix}{entry.name}", str(entry.id)
            elif kind == "tree":
                yield from walk(tree_at(repo, entry.id), f"{prefix}{entry.name}/")

    return dict(walk(tree_at(repo, tree_id), ""))


def _moved(repo: pygit2.Repository, base: Side, head: dict[str, str]) -> tuple[str, ...]:
    """The submodules whose commit differs between the sides (added or removed too)."""
    if base.tree == EMPTY_TREE:
        return tuple(sorted(head))
    old = gitlinks(repo, base.tree)
    return tuple(sorted(p for p in {*old, *head} if old.get(p) != head.get(p)))


def take_snapshot(
    paths: RepoPaths, base_rev: str | None = None, head_rev: str | None = None
) -> Snapshot:
    """Resolve what to compare; see the module docstring for the rules."""
    for option, rev in (("--base", base_rev), ("--head", head_rev)):
        if rev is not None and not rev.strip():
            raise GitError(f"{option}: empty; give a commit, branch or tag")
    repo = open_repository(paths)
    shallow = _shallow_commits(paths)
    if base_rev is None and head_rev is None:
        base, head = _head_side(repo), _staged_side(repo, paths)
    elif head_rev is None:
        assert base_rev is not None
        if repo.head_is_unborn:
            raise GitError("--base needs a commit to compare with, and HEAD has none yet")
        base, head = _side_for_rev(repo, base_rev, shallow), _head_side(repo)
    else:
        head = _side_for_rev(repo, head_rev)
        if base_rev is None:
            assert head.commit is not None
            if head.commit in shallow:
                # A shallow clone's boundary commit looks like a root commit; its parent exists.
                raise MissingBase(
                    f"the base ({head_rev}^) is not in this shallow clone: fetch it with "
                    f"{_DEEPEN}, then run again"
                )
            parents = _peel_commit(repo, head.commit).parents
            base = (
                Side(str(parents[0].tree_id), str(parents[0].id), f"{head_rev}^")
                if parents
                else _empty_side(repo)
            )
        else:
            base = _side_for_rev(repo, base_rev, shallow)
            if base.commit and head.commit:
                fork = repo.merge_base(base.commit, head.commit)
                if fork is not None and str(fork) != base.commit:
                    commit = _peel_commit(repo, str(fork))
                    base = Side(str(commit.tree_id), str(fork), f"merge-base of {base_rev}")
    links = gitlinks(repo, head.tree)
    return Snapshot(
        base=base,
        head=head,
        messages=_messages(repo, base, head),
        submodules=tuple(links),
        moved_submodules=_moved(repo, base, links) if base.tree != head.tree else (),
    )
