"""What results depend on in the environment project commands get, besides the tree: the
``environment`` part of a cached run's key.

- PATH, and which `python` and `python3` it resolves to;
- each of those interpreters as it runs: its version, implementation, executable and prefix, its
  ``sys.path``, and the distributions installed on it, read as the names and modification times
  of the ``*.dist-info``, ``*.egg-info``, ``*.egg-link``, ``*.egg`` and ``*.pth`` entries (and
  of their ``METADATA``/``PKG-INFO``) in each directory of ``sys.path``: installing, removing,
  upgrading or reinstalling a distribution changes them. That is what ``importlib.metadata``
  finds, at the cost of a directory listing instead of reading every distribution's metadata;
- PYTHONPATH, and the values of the variables `[tool.eyeful] env` names;
- the variables the runners eyeful reads take options or behaviour from (every ``PYTHON*`` and
  ``PYTEST_*`` but those of bytecode and buffering, ``GOFLAGS``, the locale, the time zone:
  :func:`runner_variables`), and the go
  command's own environment file (``go env -w``): a run under ``PYTEST_ADDOPTS=--ignore=...``
  is no answer for a review without it.

With ``isolate = "venv"`` the commands' interpreter is the worktree's own virtualenv, made from
the `python3` (else `python`) on the user's PATH, and what is installed in it is what setup
installed (setup's inputs are in the key already): there the key covers that interpreter's
version and what PYTHONPATH adds (it runs with ``-S``: none of the user's site-packages), not
what the user's environment has installed.

Each interpreter costs one short process, started when the key is made (:class:`EnvironmentKey`)
and read when it is first needed, so it runs alongside the review's other start-up work. It runs
in the repository's root, as a worktree's commands would find it (a version manager's shim reads
`.python-version` there), and reads nothing relative to it. One that cannot run (missing, broken,
timed out) is a stable marker in the key, never an error.

Files outside the repository are not in the key: a dependency installed from a local path and
edited in place without a reinstall, or a module PYTHONPATH names edited in place, is served from
the cache as before (the README says so: `--no-cache`, or a new version).
"""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from eyeful.isolation import base_interpreter
from eyeful.sandbox import GO_BUILD_VARIABLES
from eyeful.shell import kill_group, project_env, track, untrack

# Passed through to project commands, whatever `env` names: Python's behaviour variables
# (PYTHONOPTIMIZE strips asserts: helper-55), pytest's and its plugins' (PYTEST_TIMEOUT), go's.
RUNNER_VARIABLES = frozenset({"GOFLAGS", "GOTOOLCHAIN", "GOPATH", "GOPROXY", "GOENV", "TZ", "LANG",
                              "LANGUAGE"}) | frozenset(GO_BUILD_VARIABLES)  # fmt: skip
_RUNNER_PREFIXES = ("PYTHON", "PYTEST_", "LC_", "CGO_")
_NOT_RUNNERS = frozenset(
    {
        "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTHONUNBUFFERED", "PYTHONSTARTUP",
        "PYTHONPATH",  # (its own part of the key)
        # pytest's own, set in the process running a test (eyeful inside a test suite)
        "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT",
        "PYTEST_XDIST_TESTRUNUID",
    }
)  # fmt: skip
_TIMEOUT = 10.0  # seconds for an interpreter to say what it is
_MARK = "eyeful-interpreter "

# Runs on whatever interpreter PATH gives (Python 2 included: it still says what it is). It
# imports nothing beyond what the interpreter's start-up already did (json and hashlib would
# double its CPU): it prints what it read, `ascii()` of a dict (Python 2's `repr`), and eyeful
# makes the digest of the distributions (`_said`).
_PROBE = r"""
import os, sys
SUFFIXES = (".dist-info", ".egg-info", ".egg-link", ".egg", ".pth")
read = []
def stamp(path):
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return "%s:%s" % (getattr(st, "st_mtime_ns", st.st_mtime), st.st_size)
for entry in sys.path:
    if not entry or not os.path.isabs(entry):
        continue
    read.append("path " + entry)
    if not os.path.isdir(entry):
        read.append(stamp(entry))
        continue
    try:
        names = sorted(os.listdir(entry))
    except OSError:
        read.append("unlistable")
        continue
    for name in names:
        if name.endswith(SUFFIXES):
            full = os.path.join(entry, name)
            read.append(" ".join([name, stamp(full), stamp(os.path.join(full, "METADATA")),
                                  stamp(os.path.join(full, "PKG-INFO"))]))
impl = getattr(sys, "implementation", None)
site = sys.modules.get("site")
try:
    shown = ascii
except NameError:
    shown = repr
print("eyeful-interpreter " + shown({
    "version": sys.version,
    "implementation": getattr(impl, "name", None),
    "cache_tag": getattr(impl, "cache_tag", None),
    "executable": sys.executable,
    "prefix": sys.prefix,
    "base_prefix": getattr(sys, "base_prefix", None),
    "user_site": getattr(site, "USER_SITE", None) if getattr(site, "ENABLE_USER_SITE", 0) else None,
    "read": read,
}))
"""
_SUFFIXES = (".dist-info", ".egg-info", ".egg-link", ".egg", ".pth")


