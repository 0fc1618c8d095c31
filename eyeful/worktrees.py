"""A pool of git worktrees under ``<common git dir>/eyeful/worktrees``, reused between runs.

Each use force-checks-out a snapshot and removes untracked files git does not ignore, while the
ignored ones (virtualenvs, build output) stay, so a warm `setup` is cheap. A worktree is held by
an flock on its lock file: two eyeful processes never share one, and a crashed process releases
its lock with its file descriptors.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

import pygit2

from eyeful.errors import EyefulError
from eyeful.gitutil import WORKTREE_PREFIX, WORKTREES_DIR, RepoPaths, git
from eyeful.shell import check_cancelled

STOP = ".pytest.ini"
"""The configuration file eyeful puts at a worktree's root for one run whose tree has none where
pytest looks (eyeful/imports.py ``config_stop``): an empty ``[pytest]`` section."""

# A commit with no parent (no history known) is dated 1980-01-02: a zip's first date, as tools
# that stamp a build with the last commit's time need one.
_SIGNATURE = pygit2.Signature("eyeful", "eyeful@localhost", 315_619_200, 0)


def snapshot_commit(repo: pygit2.Repository, tree: str, parent: str | None = None) -> str:
    """A commit for ``tree`` that no ref points at; the same tree (and parent) always gives the
    same commit. With ``parent`` (the base), a commit on top of it, whatever the tree: every side
    is one commit after the base, the base's own tree too, so `git describe`, the tags and the
    commit count see the history there as in the user's clone (setuptools-scm, hatch-vcs,
    versioneer), and alike on both sides (the base itself would describe as the tag, the change
    as one commit after it)."""
    parents: list[pygit2.Oid] = []
    author = committer = _SIGNATURE
    if parent is not None:
        found = repo.get(parent)
        if isinstance(found, pygit2.Commit):
            parents = [found.id]
            # Its parent's author, committer and dates: what a test reads of the last commit
            # (`git log -1`: a build's timestamp, a CalVer year) is alike on both sides.
            author, committer = found.author, found.committer
    oid = repo.create_commit(
        None, author, committer, "eyeful snapshot\n", pygit2.Oid(hex=tree), parents
    )
    return str(oid)


def linked_git_dir(path: Path) -> Path | None:
    """The admin directory a linked worktree's ``.git`` file names, or None without one."""
    try:
        text = (path / ".git").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir: "):
        return None
    return Path(text.removeprefix("gitdir: ").strip())


