"""eyeful started as a fork of a process that has already imported it, for the suite's speed.

Most tests start eyeful to see what it decides, not how it starts; yet a fresh interpreter spends
about 0.4 s of CPU importing eyeful and its dependencies before it does anything, and the suite
starts eyeful some 300 times. So each xdist worker keeps one *zygote*: a process started from the
console script's interpreter, with the worker's environment, that imports what a run of eyeful
imports and nothing else. Every run forks it (through a short-lived monitor that waits for the
run and reports its status), and is:

- a real, separate process with its own pid, name (``git-eyeful``), arguments (``sys.argv[0]``
  the console script's path), working directory and environment (``os.environ`` replaced, so the
  processes it starts inherit it; what libgit2 read from it at pygit2's import is read again);
- given the caller's pipes as standard streams (passed over a Unix socket), and a fresh
  interpreter's signal dispositions (the zygote sets none);
- started through the console script's entry point (``sys.exit(eyeful.cli.launch.main())``), and
  ended the way an interpreter ends (streams flushed, ``atexit``, threads joined);
- given what ``git eyeful`` gives: git's exec-path first on ``PATH``, ``GIT_EXEC_PATH``, and
  an exit status of 128+N with git's message when a signal kills it; warnings that importing
  printed in a fresh start are printed too.

A run starts afresh instead when a fork could not give it what a fresh start would: an
environment that differs from the zygote's in what an interpreter or an import reads as it starts
(``_STARTUP_VARS``); a umask, resource limit, or blocked or ignored signal that changed since
the zygote started; ``--help`` (git opens the man page); a ``PATH`` on which ``git-eyeful`` is
another program or none. Tests about starting (git's dispatch, the console scripts, the hooks,
terminals, start-up time) start eyeful as a user does, and ``EYEFUL_TESTS_FORK=0`` starts every
run afresh. ``test_cli`` checks that a forked run and ``git eyeful`` give the same output.

Still different, and not relied on by any test: forks of one zygote share its hash seed (a
worker's runs iterate sets in one order, as with a fixed ``PYTHONHASHSEED``) and libgit2's
random generator (temporary file names); ``/proc/PID/cmdline`` and ``environ`` show the zygote's;
the modules were imported with the zygote's working directory (``/``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

BIN = Path(sys.executable).parent
SCRIPT = BIN / "git-eyeful"
_HEADER = struct.Struct("!I")

# Read by an interpreter as it starts, or by a module as it is imported (flags, paths, hashing,
# stdio, locale, time zone, pygit2's TLS certificates): a run whose environment sets them
# differently from the zygote's cannot be a fork of it. (What libgit2 reads from HOME and
# XDG_CONFIG_HOME at pygit2's import, a fork reads again: _read_environment_again.)
_STARTUP_VARS = (
    "PYTHON", "LANG", "LC_", "LOCPATH", "TZ", "SSL_CERT_", "OPENSSL_", "TYPER_", "PYDANTIC_",
    "LD_", "GLIBC_TUNABLES", "MALLOC_",
)  # fmt: skip


def _startup_env(env: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in env.items() if name.startswith(_STARTUP_VARS)}


def _interpreter() -> str:
    """The console script's interpreter, from its ``#!`` line (what a user's start runs)."""
    first = SCRIPT.read_bytes().split(b"\n", 1)[0]
    return os.fsdecode(first[2:].strip()) if first.startswith(b"#!") else sys.executable


# --- the zygote's side ------------------------------------------------------------------------

_warnings: list[str] = []  # what importing _WARM warned, as a fresh start would print it

# What a review, `confirm` and the CLI's other commands import, so that a fork imports nothing.
_WARM = (
    "eyeful.cli.launch", "eyeful.cli.app", "eyeful.cli.reviewcmd", "eyeful.review",
    "eyeful.config", "eyeful.gitutil", "eyeful.trust", "eyeful.report", "eyeful.sarif",
    "eyeful.agents.agent", "eyeful.agents.providers", "eyeful.agents.command",
    "eyeful.agents.openai_provider", "eyeful.gates", "eyeful.regressions",
    "eyeful.worktrees", "eyeful.runs", "eyeful.results", "eyeful.findings",
    "eyeful.agents.export", "eyeful.cli.demo", "eyeful.cli.evalcmd",
    "pygit2", "pydantic", "typer", "rich.console", "rich.progress", "jsonschema",
)  # fmt: skip


def _serve(listen_fd: int) -> None:
    """Fork a monitor per connection until the worker closes our standard input."""
    import importlib

    # As for the console script: its directory first, then the interpreter's own entries (not
    # the checkout and the working directory that `-c` and the zygote's start put first).
    sys.path[:2] = [str(SCRIPT.parent)]
    global _warnings
    with warnings.catch_warnings(record=True) as caught:  # a fresh start prints them; a fork too
        for name in _WARM:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
    _warnings = [
        warnings.formatwarning(w.message, w.category, w.filename, w.lineno) for w in caught
    ]
    import gc
    import selectors

    # What the imports made is never garbage: kept out of the collector, a fork's collections
    # (and its interpreter's last one, as it ends) do not walk it, nor copy its pages (CPython's
    # advice for servers that fork, in gc.freeze's documentation).
    gc.freeze()
    listener = socket.socket(fileno=listen_fd)

    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(0, selectors.EVENT_READ)  # the lifeline: EOF when the worker is gone
    while True:
        for key, _ in selector.select(timeout=1.0):
            if key.fd == 0:
                _reap(block=True)
                os._exit(0)
            conn, _ = listener.accept()
            if os.fork() == 0:
                selector.close()
                listener.close()
                _monitor(conn)  # never returns
            conn.close()
        _reap(block=False)


def _reap(*, block: bool) -> None:
    try:
        while os.waitpid(-1, 0 if block else os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


def _recv_request(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    while len(data) < _HEADER.size or len(data) < _HEADER.size + _HEADER.unpack_from(data)[0]:
        more = conn.recv(1 << 16)
        if not more:
            raise EOFError("the request was cut short")
        data += more
    (size,) = _HEADER.unpack_from(data)
    return json.loads(data[_HEADER.size : _HEADER.size + size]), fds


def _monitor(conn: socket.socket) -> None:
    try:
        request, fds = _recv_request(conn)
    except BaseException:
        os._exit(1)
    pid = os.fork()
    if pid == 0:
        conn.close()
        _run_eyeful(request, fds)  # never returns
    try:
        for fd in fds:
            os.close(fd)
        conn.sendall(f"{pid}\n".encode())
        _, status, usage = os.wait4(pid, 0)
        cpu = usage.ru_utime + usage.ru_stime  # the run's and every process it waited for
        conn.sendall(f"{os.waitstatus_to_exitcode(status)} {cpu}\n".encode())
    finally:
        os._exit(0)


def _run_eyeful(request: dict, fds: list[int]) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    _name_process(b"git-eyeful")
    sys.stderr.write("".join(_warnings))
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    _read_environment_again()
    sys.argv = [str(SCRIPT), *request["args"]]
    if request.get("probe"):
        main = _probe
    else:
        from eyeful.cli.launch import main
    sys.exit(main())  # uncaught, as in the console script: the interpreter ends the run


def _name_process(name: bytes) -> None:
    """The name `ps` and /proc/PID/comm show: the console script's, not the zygote's python."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(15, name, 0, 0, 0)  # PR_SET_NAME


def _read_environment_again() -> None:
    """What imports read from the environment, read again from the run's: libgit2 (initialised
    when pygit2 is imported) took where git's configuration is, and the home directory, from
    HOME and XDG_CONFIG_HOME; unset, they are guessed again from the environment as it is now."""
    import pygit2

    for level in _search_levels():
        pygit2.settings.search_path[level] = None
    pygit2.settings.homedir = None


def _search_levels() -> tuple[object, ...]:
    from pygit2.enums import ConfigLevel

    return (ConfigLevel.PROGRAMDATA, ConfigLevel.SYSTEM, ConfigLevel.XDG, ConfigLevel.GLOBAL)


def _probe() -> int:
    """For the harness's own test (test_cli): what a run's imports have read from its
    environment."""
    import pygit2

    levels = {level.name: pygit2.settings.search_path[level] for level in _search_levels()}
    print(json.dumps({"search_path": levels, "homedir": pygit2.settings.homedir}))
    return 0


# --- the tests' side ----------------------------------------------------------------------------


class _Zygote:
    """The zygote, started detached: its launcher forks it and exits, so it is no descendant of
    the worker. (An eyeful run in the worker's own process, as a few tests make, ends by killing
    every descendant of that process, as it should for a real eyeful; and the runs' CPU, which
    the zygote collects, is counted per run instead, by :data:`cpu_seconds`.)"""

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="eyeful-zygote-")
        self.path = os.path.join(self.dir, "socket")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        listener.listen(16)
        self.env = dict(os.environ)
        self.state = _process_state()
        code = (
            f"import os, sys; sys.path.insert(0, {str(Path(__file__).parent.parent)!r}); "
            "os.fork() and os._exit(0); "
            f"from tests.forkserver import _serve; _serve({listener.fileno()})"
        )
        launcher = subprocess.Popen(
            [_interpreter(), "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,  # a fork's streams are its caller's pipes
            stderr=subprocess.DEVNULL,
            pass_fds=[listener.fileno()],
            env=self.env,
            cwd="/",
        )
        launcher.wait()
        self.lifeline = launcher.stdin  # the zygote ends when this closes
        listener.close()
        self.exec_path = subprocess.run(
            ["git", "--exec-path"], capture_output=True, text=True, check=True
        ).stdout.strip()

    def connect(self) -> socket.socket:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(self.path)
        except OSError:
            conn.close()
            raise
        return conn

    def close(self) -> None:
        if self.lifeline is not None:
            self.lifeline.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_zygote: _Zygote | None = None
cpu_seconds = 0.0  # of the runs forked in this process, for the suite's profile (conftest.py)
_lock = threading.Lock()


def _get_zygote() -> _Zygote:
    global _zygote
    with _lock:
        if _zygote is None:
            _zygote = _Zygote()
        return _zygote


def _connect() -> tuple[_Zygote, socket.socket]:
    """A connection to this process's zygote; a new zygote if the old one was killed."""
    global _zygote
    zygote = _get_zygote()
    try:
        return zygote, zygote.connect()
    except OSError:
        with _lock:
            zygote.close()
            _zygote = None
        zygote = _get_zygote()
        return zygote, zygote.connect()


def close() -> None:
    """Stop this process's zygote (at the end of a session)."""
    global _zygote
    with _lock:
        if _zygote is not None:
            _zygote.close()
            _zygote = None


def _process_state() -> tuple[object, ...]:
    """What a process started now inherits from this one besides its environment: umask,
    resource limits, blocked and ignored signals. A fork inherits them as they were when the
    zygote started."""
    import resource

    umask = os.umask(0o022)
    os.umask(umask)
    limits = [
        resource.getrlimit(getattr(resource, name))
        for name in dir(resource)
        if name.startswith("RLIMIT_")
    ]
    ignored = [sig for sig in signal.valid_signals() if _ignored(sig)]
    return umask, limits, sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])), ignored


def _ignored(sig: int) -> bool:
    try:
        return signal.getsignal(sig) is signal.SIG_IGN
    except (OSError, ValueError):
        return False


def forkable(env: dict[str, str], args: list[str]) -> bool:
    """Whether a fork gives this run what a fresh `git eyeful` start would."""
    if os.environ.get("EYEFUL_TESTS_FORK", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    if args[:1] == ["--help"]:  # git opens the man page
        return False
    if shutil.which("git-eyeful", path=env.get("PATH")) != str(SCRIPT):
        return False  # git would start another eyeful, or none
    zygote = _get_zygote()
    return _startup_env(env) == _startup_env(zygote.env) and _process_state() == zygote.state


def _read_all(fd: int, into: list[bytes]) -> None:
    with open(fd, "rb", buffering=0) as stream:
        while chunk := stream.read(1 << 16):
            into.append(chunk)


def _text(data: bytes) -> str:
    encoding = subprocess._text_encoding()  # type: ignore[attr-defined]  # what text=True uses
    return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n")


def run(
    args: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    stdin: str | None,
    probe: bool = False,
) -> subprocess.CompletedProcess[str]:
    """What ``subprocess.run(["git", "eyeful", *args], text=True, capture_output=True, ...)``
    gives, from a fork of the zygote (see the module's docstring)."""
    zygote, conn = _connect()
    env = dict(env)
    env["GIT_EXEC_PATH"] = zygote.exec_path
    env["PATH"] = zygote.exec_path + os.pathsep + env.get("PATH", "")
    payload = json.dumps({"args": args, "cwd": str(cwd), "env": env, "probe": probe}).encode()
    in_read, in_write = os.pipe() if stdin is not None else (os.open(os.devnull, os.O_RDONLY), -1)
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    try:
        request = [_HEADER.pack(len(payload)) + payload]
        socket.send_fds(conn, request, [in_read, out_write, err_write])
    finally:
        for fd in (in_read, out_write, err_write):
            os.close(fd)
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [
        threading.Thread(target=_read_all, args=(out_read, out), daemon=True),
        threading.Thread(target=_read_all, args=(err_read, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    conn.settimeout(timeout)
    replies = conn.makefile("rb")
    try:
        pid = int(replies.readline())
        if stdin is not None:
            threading.Thread(target=_feed, args=(in_write, stdin.encode()), daemon=True).start()
        conn.settimeout(max(0.0, deadline - time.monotonic()))
        try:
            code, cpu = replies.readline().split()
        except TimeoutError:
            os.kill(pid, signal.SIGKILL)
            raise subprocess.TimeoutExpired(["git", "eyeful", *args], timeout) from None
        for reader in readers:
            reader.join(max(0.0, deadline - time.monotonic()))
        if any(reader.is_alive() for reader in readers):
            raise subprocess.TimeoutExpired(["git", "eyeful", *args], timeout)
    finally:
        replies.close()
        conn.close()
    global cpu_seconds
    cpu_seconds += float(cpu)
    status, errors = int(code), b"".join(err)
    if status < 0:  # git reports a command killed by a signal so
        errors += f"error: git-eyeful died of signal {-status}\n".encode()
        status = 128 - status
    return subprocess.CompletedProcess(
        ["git", "eyeful", *args], status, _text(b"".join(out)), _text(errors)
    )


def _feed(fd: int, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError), open(fd, "wb") as stream:
        stream.write(data)