def _stamp(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "-"
    return f"{st.st_mtime_ns}:{st.st_size}"


def _read_again(read: list[str]) -> list[str]:
    """What :data:`_PROBE` reads, read again in this process from the ``sys.path`` entries it
    named (its ``path`` lines): the same list while nothing installed there changed."""
    out: list[str] = []
    for line in read:
        if not line.startswith("path "):
            continue
        entry = Path(line[len("path ") :])
        out.append(line)
        if not entry.is_dir():
            out.append(_stamp(entry))
            continue
        try:
            names = sorted(p.name for p in entry.iterdir())
        except OSError:
            out.append("unlistable")
            continue
        for name in names:
            if name.endswith(_SUFFIXES):
                full = entry / name
                stamps = [_stamp(full), _stamp(full / "METADATA"), _stamp(full / "PKG-INFO")]
                out.append(" ".join([name, *stamps]))
    return out


_ANSWERS: dict[tuple[object, ...], tuple[dict[str, object], list[str]]] = {}
"""Interpreters asked by this process (a suite's in-process reviews, an eval), by what their
answer depends on besides the files they read (:func:`_answer_key`), with those files' reading:
asked again only when a reading differs (:func:`_answered`)."""
_ANSWERS_LOCK = threading.Lock()


def _answer_key(python: str, env: Mapping[str, str], site: bool) -> tuple[object, ...] | None:
    """What an interpreter's answer depends on besides what it reads: the file run and its
    identity, a virtualenv's ``pyvenv.cfg``, the variables Python reads at start (``PYTHON*``,
    HOME for the user's site-packages). None for anything but a binary (a version manager's
    shim decides by the directory it runs in and more: always asked)."""
    try:
        real = Path(python).resolve()
        with real.open("rb") as handle:
            if handle.read(4) != b"\x7fELF":
                return None
        st = real.stat()
    except OSError:
        return None
    here = Path(python).parent
    configs = tuple(_stamp(d / "pyvenv.cfg") for d in (here, here.parent))
    variables = tuple(
        sorted((k, v) for k, v in env.items() if k.startswith("PYTHON") or k == "HOME")
    )
    return (python, str(real), st.st_ino, st.st_mtime_ns, st.st_size, site, configs, variables)


def _answered(key: tuple[object, ...] | None) -> dict[str, object] | None:
    """The answer this process got from the same interpreter, where what it read is still what
    it would read (the same installed distributions, `.pth` files and user site-packages)."""
    if key is None:
        return None
    with _ANSWERS_LOCK:
        found = _ANSWERS.get(key)
    if found is None:
        return None
    said, read = found
    user_site = said.get("user_site")
    if isinstance(user_site, str) and Path(user_site).is_dir() != (f"path {user_site}" in read):
        return None  # the user's site-packages came or went: sys.path is not what it was
    return _digested(said, read) if _read_again(read) == read else None


def _digested(said: dict[str, object], read: list[str]) -> dict[str, object]:
    digest = hashlib.sha256()
    for item in read:
        digest.update(item.encode("utf-8", "surrogateescape") + b"\0")
    return {**said, "distributions": digest.hexdigest()}


def _said(text: str, key: tuple[object, ...] | None = None) -> dict[str, object]:
    """What an interpreter said (:data:`_PROBE`), with the digest of what it read in place of
    the list: the same value the probe computed itself before it printed the list instead.
    With ``key``, remembered for the next time this process asks (:func:`_answered`)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return {"unusable": "unreadable"}
    if not isinstance(value, dict) or not isinstance(value.get("read"), list):
        return {"unusable": "unreadable"}
    read = [
        item.decode("utf-8", "surrogateescape") if isinstance(item, bytes) else str(item)
        for item in value.pop("read")  # (Python 2's str is bytes)
    ]
    if key is not None and all(isinstance(k, str) for k in value):
        with _ANSWERS_LOCK:
            _ANSWERS[key] = (value, read)
    return _digested(value, read)


class _Probe:
    """One interpreter asked what it is: started at once, read with :meth:`result`."""

    def __init__(self, python: str, env: Mapping[str, str], cwd: Path, *, site: bool) -> None:
        self.started = time.monotonic()
        self.proc: subprocess.Popen[bytes] | None = None
        self.failed: str | None = None
        self.key = _answer_key(python, env, site)
        self.known = _answered(self.key)
        if self.known is not None:
            return
        argv = [python, *([] if site else ["-S"]), "-c", _PROBE]
        try:
            self.proc = subprocess.Popen(
                argv,
                env=dict(env),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            self.failed = "could not start"
            return
        track(self.proc.pid)

    def result(self) -> dict[str, object]:
        if self.known is not None:
            return self.known
        if self.proc is None:
            return {"unusable": self.failed}
        try:
            left = max(0.1, _TIMEOUT - (time.monotonic() - self.started))
            out, _ = self.proc.communicate(timeout=left)
        except subprocess.TimeoutExpired:
            return {"unusable": "timed out"}
        finally:
            kill_group(self.proc.pid, signal.SIGKILL)  # and whatever a .pth file started
            self.proc.wait()
            untrack(self.proc.pid)
        lines = out.decode("utf-8", "replace").splitlines()
        said = [line[len(_MARK) :] for line in lines if line.startswith(_MARK)]
        if self.proc.returncode != 0 or not said:
            return {"unusable": f"exit {self.proc.returncode}"}
        return _said(said[-1], self.key)


def _pythons(path: str) -> dict[str, list[str] | None]:
    """Which `python` and `python3` ``path`` resolves to: each as found and its real path."""
    out: dict[str, list[str] | None] = {}
    for name in ("python", "python3"):
        found = shutil.which(name, path=path)
        out[name] = None if found is None else [found, os.path.realpath(found)]
    return out


def runner_variables(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``env`` the runners take options or behaviour from."""
    return {
        name: value for name, value in sorted(env.items())
        if (name in RUNNER_VARIABLES or name.startswith(_RUNNER_PREFIXES))
        and name not in _NOT_RUNNERS
    }  # fmt: skip


def go_env_file(env: Mapping[str, str]) -> Path | None:
    """The go command's environment file (``go env -w``): ``GOENV``, else ``go/env`` in the
    user's configuration directory (``XDG_CONFIG_HOME``, else ``~/.config``)."""
    named = env.get("GOENV")
    if named is not None:
        return Path(named) if named not in ("", "off") else None
    config = env.get("XDG_CONFIG_HOME") or (
        str(Path(env["HOME"]) / ".config") if env.get("HOME") else ""
    )
    return Path(config) / "go" / "env" if config else None


def go_flags(env: Mapping[str, str]) -> str:
    """The GOFLAGS the go command takes in ``env``: the variable, else the environment file's."""
    if "GOFLAGS" in env:
        return env["GOFLAGS"]
    path = go_env_file(env)
    try:
        lines = (
            [] if path is None else path.read_text(encoding="utf-8", errors="replace").splitlines()
        )
    except OSError:
        return ""
    return next((line[len("GOFLAGS=") :] for line in lines if line.startswith("GOFLAGS=")), "")


def _go_env(env: Mapping[str, str]) -> str | None:
    """The digest of the go command's environment file, where there is one."""
    path = go_env_file(env)
    try:
        return None if path is None else hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


class EnvironmentKey:
    """The environment part of a run's key, computed once: the interpreters are asked as soon as
    it is made, and read the first time :meth:`value` is called (from any thread)."""

    def __init__(self, names: Iterable[str], root: Path, *, isolate: bool = False) -> None:
        names = list(names)
        self._made_for = (frozenset(names), root, isolate)
        env = project_env()
        path = env.get("PATH", "")
        pythons = _pythons(path)
        self._plain: dict[str, object] = {
            "PATH": path,
            "python": pythons,
            "PYTHONPATH": env.get("PYTHONPATH"),
            "env": {name: env.get(name) for name in names},
            "runners": runner_variables(env),
            "go env": _go_env(env),
        }
        self._probes: dict[str, _Probe] = {}
        if isolate:
            # The worktree's virtualenv is made from this one; its site-packages are setup's.
            base = base_interpreter(env)
            if base is not None:
                self._probes["venv from"] = _Probe(base, env, root, site=False)
        else:
            seen: dict[tuple[str, str], _Probe] = {}
            for name, where in pythons.items():
                if where is None:
                    continue
                # `python` and `python3` side by side, one file: one interpreter, asked once.
                same = (str(Path(where[0]).parent), where[1])
                if same not in seen:
                    seen[same] = _Probe(where[0], env, root, site=True)
                self._probes[name] = seen[same]
        self._lock = threading.Lock()
        self._value: dict[str, object] | None = None

    def fits(self, names: Iterable[str], root: Path, *, isolate: bool = False) -> bool:
        """Whether this key is the one ``EnvironmentKey(names, root, isolate=isolate)`` would
        make now: one review's replay memory and its runs then share one look at the
        interpreters (each look is a process per interpreter; a version manager's shim costs
        about 150 ms of CPU)."""
        return self._made_for == (frozenset(names), root, isolate)

    def value(self) -> dict[str, object]:
        with self._lock:
            if self._value is None:
                results: dict[int, dict[str, object]] = {}
                interpreters = {}
                for name, probe in self._probes.items():
                    if id(probe) not in results:
                        results[id(probe)] = probe.result()
                    interpreters[name] = results[id(probe)]
                self._value = {**self._plain, "interpreters": interpreters}
            return self._value


def environment_key(
    names: Iterable[str], root: Path, *, isolate: bool = False
) -> dict[str, object]:
    """:class:`EnvironmentKey`'s value, made and read at once."""
    return EnvironmentKey(names, root, isolate=isolate).value()
