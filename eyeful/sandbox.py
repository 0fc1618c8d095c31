"""Code nobody confirmed runs in a sandbox: bubblewrap (``bwrap``) on Linux, as Claude Code's does.

A reproduction or a fix was written by an agent or a findings file, not by the user; the runs
that execute it see (README "What untrusted code can do"):

- the filesystem read-only, except the worktree it runs in, a temporary directory private to
  the review (``TMPDIR``) and a private ``HOME``; the user's repository, its common git
  directory and the probe's record directory (written through a descriptor: eyeful/testrun.py)
  are read-only with the rest;
- no network (a network namespace of its own: loopback only), and no Unix-domain socket of its
  own making, which reaches a daemon by its path (a seccomp filter, :func:`seccomp_filter`);
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

__all__ = ["Jail", "filter_descriptor", "refused_by_sandbox", "unavailable", "wrapped"]

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


# A seccomp filter (classic BPF, as bwrap's ``--seccomp FD`` loads it) refusing what the network
# namespace leaves open: a Unix-domain socket made with `socket()` (the only way to connect to,
# or send to, one that has a path: `/run/docker.sock`, a user's session bus or ssh agent; as
# root, the daemon behind one runs what it is told as root, outside: helper-58), and io_uring,
# which makes sockets without that call. A pair made by `socketpair()` (asyncio's, multiprocessing's
# pipes) connects to nothing else and stays. The refusal is EAFNOSUPPORT, which Linux never
# gives for AF_UNIX: its text in a failure says the sandbox refused (:data:`_REFUSALS`). Another
# architecture than the machine's (a 32-bit program's calls) is killed: its socket calls could
# not be read. Per machine: the system call numbers and the architecture's audit value.
_SECCOMP_ARCHES = {  # (audit value, socket, socketpair, x32 calls to refuse)
    "x86_64": (0xC000003E, 41, 53, True),
    "aarch64": (0xC00000B7, 198, 199, False),
}
_AF_UNIX = 1
_SOCK_DGRAM = 2
_EAFNOSUPPORT = 97
_IO_URING_SETUP = 425  # (the same number on every architecture since Linux 5.1)


def _seccomp_program() -> bytes | None:
    """The filter for this machine's architecture (little-endian), or None where eyeful has none:
    no `socket(AF_UNIX)`, no datagram pair of them (`socketpair(AF_UNIX, SOCK_DGRAM)`: one
    end can still send to a socket's path, helper-59), no io_uring, no x32 call."""
    import platform
    import struct

    found = _SECCOMP_ARCHES.get(platform.machine())
    if found is None or sys.byteorder != "little":
        return None
    arch, socket_nr, pair_nr, x32 = found
    ld, jeq, jge, ret, and_ = 0x20, 0x15, 0x35, 0x06, 0x54
    # (code, label if true, label if false, k), the labels resolved below.
    program: list[tuple[int | str, str, str, int]] = [
        (ld, "", "", 4),  # the architecture
        (jeq, "", "kill", arch),
        (ld, "", "", 0),  # the call's number
        *([(jge, "refuse", "", 0x40000000)] if x32 else []),
        (jeq, "refuse", "", _IO_URING_SETUP),
        (jeq, "socket", "", socket_nr),
        (jeq, "", "allow", pair_nr),
        (ld, "", "", 16),  # socketpair(): its family (the first argument's low half)
        (jeq, "", "allow", _AF_UNIX),
        (ld, "", "", 24),  # and its type, flags aside
        (and_, "", "", 0xF),
        (jeq, "refuse", "allow", _SOCK_DGRAM),
        ("socket", "", "", 0),
        (ld, "", "", 16),  # socket(): its family
        (jeq, "refuse", "allow", _AF_UNIX),
        ("allow", "", "", 0),
        (ret, "", "", 0x7FFF0000),
        ("refuse", "", "", 0),
        (ret, "", "", 0x00050000 | _EAFNOSUPPORT),
        ("kill", "", "", 0),
        (ret, "", "", 0x80000000),
    ]
    at: dict[str, int] = {}
    code: list[tuple[int, str, str, int]] = []
    for head, yes, no, k in program:
        if isinstance(head, str):
            at[head] = len(code)
        else:
            code.append((head, yes, no, k))

    def jump(label: str, here: int) -> int:
        return 0 if not label else at[label] - here - 1

    return b"".join(
        struct.pack("=HBBI", op, jump(yes, i), jump(no, i), k)
        for i, (op, yes, no, k) in enumerate(code)
    )


@functools.cache
def seccomp_filter() -> bytes | None:
    """The filter, where this machine's bwrap loads it (checked once a process), else None."""
    program = _seccomp_program()
    bwrap = shutil.which("bwrap")
    if program is None or bwrap is None:
        return None
    read = _readable(program)
    try:
        check = [bwrap, *_namespaces(), "--seccomp", str(read), "--ro-bind", "/", "/",
                 "--dev", "/dev", "--proc", "/proc", "true"]  # fmt: skip
        proc = subprocess.run(check, capture_output=True, timeout=20, check=False,
                              pass_fds=(read,))  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        os.close(read)
    return program if proc.returncode == 0 else None


def filter_descriptor() -> int | None:
    """A descriptor to read :func:`seccomp_filter` from (the caller passes it to bwrap and
    closes it), or None where there is none."""
    program = seccomp_filter()
    return None if program is None else _readable(program)


def _readable(data: bytes) -> int:
    """A pipe's read end holding ``data`` (a filter: far smaller than a pipe's buffer)."""
    read, write = os.pipe()
    try:
        os.write(write, data)
    finally:
        os.close(write)
    return read


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

    def argv(
        self, argv: list[str], writable: Iterable[Path], *, seccomp: int | None = None
    ) -> list[str]:
        """``argv`` run under bwrap: read-only but for ``writable`` and the private dirs; with
        ``seccomp`` (:func:`filter_descriptor`), no Unix-domain socket of its own making."""
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
        if seccomp is not None:
            binds += ["--seccomp", str(seccomp)]
        at = out.index("--")
        return [*out[:at], *binds, *out[at:]]


# What a program prints when the sandbox, not the code, stopped it: a write outside the places it
# may write (EROFS), the network (no route, no name resolution).
_REFUSALS = re.compile(
    r"\[Errno 30\] Read-only file system|Read-only file system|"
    r"\[Errno 101\] Network is unreachable|Temporary failure in name resolution|"
    r"\[Errno 97\] Address family not supported by protocol|"
    r"\[Errno -3\]"
)


def refused_by_sandbox(texts: Iterable[str]) -> str | None:
    """The line saying the sandbox stopped the run, if a failure's text holds one."""
    for text in texts:
        found = _REFUSALS.search(text)
        if found is not None:
            return found.group(0)
    return None