def _is_linked(path: Path) -> bool:
    """Whether ``path`` and its admin directory still name each other.

    They stop doing so when the repository is moved or copied: the ``.git`` file then names the
    old place (gone, or another repository's), and git would fail there or work on the other one.
    """
    admin = linked_git_dir(path)
    if admin is None:
        return False
    try:
        back = Path((admin / "gitdir").read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return False
    return back.resolve() == (path / ".git").resolve()


@dataclass
class Worktree:
    name: str
    path: Path
    state_dir: Path

    @property
    def setup_stamp(self) -> Path:
        return self.state_dir / "setup" / self.name

    @property
    def taint_mark(self) -> Path:
        """Present while files nobody confirmed (a reproduction, a fix) may be in the worktree."""
        return self.state_dir / "tainted" / self.name

    @property
    def tainted(self) -> bool:
        return self.taint_mark.exists()

    def taint(self) -> None:
        """Mark the worktree before untrusted files go on it: whatever they create or change, at
        any path, ignored or not, is removed by the next checkout (and an interrupted run leaves
        the mark). The mark lists the ignored files there now (what setup built), each with what
        only a write changes (inode, size, ctime): those still so are kept, so setup need not run
        again; code cannot set a ctime back."""
        if self.tainted:
            return  # the ignored files listed then are still the only ones that may stay
        self.taint_mark.parent.mkdir(parents=True, exist_ok=True)
        # A nested repository is listed as one entry (`vendor/dep/`), whose directory a write
        # to a file in it leaves as it was: it is marked so that it never matches, and goes.
        kept = {
            name: ["directory"] if name.endswith("/") else _identity(self.path / name)
            for name in self._ignored()
        }
        # Ignored directories too (an empty `instance/` setup made, and the directories in it):
        # the sweep keeps them; one gone afterwards is setup's product gone.
        for name in self._ignored(directories=True):
            if name.endswith("/") and name not in kept:
                kept[name] = _KEPT_DIRECTORY
                for below in _directories_in(self.path, name):
                    kept.setdefault(below, _KEPT_DIRECTORY)
        text = json.dumps({k: v for k, v in kept.items() if v is not None}, sort_keys=True)
        self.taint_mark.write_text(text, encoding="utf-8")  # cut short: not JSON, all goes

    def _ignored(self, directories: bool = False) -> list[str]:
        """The ignored files in the worktree (whole ignored directories listed file by file; with
        ``directories``, as one entry each, empty ones too)."""
        flags = ["--directory"] if directories else []
        listed = git("ls-files", "-z", "--others", "--ignored", "--exclude-standard", *flags,
                     cwd=self.path, check=False)  # fmt: skip
        return _names(listed.stdout) if listed.returncode == 0 else []

    def _clean_tainted(self) -> bool:
        """After untrusted files: remove every ignored file that was not there when the worktree
        was marked, or that changed since. Whether what setup built is whole (nothing of it
        was removed), so that setup need not run again: a new file was none of it, nor is what
        any test run writes again (bytecode, `.pytest_cache`: :func:`_run_cache`)."""
        try:
            kept = json.loads(self.taint_mark.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            kept = None
        if not isinstance(kept, dict):
            self._clean("-ffdxq")
            return False
        directories = [name for name, was in kept.items() if was == _KEPT_DIRECTORY]
        kept = {name: was for name, was in kept.items() if was != _KEPT_DIRECTORY}
        # A directory setup made that untrusted code removed (helper-65): setup runs again.
        whole = all(_real_directory(self.path / name) for name in directories)
        for name in self._ignored():
            before = kept.pop(name, None)
            if before != _identity(self.path / name):
                if before is not None and not _run_cache(name):
                    whole = False  # setup's file, changed
                self._remove(name)
        if any(not _run_cache(name) for name in kept):
            whole = False  # something setup built is gone
        self._clean("-ffdq")  # untracked, not ignored: all of it untrusted's
        return whole

    def _sweep(self, repo: pygit2.Repository, head: str | None) -> None:
        """After untrusted files, by the file system alone (no git, which would read the files'
        attributes and run filters in the worktree): every file written since the taint mark, and
        every one that is neither the checked-out commit's (``head``) nor an ignored file the mark
        keeps, goes, wherever git does not look too (in a directory named `.git`, in a
        submodule's directory, which eyeful never fills); the checkout puts the commit's back."""
        try:
            since = self.taint_mark.stat().st_mtime_ns
            kept = json.loads(self.taint_mark.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            since, kept = 0, {}
        kept = kept if isinstance(kept, dict) else {}
        tracked: set[str] = set()
        submodules: set[str] = set()
        found = repo.get(head) if head is not None else None
        if isinstance(found, pygit2.Commit):
            for path, submodule in _tree_paths(found.tree):
                (submodules if submodule else tracked).add(path)
        directories = {name.rstrip("/") for name, was in kept.items() if was == _KEPT_DIRECTORY}
        files = {n for n, was in kept.items() if was not in (["directory"], _KEPT_DIRECTORY)}
        allowed = tracked | files
        kept_too = allowed | submodules | directories
        parents = {str(parent) for name in kept_too for parent in PurePosixPath(name).parents}
        parents |= submodules | directories  # entered (a submodule's emptied), never removed
        for attempt in range(2):
            if not _swept(self.path, "", allowed, parents, since) or attempt:
                break
            _owner_may_enter(self.path)  # a directory a test left read-only: once more

    def _clean(self, flags: str) -> None:
        """`git clean`; where it could not remove what a test left unreadable or unwritable,
        the worktree's directories are made its owner's again and it runs once more."""
        if git("clean", flags, cwd=self.path, check=False).returncode != 0:
            _owner_may_enter(self.path)
            git("clean", flags, cwd=self.path)

    def _remove(self, name: str) -> None:
        """An ignored file (or nested repository), and the directories that held only it
        (untrusted code made them)."""
        path = self.path / name
        with contextlib.suppress(OSError):
            if name.endswith("/") and not path.is_symlink():
                remove_tree(path)
            else:
                path.unlink()
            for parent in path.parents:
                if parent == self.path:
                    break
                parent.rmdir()  # OSError once one is not empty: its other files were there

    @property
    def clock(self) -> Path:
        """The last modification time :meth:`stamp` gave (whole seconds)."""
        return self.state_dir / "clock" / self.name

    def checkout(
        self, repo: pygit2.Repository, tree: str, *, clean_ignored: bool = False,
        parent: str | None = None,
    ) -> bool:  # fmt: skip
        """Make the files exactly ``tree``, keeping ignored files unless ``clean_ignored``;
        ``parent``: the commit whose history it has (:func:`snapshot_commit`). After untrusted
        files (the taint mark) only the ignored files they could not have touched stay. Returns
        whether what setup built there is whole.

        Every file the checkout changed is then :meth:`stamp`-ed, so build state an earlier tree
        left among the ignored files (bytecode, make targets) is older than this tree's sources.
        """
        commit = snapshot_commit(repo, tree, parent)
        admin = linked_git_dir(self.path)
        if admin is not None:
            # This process holds the worktree's flock, so no eyeful's git is at work here: a lock
            # file is what a git killed mid-checkout left (an interrupted eyeful kills the git it
            # waits for), and it would fail every later checkout.
            for name in ("index.lock", "HEAD.lock"):
                (admin / name).unlink(missing_ok=True)
        old = _detached_head(admin) if admin is not None else None
        if self.tainted:
            # Before any git command here: git reads the worktree's `.gitattributes` and runs
            # your filters' commands in it (a `clean` filter on a file that looks changed).
            self._sweep(repo, old)
        # Tracked files something rewrote since the last checkout (a reproduction, a fix, a
        # command) are restored by the checkout, as are the files that differ between the trees.
        dirty = _names(git("diff", "--name-only", "-z", "HEAD", cwd=self.path, check=False).stdout)
        if old is None:
            previous = git("rev-parse", "-q", "--verify", "HEAD", cwd=self.path, check=False)
            old = previous.stdout.decode().strip() if previous.returncode == 0 else None
        git("checkout", "--quiet", "--force", "--detach", commit, cwd=self.path)
        whole = True
        if clean_ignored:
            self._clean("-ffdxq")
            whole = False
        elif self.tainted:
            whole = self._clean_tainted()
        else:
            self._clean("-ffdq")
        self.taint_mark.unlink(missing_ok=True)
        self._unstop(repo, tree)
        changed = _between(repo, old, commit) if old is not None else None
        if changed is None:
            changed = _names(git("ls-files", "-z", cwd=self.path).stdout)
        self.stamp(sorted(set(changed) | set(dirty)))
        return whole

    def _unstop(self, repo: pygit2.Repository, tree: str) -> None:
        """The empty pytest configuration a run cut short left at the root (eyeful/imports.py
        ``config_stop``), where the tree does not have one: an ignored file that `git clean`
        keeps would otherwise decide the next tree's configuration."""
        stop = self.path / STOP
        if stop.exists() or stop.is_symlink():
            found = repo.get(tree)
            if not isinstance(found, pygit2.Tree) or STOP not in found:
                stop.unlink(missing_ok=True)

    def stamp(self, paths: list[str]) -> None:
        """Give ``paths`` a modification time later than anything built in this worktree before.

        Python's bytecode (and pytest's rewritten tests) is reused when the source's size and
        whole-second mtime match; make-style rules rebuild only what is older than its sources.
        A file written in the same second as an earlier tree's build would fool both. The time
        given is a whole second after both the clock and the last time given here, so it never
        equals a time an earlier tree's file had (it may run up to a second ahead of the clock).
        """
        if not paths:
            return
        try:
            last = int(self.clock.read_text(encoding="ascii"))
        except (OSError, ValueError):
            last = 0
        when = max(int(time.time()) + 1, last + 1)
        self.clock.parent.mkdir(parents=True, exist_ok=True)
        self.clock.write_text(f"{when}\n", encoding="ascii")
        for rel in paths:
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                os.utime(self.path / rel, (when, when), follow_symlinks=False)

    def read_setup_key(self) -> str | None:
        try:
            return self.setup_stamp.read_text(encoding="ascii").strip() or None
        except FileNotFoundError:
            return None

    def write_setup_key(self, key: str | None) -> None:
        self.setup_stamp.parent.mkdir(parents=True, exist_ok=True)
        if key is None:
            self.setup_stamp.unlink(missing_ok=True)
        else:
            self.setup_stamp.write_text(key + "\n", encoding="ascii")


def _owner_may_enter(top: Path) -> None:
    """Every directory under ``top`` (``top`` too) readable, writable and searchable by its
    owner (eyeful's user: its worktrees and private directories are its own), so that what a
    test left there (a directory it made mode 0 and failed before it set it back: helper-58)
    can be removed. A symbolic link is not followed; what cannot be changed is left."""
    todo = [top]
    while todo:
        here = todo.pop()
        with contextlib.suppress(OSError):
            mode = here.lstat().st_mode
            if (mode & 0o700) != 0o700 and not here.is_symlink():
                here.chmod(mode | 0o700)
        with contextlib.suppress(OSError):
            todo += [e for e in here.iterdir() if e.is_dir() and not e.is_symlink()]


def remove_tree(path: Path) -> None:
    """``path`` and all under it, whatever modes a test left there; what still cannot go is
    left (never an error)."""
    try:
        shutil.rmtree(path)
    except FileNotFoundError:
        return
    except (OSError, RecursionError):  # (Python's rmtree recurses: a tree some 1,000 deep)
        _owner_may_enter(path)
        with contextlib.suppress(RecursionError):
            shutil.rmtree(path, ignore_errors=True)
        if os.path.lexists(path):
            subprocess.run(["rm", "-rf", "--", str(path)], capture_output=True, check=False)


def _directories_in(top: Path, name: str) -> list[str]:
    """The directories below ``top / name`` (``name`` ends with ``/``), each as ``a/b/``; links
    are not followed."""
    found: list[str] = []
    for here, subdirectories, _ in os.walk(top / name):
        base = Path(here).relative_to(top).as_posix()
        found += [f"{base}/{d}/" for d in subdirectories if not (Path(here) / d).is_symlink()]
    return found


def _real_directory(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _tree_paths(tree: pygit2.Tree, prefix: str = "") -> Iterator[tuple[str, bool]]:
    """The paths of a tree's files, links and submodules, each with whether it is a submodule
    (whose directory stays empty in eyeful's worktrees)."""
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if isinstance(entry, pygit2.Tree):
            yield from _tree_paths(entry, path + "/")
        else:
            yield path, entry.filemode == pygit2.enums.FileMode.COMMIT


def _swept(
    top: Path, prefix: str, allowed: set[str], parents: set[str], since: int
) -> bool:  # fmt: skip
    """Remove under ``top / prefix`` what :meth:`Worktree._sweep` removes; whether something
    could not be removed."""
    stuck = False
    try:
        entries = list(os.scandir(top / prefix if prefix else top))
    except OSError:
        return True
    for entry in entries:
        name = f"{prefix}{entry.name}"
        if name == ".git":
            continue  # the worktree's own link to its git directory (read-only to untrusted code)
        try:
            info = entry.stat(follow_symlinks=False)
            if entry.is_dir(follow_symlinks=False):
                if name in parents:
                    stuck = _swept(top, name + "/", allowed, parents, since) or stuck
                else:
                    remove_tree(Path(entry.path))
                    stuck = stuck or os.path.lexists(entry.path)
            elif name not in allowed or info.st_ctime_ns >= since:
                Path(entry.path).unlink()
        except OSError:
            stuck = True
    return stuck


def _detached_head(admin: Path) -> str | None:
    """The commit a linked worktree's detached HEAD names (what eyeful's checkouts leave), read
    from its admin directory; None for anything else (a symbolic ref, no file): ask git."""
    try:
        text = (admin / "HEAD").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text):
        return text
    return None


def _between(repo: pygit2.Repository, old: str, new: str) -> list[str] | None:
    """The paths that differ between two commits (``git diff --name-only --no-renames``), read
    in this process; None when ``old`` is not a commit here (then every file counts)."""
    try:
        before, after = repo.get(old), repo.get(new)
        if not isinstance(before, pygit2.Commit) or not isinstance(after, pygit2.Commit):
            return None
        diff = repo.diff(before.tree, after.tree)
    except (ValueError, KeyError, pygit2.GitError):
        return None
    names: set[str] = set()
    for delta in diff.deltas:
        names.update((delta.old_file.path, delta.new_file.path))
    return sorted(names)


def _identity(path: Path) -> list[int] | None:
    """What only writing a file changes (a write, a chmod, a rename over it): never set back."""
    try:
        info = path.lstat()
    except OSError:
        return None
    return [info.st_ino, info.st_size, info.st_ctime_ns]


_KEPT_DIRECTORY = ["kept directory"]
"""The taint mark's word for an ignored directory there before untrusted files (an empty one
setup made): the sweep keeps it, and sweeps what is in it."""

RUN_CACHES = (".pytest_cache", ".hypothesis")
"""Directories a test run writes its caches in, at the top of the checkout."""


def _run_cache(name: str) -> bool:
    """What any test run writes again (Python's bytecode, pytest's and hypothesis' caches,
    coverage's data): no setup's product, removing it costs nothing of what setup built."""
    path = PurePosixPath(name)
    if path.suffix == ".pyc" and path.parent.name == "__pycache__":
        return True
    return path.parts[0] in RUN_CACHES or (
        len(path.parts) == 1 and (path.name == ".coverage" or path.name.startswith(".coverage."))
    )


def _names(data: bytes) -> list[str]:
    return [name.decode(errors="surrogateescape") for name in data.split(b"\0") if name]


class WorktreePool:
    """Hands out worktrees; creates one when every existing one is busy, up to ``size``."""

    def __init__(
        self, paths: RepoPaths, repo: pygit2.Repository, size: int = 8, base: str | None = None
    ) -> None:
        self.paths = paths
        self.repo = repo
        self.size = max(1, size)
        self.base = base
        """The commit every checkout is a commit on (:func:`snapshot_commit`); None: none."""
        self.root = paths.state_dir / WORKTREES_DIR
        self.locks = paths.state_dir / "locks"

    def parent_of(self, tree: str) -> str | None:
        """The commit a checkout of ``tree`` has as its history: the base's, whatever the tree."""
        return self.base

    def _worktree(self, index: int) -> Worktree:
        name = f"{WORKTREE_PREFIX}{index}"
        return Worktree(name=name, path=self.root / name, state_dir=self.paths.state_dir)

    def _try_lock(self, index: int, block: bool) -> IO[bytes] | None:
        self.locks.mkdir(parents=True, exist_ok=True)
        handle = (self.locks / f"{WORKTREE_PREFIX}{index}.lock").open("ab")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
        except BlockingIOError:
            handle.close()
            return None
        except BaseException:
            handle.close()
            raise
        return handle

    def _ensure(self, worktree: Worktree) -> None:
        if _is_linked(worktree.path):
            return
        if worktree.path.exists():
            remove_tree(worktree.path)
        worktree.write_setup_key(None)
        self.root.mkdir(parents=True, exist_ok=True)
        empty = snapshot_commit(self.repo, str(self.repo.TreeBuilder().write()))
        git(
            "worktree", "add", "--force", "--detach", "--no-checkout",
            str(worktree.path), empty,
            cwd=self.paths.common_dir,  # (a work tree apart from its git dir has no `.git`)
        )  # fmt: skip

    @contextlib.contextmanager
    def acquire(self) -> Iterator[Worktree]:
        """A worktree for this process alone until the block ends; waits when all are busy."""
        handle: IO[bytes] | None = None
        index = 0
        while handle is None:
            for index in range(self.size):
                handle = self._try_lock(index, block=False)
                if handle is not None:
                    break
            else:
                # Every worktree is busy (another thread or another eyeful): poll, so that
                # whichever is released first is taken.
                check_cancelled()
                time.sleep(0.05)
        try:
            worktree = self._worktree(index)
            with self._pool_lock():
                self._ensure(worktree)
            yield worktree
        finally:
            handle.close()

    def remove_all(self) -> int:
        """Remove eyeful's worktrees, their git admin entries and eyeful's whole state dir.

        Refuses while another eyeful holds one of the worktrees. Returns how many were removed.
        """
        held: list[IO[bytes]] = []
        try:
            found = self.root.glob(f"{WORKTREE_PREFIX}*") if self.root.is_dir() else []
            names = sorted(p.name for p in found)
            for name in names:
                handle = self._try_lock(int(name.removeprefix(WORKTREE_PREFIX)), block=False)
                if handle is None:
                    raise EyefulError(
                        "another eyeful is running in this repository; try again when it ends"
                    )
                held.append(handle)
            for name in names:
                _owner_may_enter(self.root / name)
                git("worktree", "remove", "--force", "--force", str(self.root / name),
                    cwd=self.paths.common_dir, check=False)  # fmt: skip
            self._forget_missing()
        finally:
            for handle in held:
                handle.close()
        remove_tree(self.paths.state_dir)
        return len(names)

    def _forget_missing(self) -> None:
        """Drop git's admin entries for eyeful worktrees whose directory is already gone."""
        admin = self.paths.common_dir / "worktrees"
        if not admin.is_dir():
            return
        for entry in admin.iterdir():
            try:
                target = Path((entry / "gitdir").read_text(encoding="utf-8").strip())
            except OSError:
                continue
            if target.parent.parent == self.root and not target.exists():
                shutil.rmtree(entry, ignore_errors=True)

    @contextlib.contextmanager
    def _pool_lock(self) -> Iterator[None]:
        # `git worktree add` writes the shared .git/worktrees admin area: one at a time.
        self.locks.mkdir(parents=True, exist_ok=True)
        with (self.locks / "pool.lock").open("ab") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield
