"""Running git, and the environment git and project commands get.

git exports GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE and friends to the hooks it runs. Inherited by a
`git` call in one of eyeful's worktrees, GIT_INDEX_FILE would make that call write the *user's*
index (pre-commit #1849, semgrep #11318). Every call outside the user's own repository therefore
gets :func:`clean_env`.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from eyeful.errors import EyefulError, GitError

# eyeful's checkouts: <common git dir>/eyeful/worktrees/wt-N (failures.py recognises frames there).
STATE_DIR = "eyeful"
WORKTREES_DIR = "worktrees"
WORKTREE_PREFIX = "wt-"

# The GIT_* variables that configure git itself rather than point at a repository; everything
# else with the prefix is dropped (the same allow-list idea as pre-commit's no_git_env).
_KEEP_GIT_VARS = frozenset(
    {
        "GIT_EXEC_PATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_COUNT",
        "GIT_HTTP_PROXY_AUTHMETHOD",
        "GIT_ALLOW_PROTOCOL",
        "GIT_ASKPASS",
        "GIT_TERMINAL_PROMPT",
    }
)


def clean_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment without the GIT_* variables that tie a process to the user's repository."""
    env = dict(os.environ if base is None else base)
    for name in list(env):
        if not name.startswith("GIT_") or name in _KEEP_GIT_VARS:
            continue
        if name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")):
            continue
        del env[name]
    return env


def git(
    *args: str,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    stdin: bytes | None = None,
    hooks: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """Run git, hooks off unless asked; raise :class:`GitError` with its stderr when asked to."""
    # No hook, and no fsmonitor command (a command git runs like a hook, named in config that a
    # worktree's untrusted files might have pointed git at); never into submodules, which
    # eyeful's worktrees leave empty (`submodule.recurse` in your config would make a checkout
    # there fail).
    quiet = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false")
    argv: Sequence[str] = (
        ["git", *args] if hooks else ["git", *quiet, "-c", "submodule.recurse=false", *args]
    )
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env=clean_env() if env is None else dict(env),
        input=stdin,
        capture_output=True,
        check=False,
    )
    if check and proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        detail = message[-1] if message else f"exit code {proc.returncode}"
        raise GitError(f"git {args[0]} failed: {detail}")
    return proc


@dataclass(frozen=True)
class RepoPaths:
    """Where a repository lives: its working tree, its git dir and the common git dir."""

    root: Path
    git_dir: Path
    common_dir: Path

    @property
    def state_dir(self) -> Path:
        """eyeful's own directory: worktrees, cache and locks; never inside the working tree."""
        return self.common_dir / STATE_DIR


def current_directory() -> Path:
    """The working directory, which may have been removed under a running shell."""
    try:
        return Path.cwd()
    except FileNotFoundError:
        raise EyefulError(
            "the current directory no longer exists (it was removed after the shell entered "
            "it); cd into the repository again"
        ) from None
    except OSError as err:
        raise EyefulError(f"the current directory cannot be read: {err.strerror}") from None


def find_repo(start: Path, env: Mapping[str, str] | None = None) -> RepoPaths:
    """Locate the repository around ``start``, honouring GIT_DIR/GIT_WORK_TREE as git does."""
    proc = subprocess.run(
        [
            "git",
            "rev-parse",
            "--is-bare-repository",
            "--is-inside-work-tree",
            "--absolute-git-dir",
            "--git-common-dir",
            "--show-toplevel",
        ],
        cwd=start,
        env=None if env is None else dict(env),
        capture_output=True,
        check=False,
    )
    lines = proc.stdout.decode(errors="surrogateescape").splitlines()
    if proc.returncode != 0 and not lines:
        raise GitError(
            f"not a git repository: {start} (run eyeful inside a repository's working tree)"
        )
    if lines and lines[0] == "true":
        raise GitError(
            "this is a bare repository: eyeful reviews a working tree's staged change; "
            "run it in a clone with a working tree"
        )
    # Outside the working tree git still works when GIT_DIR and GIT_WORK_TREE name it, and
    # rev-parse then still shows the top level.
    if len(lines) < 5 or (lines[1] != "true" and not lines[4]):
        raise GitError(
            f"not inside a working tree: {start} (run eyeful inside a repository's working tree)"
        )
    git_dir = Path(lines[2])
    common = Path(lines[3])
    if not common.is_absolute():
        common = (start / common).resolve()
    return RepoPaths(root=Path(lines[4]).resolve(), git_dir=git_dir.resolve(), common_dir=common)


def index_path(paths: RepoPaths) -> Path:
    """The index the staged change is read from.

    Inside a hook git may point GIT_INDEX_FILE elsewhere (`git commit -a`, `git commit <paths>`);
    that index is the one being committed, so that is the change.
    """
    override = os.environ.get("GIT_INDEX_FILE")
    if override:
        return Path(override).resolve()
    return paths.git_dir / "index"


_ID_CHARS = frozenset("0123456789abcdef")


def is_commit_id(rev: str) -> bool:
    """A full SHA-1 object id as git prints it (40 lowercase hex digits): names one fixed commit,
    where a branch or `HEAD^` may move."""
    return len(rev) == 40 and all(c in _ID_CHARS for c in rev)
