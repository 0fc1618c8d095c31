"""No process eyeful started, nor anything those started, outlives the command or eyeful.

A command runs in its own process group, which is killed when it ends; but a test may start a
process in a new session (``setsid``), out of the group's reach. So:

- every project command carries ``EYEFUL_RUN=<token>`` in its environment, inherited by all it
  starts (whatever their session); when the command ends, every process still carrying the
  token is killed (:func:`sweep`);
- on Linux eyeful is a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): an orphaned
  descendant is re-parented to eyeful rather than to init, so at exit everything below eyeful is
  still below it, and is killed and reaped (:func:`sweep_all`), even a process that dropped the
  token from its environment;
- the first SIGINT, SIGTERM or SIGHUP interrupts; later ones (one Ctrl-C on `git eyeful`
  delivers two: git forwards its own) are ignored, so they cannot cut the TERM -> KILL sequence
  short; one ignored when eyeful started (``nohup``) stays ignored (:func:`handle_interrupts`).

Processes are found through ``/proc``; where there is none, the process-group kill is all there is.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import signal
import sys
import threading
import time
from pathlib import Path

from eyeful import interrupts

TOKEN_VAR = "EYEFUL_RUN"  # noqa: S105 (a marker, not a secret)
_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")
_ROUNDS = 50  # kill rounds, for descendants that fork while they are being killed

_active = False
_owner = 0  # the process that made _prefix: a fork makes a prefix of its own
_prefix = ""
_counter = itertools.count(1)
_prefix_lock = threading.Lock()


def _own_prefix() -> str:
    """This process's token prefix: its pid and a random part, made on first use."""
    global _owner, _prefix, _counter
    with _prefix_lock:  # commands start from worker threads
        if _owner != os.getpid():
            _owner = os.getpid()
            _prefix = f"{_owner}-{os.urandom(6).hex()}"  # no uuid: 3 ms of start-up
            _counter = itertools.count(1)
        return _prefix


def become_subreaper() -> bool:
    """Make orphaned descendants this process's children (Linux); False where unsupported."""
    global _active
    _active = True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def new_token() -> str:
    """A token for one command's environment (value of :data:`TOKEN_VAR`)."""
    global _active
    _active = True
    prefix = _own_prefix()
    return f"{prefix}-{next(_counter)}"


def _parents() -> dict[int, int]:
    """Every live process's parent, by pid (zombies included)."""
    out: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(_PROC):
            if not entry.name.isdigit():
                continue
            try:
                stat = (_PROC / entry.name / "stat").read_bytes()
            except OSError:
                continue
            fields = stat.rsplit(b")", 1)[-1].split()
            if len(fields) > 1:
                out[int(entry.name)] = int(fields[1])
    return out


def _descendants(root: int, parents: dict[int, int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _carries(pid: int, token: bytes, *, prefix: bool) -> bool:
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    entry = f"{TOKEN_VAR}=".encode() + token
    return any(var.startswith(entry) if prefix else var == entry for var in environ.split(b"\0"))


def _kill_and_reap(victims: set[int], parents: dict[int, int]) -> None:
    me = os.getpid()
    for pid in victims:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    mine = [pid for pid in victims if parents.get(pid) == me]
    deadline = time.monotonic() + 2.0
    while mine and time.monotonic() < deadline:
        left = []
        for pid in mine:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                continue
            if done == 0:
                left.append(pid)
        mine = left
        if mine:
            time.sleep(0.01)


def _sweep(token: str, *, prefix: bool, below_me: bool) -> None:
    me = os.getpid()
    wanted = token.encode()
    for _ in range(_ROUNDS):
        parents = _parents()
        victims = {pid for pid in parents if pid != me and _carries(pid, wanted, prefix=prefix)}
        if below_me:
            victims |= _descendants(me, parents)
        if not victims:
            return
        _kill_and_reap(victims, parents)


def sweep(token: str) -> None:
    """Kill (and reap, when they are eyeful's) the processes a finished command left behind."""
    _sweep(token, prefix=False, below_me=False)


def sweep_all() -> None:
    """At exit: kill and reap every descendant and every process carrying one of our tokens."""
    if not _active:
        return
    _sweep(_own_prefix() + "-", prefix=True, below_me=True)
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def handle_interrupts() -> None:
    """SIGINT, SIGTERM and SIGHUP interrupt once; the ones after are ignored (main thread).

    A signal that whoever started eyeful ignored (``nohup``, a shell's background job) stays
    ignored, as Python keeps an ignored SIGINT ignored (eyeful/interrupts.py)."""
    interrupts.handle_interrupts()
