"""Code nobody confirmed runs in a sandbox: bubblewrap (``bwrap``) on Linux, as Claude Code's does.

A reproduction or a fix was written by an agent or a findings file, not by the user; the runs
that execute it see (README "What untrusted code can do"):

- the filesystem read-only, except the worktree it runs in, a temporary directory private to
  the review (``TMPDIR``) and a private ``HOME``; the user's repository, its common git
  directory and the probe's record directory (written through a descriptor: eyeful/testrun.py)
  are read-only with the rest;
- no network (a network namespace of its own: loopback only);
- its own pid namespace (``/proc`` shows nothing of eyeful's or the user's processes); it dies
  with eyeful;
- no capabilities, whoever runs eyeful (as root: ``nobody`` in a user namespace, where allowed);
- an allow-listed environment: what any program needs (``PATH``, locale, terminal), the
  variables the confirmed commands need (``[tool.eyeful] env``, the virtualenv, Python's, pytest's
  and Go's own settings, each by name), and eyeful's own (the probe's, the reaper's token).

It can still read what the user can (the root is bound read-only, not hidden: the interpreter,
its virtualenv and the project's dependencies live anywhere); what a reproduction prints in its
failure reaches the report.

Elsewhere (no ``bwrap``, not Linux, namespaces not allowed) :func:`unavailable` says why, and the
review says the runs went unsandboxed (``sandbox = "require"`` makes that exit 3).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Jail", "refused_by_sandbox", "unavailable", "wrapped"]

# What the go command builds and runs with, besides GOFLAGS: the target (a file under
# `//go:build !cgo` or `386` is compiled or not: helper-57), the toolchain's experiments, the
# runtime's settings, cgo's compiler (with every CGO_* variable).
GO_BUILD_VARIABLES = ("GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64", "GO386", "GOMIPS",
                      "GOMIPS64", "GOPPC64", "GORISCV64", "GOWASM", "GOEXPERIMENT", "GODEBUG",
                      "GOFIPS140", "GOWORK", "GOROOT", "GOGC", "GOMAXPROCS", "GOTRACEBACK",
                      "CC", "CXX")  # fmt: skip

# Named one by one (a prefix would let through any PYTHON_TOKEN the user has set).
_ALWAYS = frozenset(
    {
        "PATH", "USER", "LOGNAME", "TERM", "LANG", "LANGUAGE", "TZ", "SHELL", "VIRTUAL_ENV",
        "PYTHONPATH", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING",
        "PYTHONUTF8", "PYTHONWARNINGS", "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "PYTHONDEVMODE",
        "PYTHONFAULTHANDLER", "PYTHONUNBUFFERED", "PYTHONPYCACHEPREFIX",
        "PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
        "PYTEST_XDIST_AUTO_NUM_WORKERS", "GOFLAGS", "GOCACHE", "GOPATH", "GOTOOLCHAIN", "GOPROXY",
        *GO_BUILD_VARIABLES,
    }
)  # fmt: skip
_PREFIXES = ("LC_", "EYEFUL_PROBE", "CGO_")


@functools.cache
def unavailable() -> str | None:
    """Why runs cannot be sandboxed here, or None when they can (checked once a process)."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap sandboxes only on Linux (this is {sys.platform})"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed (apt-get install bubblewrap)"
    probe = [bwrap, *_namespaces(), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
             "true"]  # fmt: skip
    try:
        proc = subprocess.run(probe, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bubblewrap could not start: {err}"
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or ["no message"])[-1]
        return f"bubblewrap cannot make namespaces here: {why}"
    return None


def _namespaces(*, network: bool = False) -> list[str]:
    net = [] if network else ["--unshare-net"]
    return [*_unprivileged(), "--unshare-pid", *net, "--unshare-ipc", "--unshare-uts",
            "--die-with-parent"]  # fmt: skip


# The uid (and gid) code runs as inside the sandbox when eyeful runs as root: nobody's.
NOBODY = 65534


@functools.cache
def _unprivileged() -> tuple[str, ...]:
    """No capabilities inside, whoever runs eyeful: bwrap keeps root's (CAP_SYS_ADMIN: a remount
    makes every read-only bind writable) unless told. As root, also a user namespace in which the
    code is ``nobody``, where this machine allows one (checked once a process)."""
    drop = ("--cap-drop", "ALL")
    if os.geteuid() != 0:
        return drop
    user = ("--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY))
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return drop
    check = [bwrap, *user, *drop, "--ro-bind", "/", "/", "--dev", "/dev", "true"]
    try:
        proc = subprocess.run(check, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return drop
    return (*user, *drop) if proc.returncode == 0 else drop


def wrapped(
    argv: list[str], writable: Iterable[Path], *, network: bool = False,
    may_be_missing: Iterable[Path] = (),
) -> list[str]:  # fmt: skip
    """``argv`` under bwrap: the root read-only, ``writable`` (and those of ``may_be_missing``
    that exist) writable, its own pid namespace and ``/proc``; no network unless ``network``."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None, "callers check unavailable() first"
    binds: list[str] = []
    for path in writable:
        real = str(Path(path).resolve())
        binds += ["--bind", real, real]
    for path in may_be_missing:
        real = str(Path(path).resolve())
        binds += ["--bind-try", real, real]
    return [bwrap, *_namespaces(network=network), "--ro-bind", "/", "/", "--dev", "/dev",
            "--proc", "/proc", *binds, "--", *argv]  # fmt: skip


@dataclass(frozen=True)
class Jail:
    """Where one sandboxed run may write, and what it may read from the environment."""

    private: Path
    """The review's private directory: ``tmp/`` (TMPDIR) and ``home/`` (HOME) in it."""
    env_names: frozenset[str] = frozenset()
    """``[tool.eyeful] env``: variables the confirmed commands need."""

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` cut to the allow-list, with the private TMPDIR and HOME."""
        out = {
            name: value
            for name, value in env.items()
            if name in _ALWAYS or name in self.env_names or name.startswith(_PREFIXES)
        }
        out["TMPDIR"] = str(self.private / "tmp")
        out["HOME"] = str(self.private / "home")
        return out

    def argv(self, argv: list[str], writable: Iterable[Path]) -> list[str]:
        """``argv`` run under bwrap: read-only but for ``writable`` and the private dirs."""
        for name in ("tmp", "home"):
            (self.private / name).mkdir(parents=True, exist_ok=True)
        writable = list(writable)
        out = wrapped(argv, [*writable, self.private / "tmp", self.private / "home"])
        binds: list[str] = []
        for path in writable:
            # A worktree's `.git` file names the git directory eyeful's own (unsandboxed) git
            # commands use there: it stays as it is.
            dot_git = Path(path).resolve() / ".git"
            if dot_git.exists():
                binds += ["--ro-bind", str(dot_git), str(dot_git)]
        at = out.index("--")
        return [*out[:at], *binds, *out[at:]]


# What a program prints when the sandbox, not the code, stopped it: a write outside the places it
# may write (EROFS), the network (no route, no name resolution).
_REFUSALS = re.compile(
    r"\[Errno 30\] Read-only file system|Read-only file system|"
    r"\[Errno 101\] Network is unreachable|Temporary failure in name resolution|"
    r"\[Errno -3\]"
)


def refused_by_sandbox(texts: Iterable[str]) -> str | None:
    """The line saying the sandbox stopped the run, if a failure's text holds one."""
    for text in texts:
        found = _REFUSALS.search(text)
        if found is not None:
            return found.group(0)
    return None
