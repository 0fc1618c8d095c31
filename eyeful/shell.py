"""Running one confirmed project command: shell, own process group, timeout, bounded output.

The command's whole process group is killed when it times out, when the user presses Ctrl-C, and
after it exits (so a test that leaves a server running leaves no orphan). Output is streamed: only
a bounded tail is kept (colour codes taken out: `textsafe.uncoloured`), and each line goes past an
optional scanner that collects per-test results, so a command that prints megabytes costs no
memory.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from eyeful import reaper
from eyeful.gitutil import clean_env
from eyeful.sandbox import Jail, filter_descriptor
from eyeful.textsafe import uncoloured

Status = Literal["PASSED", "FAILED", "ERROR"]
T = TypeVar("T")
R = TypeVar("R")

TAIL_CHARS = 8000  # the seed's "last 8,000 characters of output"
_TAIL_BYTES = 4 * TAIL_CHARS
_MAX_LINE = 64 * 1024
_EXIT_GRACE = 1.0  # seconds to drain output after the shell exits
_TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL


@dataclass
class CommandResult:
    status: Status
    exit_code: int | None
    duration: float
    tail: str
    reason: str | None = None
    lines: int = 0
    outcomes: dict[str, str] = field(default_factory=dict)


def _inside(entry: str, root: Path) -> bool:
    try:
        return Path(entry).resolve().is_relative_to(root)
    except (OSError, ValueError):
        return False


def _made_by_pre_commit(prefix: Path) -> bool:
    """Whether ``prefix`` is a virtualenv pre-commit made for a hook (``language: python``).

    pre-commit names them ``py_env-<version>`` and marks a finished install with
    ``.install_state_v1``/``_v2``. A virtualenv of the user's own (eyeful installed in the
    project's dev environment and run as a ``language: system`` hook) has neither.
    """
    if prefix.name.startswith("py_env-"):
        return True
    return any((prefix / f".install_state_v{n}").exists() for n in (1, 2))


def project_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The user's environment for a project command.

    Under pre-commit, eyeful runs from the hook's own virtualenv, which pre-commit puts first on
    PATH; the project's commands must find the user's tools instead, so that env comes off PATH.
    A virtualenv of the user's own that eyeful happens to be installed in stays: it is where the
    user's tools are.
    """
    env = clean_env(base)
    own = Path(sys.prefix).resolve()
    if env.get("PRE_COMMIT") and sys.prefix != sys.base_prefix and _made_by_pre_commit(own):
        parts = env.get("PATH", "").split(os.pathsep)
        env["PATH"] = os.pathsep.join(p for p in parts if p and not _inside(p, own))
        if env.get("VIRTUAL_ENV") and _inside(env["VIRTUAL_ENV"], own):
            del env["VIRTUAL_ENV"]
    return env


def repointed(env: Mapping[str, str], user_root: Path, worktree: Path) -> dict[str, str]:
    """``env`` with the PYTHONPATH entries inside the user's working tree naming the same place
    in ``worktree``.

    `export PYTHONPATH=$PWD/src` is common with a src layout. Followed as it is, every worktree
    would import the user's tree (the base's run too), and a regression would read as
    pre-existing. Relative entries already resolve in the worktree; others stay as they are.
    """
    out = dict(env)
    value = out.get("PYTHONPATH")
    if not value:
        return out
    root = user_root.resolve()
    entries = []
    for entry in value.split(os.pathsep):
        inside = None
        if Path(entry).is_absolute():
            with contextlib.suppress(ValueError, OSError, RuntimeError):
                inside = Path(entry).resolve().relative_to(root)
        if inside is None or inside.parts[:1] == (".git",):
            entries.append(entry)
        else:
            entries.append(str(worktree / inside))
    out["PYTHONPATH"] = os.pathsep.join(entries)
    return out


class Cancelled(KeyboardInterrupt):
    """The run was interrupted: running commands are killed and no new one starts."""


_live: set[int] = set()
_live_lock = threading.Lock()
_cancelled = threading.Event()


def check_cancelled() -> None:
    if _cancelled.is_set():
        raise Cancelled


def is_cancelled() -> bool:
    return _cancelled.is_set()


def track(pgid: int) -> None:
    """A started process group that :func:`cancel_all` must reach (pair with :func:`untrack`)."""
    with _live_lock:
        _live.add(pgid)
    if _cancelled.is_set():
        kill_group(pgid, signal.SIGKILL)


def untrack(pgid: int) -> None:
    with _live_lock:
        _live.discard(pgid)


def cancel_all() -> None:
    """Kill every command's process group, in every thread; later commands refuse to start."""
    _cancelled.set()
    with _live_lock:
        groups = list(_live)
    for pgid in groups:
        kill_group(pgid, signal.SIGKILL)


def parallel_map(fn: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """``fn`` over ``items`` in threads, in order. Ctrl-C cancels every command at once instead
    of waiting for the running ones to end on their own."""
    if not items:
        return []
    # Imported here: it brings `logging` (some 10 ms of start-up), and a review of a passing
    # change, like a replay, never runs anything in parallel.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(items)))) as pool:
        futures = [pool.submit(fn, item) for item in items]
        try:
            return [future.result() for future in futures]
        except KeyboardInterrupt:
            cancel_all()
            raise


def kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group, then SIGKILL whatever is left of it."""
    try:
        kill_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=_TERM_GRACE)
    finally:  # also when an interrupt lands during the wait
        kill_group(proc.pid, signal.SIGKILL)
        proc.wait()


class _Lines:
    """Splits a byte stream into lines for the scanner, never holding more than one line."""

    def __init__(self, sink: Callable[[str], None] | None) -> None:
        self.sink = sink
        self.partial = b""
        self.count = 0

    def feed(self, data: bytes) -> None:
        self.partial += data
        *complete, self.partial = self.partial.split(b"\n")
        for line in complete:
            self._emit(line)
        if len(self.partial) > _MAX_LINE:
            self._emit(self.partial)
            self.partial = b""

    def close(self) -> None:
        if self.partial:
            self._emit(self.partial)
            self.partial = b""

    def _emit(self, line: bytes) -> None:
        self.count += 1
        if self.sink is not None:
            self.sink(line[:_MAX_LINE].decode("utf-8", errors="replace").rstrip("\r"))


def run_command(
    command: str,
    cwd: Path,
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    on_line: Callable[[str], None] | None = None,
    args: Sequence[str] = (),
    jail: Jail | None = None,
    writable: Sequence[Path] = (),
    pass_fds: Sequence[int] = (),
) -> CommandResult:
    """Run ``command`` through the shell in ``cwd``; never raises for the command's own failure.

    ``args`` are the shell's positional arguments (``"$@"`` in ``command``): data, never parsed.
    ``jail``: run it in the sandbox (eyeful/sandbox.py), writing only ``cwd``, ``writable`` and
    the jail's private directories. ``pass_fds``: descriptors the command inherits.

    Raises :class:`Cancelled` when the run was interrupted (before or while it runs).
    """
    check_cancelled()
    started = time.monotonic()
    token = reaper.new_token()
    argv = ["/bin/sh", "-c", command, "eyeful", *args]
    run_env = project_env() if env is None else dict(env)
    seccomp: int | None = None
    if jail is not None:
        seccomp = filter_descriptor()
        argv = jail.argv(argv, [cwd, *writable], seccomp=seccomp)
        run_env = jail.environment(run_env)
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**run_env, reaper.TOKEN_VAR: token},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=(*pass_fds, *([] if seccomp is None else [seccomp])),
        )
    except OSError as err:
        return CommandResult("ERROR", None, 0.0, "", reason=f"could not start: {err.strerror}")
    finally:
        if seccomp is not None:
            os.close(seccomp)
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    tail = bytearray()
    lines = _Lines(on_line)
    timed_out = False
    exited_at: float | None = None
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    cancelled = False
    track(proc.pid)
    try:
        while True:
            now = time.monotonic()
            if _cancelled.is_set():
                cancelled = True
                break
            if now - started >= timeout:
                timed_out = True
                break
            if selector.select(timeout=min(0.2, timeout - (now - started))):
                data = os.read(fd, 65536)
                if not data:
                    break
                tail += data
                if len(tail) > _TAIL_BYTES:
                    del tail[: len(tail) - _TAIL_BYTES]
                lines.feed(data)
            elif proc.poll() is not None:
                # The shell is gone but something it started still holds the pipe open.
                exited_at = exited_at or now
                if now - exited_at > _EXIT_GRACE:
                    break
        lines.close()
    finally:
        selector.close()
        if proc.poll() is None:
            stop_group(proc)
        kill_group(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        untrack(proc.pid)
        reaper.sweep(token)  # what left the group (setsid) but still carries the token
    if cancelled:
        raise Cancelled
    duration = time.monotonic() - started
    text = uncoloured(bytes(tail).decode("utf-8", errors="replace"))[-TAIL_CHARS:]
    code = proc.returncode
    if timed_out:
        result = CommandResult(
            "ERROR", code, duration, text, reason=f"timed out after {timeout:g}s"
        )
    elif code == 0:
        result = CommandResult("PASSED", 0, duration, text)
    elif code in (126, 127):
        reason = f"could not start (exit {code}: command not found or not executable)"
        result = CommandResult("ERROR", code, duration, text, reason=reason)
    elif code < 0:
        reason = f"killed by {signal.Signals(-code).name}"
        result = CommandResult("FAILED", code, duration, text, reason=reason)
    else:
        result = CommandResult("FAILED", code, duration, text)
    result.lines = lines.count
    return result
