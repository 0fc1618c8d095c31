# ruff: noqa: PTH100, PTH109, PTH112, PTH117, PTH118, PTH119, PTH120, PTH123
# (os.path, not pathlib: this runs in every test's report, in any project's Python)
"""What eyeful's pytest probe (eyeful_probe_main.py, beside this file) watches while tests run: the
lines of the change a reproduction executes (:class:`Tracer`), and under eyeful's sandbox what a
run tried that the sandbox refuses (:class:`Walls`). Standard library only. PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import _thread
import ast
import contextlib
import json
import os
import re
import sys
import threading
import types
from collections.abc import Callable
from types import CodeType, FrameType
from typing import Any

from eyeful_probe_deps import EVERYTHING, Sight  # type: ignore[import-not-found]  # beside it
from eyeful_probe_names import library_roots, module_file  # type: ignore[import-not-found]

_TraceFn = Callable[[FrameType, str, Any], Any]
_HERE = frozenset({__file__, os.path.realpath(__file__)})
# inspect's functions that read a function's __code__ for its signature only.
_SIGNATURE = frozenset({"_signature_from_function", "getfullargspec", "_signature_bound_method"})


def _stdlib(name: str) -> frozenset[str]:
    """The file names a standard library module's code has: as imported, real, or frozen."""
    path = os.path.join(os.path.dirname(os.__file__), f"{name}.py")
    return frozenset({path, os.path.realpath(path), f"<frozen {name}>"})


# The standard library's traceback rendering (logging's exception, traceback.format_*), and
# runpy, which runs a file as a script.
_TRACEBACK = _stdlib("traceback")
_RUNPY = _stdlib("runpy")
# How a test's child process used a changed file it ran (a script, `python -m`): what it does.
RAN = "ran in a child process"
_PYTHON = re.compile(r"python[\d.]*")
# Programs that read a file's text and run none of it.
_READERS = frozenset(
    {
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "cat",
        "head",
        "tail",
        "wc",
        "diff",
        "cmp",
        "sed",
        "awk",
        "sort",
        "uniq",
        "cut",
        "tr",
        "file",
        "stat",
        "ls",
        "find",
        "git",
        "sha1sum",
        "sha256sum",
        "md5sum",
        "ruff",
        "flake8",
        "pyflakes",
        "pycodestyle",
        "pylint",
        "black",
        "isort",
        "mypy",
        "pyright",
        "codespell",
        "yamllint",
        "shellcheck",
    }
)
_WHOLE_TREE = frozenset({"ls", "find", "git", "rg", "ruff", "black", "pyright", "pycodestyle",
                         "pyflakes", "du", "tree"})  # fmt: skip
"""Readers that, named no path, read their working directory (a tree, a repository)."""
_RUNS_PLUGINS = frozenset({"mypy", "flake8", "pylint", "isort"})
"""Readers that may import the repository's own code as plugins (mypy's `plugins`, flake8's
local plugins, `pylint --load-plugins`): started on a directory, what they run is not seen,
and no look is counted (helper-81)."""
_FIND_RUNS = re.compile(r"\s-(?:exec|execdir|ok|okdir)\b")  # (find runs commands: no look)
# How a changed file was looked at when the tests' code took the tracer away: unseen.
EVADED = "set a tracer of its own (sys.settrace), which hid what it did with"


def _for_signature(frame: FrameType | None) -> bool:
    """Whether a library reads a ``__code__`` for what the function does, not how it is written:
    ``inspect`` for a signature (``inspect.signature``, ``getfullargspec``) or whether it is a
    coroutine function, ``unittest.mock`` choosing a mock (``mock.patch``): the caller's frame,
    or the few above it."""
    for _ in range(4):
        if frame is None:
            return False
        code = frame.f_code
        if code.co_filename.endswith(_MOCK) or code.co_name in _COROUTINE:
            return True
        if code.co_name in _SIGNATURE and code.co_filename.endswith("inspect.py"):
            return True
        frame = frame.f_back
    return False


_MOCK = (os.path.join("unittest", "mock.py"),)
_UNSEEN = frozenset({
    "os.fork", "os.forkpty", "sys.setprofile", "sys.settrace", "sys.addaudithook",
    "cpython.PyInterpreterState_New",
})  # fmt: skip
_FUNCTION = 0x1  # CO_OPTIMIZED: a function's code (a lambda's, a comprehension's)
_SCOPES = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
)  # fmt: skip
_COROUTINE = frozenset({"iscoroutinefunction", "_has_code_flag", "markcoroutinefunction"})


class Tracer:
    """Which of the given lines of the given files ran (``sys.settrace``, in every thread)."""

    def __init__(self, targets: dict[str, frozenset[int]]) -> None:
        self.targets = targets
        self.hits: dict[str, set[int]] = {path: set() for path in targets}
        self.at_import: dict[str, set[int]] = {path: set() for path in targets}
        self.codes: dict[int, tuple[CodeType, tuple[str, frozenset[int], bool] | None]] = {}
        self.why: str | None = None
        # Lines run while a test runs (its setup, call, teardown) apart from those run while the
        # modules are collected: a line run at import is no sign that a test exercised it, unless
        # the test's failure was its module's import.
        self._active = False
        # While a test module is collected (imported): the lines that ran in a function or class
        # body, not at a module's top level, by that module. A decorator the module applies, a
        # class it defines through the code under test, ran for that module's tests.
        self.module: str | None = None
        self.in_module: dict[str, dict[str, set[int]]] = {}
        # The files whose code ran while a test ran: a line of theirs run only at import (a
        # module's constant) counts for a test that used the module.
        self.entered: set[str] = set()
        # The lines the test running now ran, by file (:meth:`take_test`): which of the change's
        # lines each failing test ran, for the report's causes.
        self.test_hits: dict[str, set[int]] = {}
        # The changed files a test looked at otherwise than by running them (read as text by
        # any route, os.stat, a function's __code__, a child process naming them), and how: a
        # failure about the source's text or form is no failure of what the code does.
        self.read: set[str] = set()
        self.texts: dict[str, bytes] = {}  # changed files' text, read for a compile's source
        self.by_tests: set[str] = set()  # of those, the ones the tests' own files looked at
        self.children = False  # whether the tests started a process (its lines are not seen)
        self.edited_entered = False  # whether a function holding a changed line was entered
        self.functions: dict[str, frozenset[int]] = {}  # a changed file's edited functions
        # The changed files the changed code itself read, stat'ed or took a code object of (its
        # own source, a comment it parses): what it does rests on more than its lines run.
        self.own: set[str] = set()
        self.how: dict[str, str] = {}
        self.names = {os.path.basename(p) for p in targets}
        self.inodes: dict[tuple[int, int], str] | None = None  # the targets', on first need
        self.test_files: set[str] = set()  # the test modules collected (real paths)
        self.test_dirs: set[str] = set()  # and their directories
        self.reals: dict[str, str] = {}  # co_filename -> real path
        self.libraries = library_roots()
        self._busy = False
        self._saved: dict[str, Any] = {}
        self._on = False  # this thread traced since :meth:`resume`
        self._depth = 0  # resumes not yet paused (:meth:`begin`'s window holds one to the end)
        self.early = False  # traced from the probe's import to the run's end (:meth:`begin`)
        # The changed files whose module body ran traced (their import): one imported unseen
        # (before the tracer, by a plugin pytest loaded first) may have run changed lines.
        self.imported: set[str] = set()

    @property
    def active(self) -> bool:
        """A test runs (setup, call, teardown): ``os.stat`` and ``os.lstat`` are watched."""
        return self._active

    @active.setter
    def active(self, on: bool) -> None:
        if on and not self._active and self.why is None:
            for name in ("stat", "lstat"):
                self._saved[name] = real = getattr(os, name)
                setattr(os, name, self._stat(real, "took the size or times of"))
        elif not on and self._active:
            for name, real in self._saved.items():
                setattr(os, name, real)
            self._saved.clear()
        self._active = on

    def _stat(self, real: Callable[..., Any], how: str) -> Callable[..., Any]:
        def stat(path: object, *args: object, **kwargs: object) -> object:
            self._looked(path, how, sys._getframe(1))
            return real(path, *args, **kwargs)

        return stat

    def _looked(self, path: object, how: str, frame: FrameType | None) -> None:
        """Record ``how`` for ``path`` when it is a changed file and the repository's code (the
        first caller outside the standard library, site-packages and this probe) asked, not an
        import."""
        if self._busy or not self.watching or self.why is not None:
            return
        self._busy = True
        try:
            if isinstance(path, int) or not isinstance(path, (str, bytes, os.PathLike)):
                return
            name = os.fsdecode(path)
            # A link to it under another name (symbolic or hard): by the file's identity.
            named = os.path.basename(name) in self.names
            real = os.path.realpath(name) if named else self._same_file(name, frame)
            if named and real not in self.targets and not os.path.isabs(name):
                # A relative name that does not lead there from here may lead there from
                # elsewhere (`dir_fd`, which the event does not give): a changed file so named.
                base = os.path.basename(name)
                real = next(t for t in self.targets if os.path.basename(t) == base)
            if real is None:
                return
            # The first route is kept, but a reading (inspect.getsource stats the file first).
            current = self.how.get(real, "")
            if current.startswith(RAN):
                again = True  # what runs it is what it does, whatever else looks at it
            else:  # a reading, or a run, tells more than a stat (`is_file()` before a run)
                better = how.startswith(RAN) or how == "read"
                again = real in self.read and not (better and current != how)
            origin = self._origin(frame) if real in self.targets else None
            if origin == "itself":
                self.own.add(real)  # what the changed code does rests on that file's text
                return
            if origin == "tests":
                self.by_tests.add(real)
            if origin is not None and not again:
                self.read.add(real)
                self.how[real] = how
        except Exception:  # a watch must never break the code it watches
            return
        finally:
            self._busy = False

    @property
    def watching(self) -> bool:
        """Whether what the repository's code does to the changed files is watched: while a
        test runs, while a test module is imported (a reading at its top level), and all along
        where the tracer began at the probe's import (what a conftest.py does as it loads)."""
        return self._active or self.module is not None or self.early

    def _same_file(self, name: str, frame: FrameType | None) -> str | None:
        """The changed file ``name`` is, by device and inode, when the repository's code asks."""
        if not self._by_tests(frame):
            return None
        if self.inodes is None:
            self.inodes = {}
            for real in self.targets:
                with contextlib.suppress(OSError):
                    st = self._real_stat(real)
                    self.inodes[(st.st_dev, st.st_ino)] = real
        try:
            st = self._real_stat(name)
        except (OSError, ValueError):
            return None
        return self.inodes.get((st.st_dev, st.st_ino))

    def _real_stat(self, path: str) -> os.stat_result:
        stat: Callable[[str], os.stat_result] = self._saved.get("stat", os.stat)
        return stat(path)

    def _by_tests(self, frame: FrameType | None) -> bool:
        """Whether the tests asked, not the code under test nor an import (:meth:`_origin`)."""
        return self._origin(frame) is not None

    def _origin(self, frame: FrameType | None) -> str | None:
        """Who asked: ``tests`` (their own files), ``code`` (other code, the test handed it a
        path, say), None (the code under test, an import): the first caller outside the
        libraries (:meth:`_tests_own`), with no import under way (importlib's ``_bootstrap``),
        no file being run (``runpy``: executed, not looked at) and not for this probe (its
        tracer's ``realpath``)."""
        rendering = False
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith("<frozen importlib._bootstrap>") or name in _HERE:
                return None  # an import, or the probe's own doing
            if name in _RUNPY:
                return None  # a file run as a script: what it does, not how it is written
            rendering = rendering or name in _TRACEBACK
            if name.startswith("<doctest "):
                return "tests"  # a doctest's example (helper-80: `inspect.getsource` in a .md)
            if not (name.startswith("<") or name.startswith(self.libraries)):
                return self._tests_own(name, rendering)
            frame = frame.f_back
        return None

    def _tests_own(self, name: str, rendering: bool) -> str | None:
        """Whether a look asked by the repository's file ``name`` is the tests': a test module
        or a conftest.py, a helper in a test module's directory or below it (``tests``); never
        the changed code itself (reading its own data, logging an exception: linecache reads
        the source for the traceback); other code the test handed a path, unless it renders a
        traceback (``code``)."""
        real = self.reals.get(name)
        if real is None:
            real = self.reals[name] = os.path.realpath(name)
        if real in self.test_files or os.path.basename(real) == "conftest.py":
            return "tests"
        if real in self.targets:
            return None if rendering else "itself"
        folder = os.path.dirname(real)
        if any(folder == d or folder.startswith(d + os.sep) for d in self.test_dirs):
            return "tests"
        return None if rendering else "code"

    def collecting(self, module: str | None) -> None:
        """A test module's import begins (its real path), or ends (None)."""
        self.module = module
        if module is not None:
            self.test_files.add(module)
            self.test_dirs.add(os.path.dirname(module))

    @classmethod
    def start(cls, spec: str, ours: tuple[str, ...] = ()) -> Tracer:
        with open(spec, encoding="utf-8") as file:
            given = json.load(file)
        tracer = cls({os.path.realpath(p): frozenset(lines) for p, lines in given.items()})
        if sys.gettrace() is not None:  # a debugger or coverage: theirs, not ours
            tracer.why = "another tracer was active"
            return tracer
        # New threads are traced from the start (a session fixture's server runs the code under
        # test for later tests); this thread from :meth:`begin` (the probe's import) to the end,
        # or, in an xdist worker, while a test module is imported or a test's phase runs.
        threading.settrace(tracer._call)
        sys.addaudithook(tracer._audit)
        tracer._before({os.path.realpath(p) for p in ours})
        tracer._raw_threads()
        return tracer

    def _before(self, ours: set[str]) -> None:
        """What ran before the tracer, unseen: a thread already running (a `-p` plugin's
        worker), or a module of the repository already loaded (a `-p` plugin or what it ran;
        not ``ours``, eyeful's loader of the probe)."""
        root = os.path.realpath(os.getcwd()) + os.sep
        if threading.active_count() > 1:
            self.children = True
        for module in list(sys.modules.values()):
            name = getattr(module, "__file__", None)
            if not isinstance(name, str) or name.startswith(self.libraries):
                continue
            real = os.path.realpath(name)
            if real.startswith(root) and real not in _HERE and real not in ours:
                self.children = True
                return

    def _raw_threads(self) -> None:
        """A thread started by ``_thread.start_new_thread`` (not ``threading``'s, which are
        traced) runs untraced: started at all, the run's lines are not all seen."""
        real = _thread.start_new_thread
        tracer = self

        def start_new_thread(function: Any, args: Any, kwargs: Any = None) -> int:  # noqa: ANN401
            tracer.children = True
            return real(function, args, {} if kwargs is None else kwargs)

        _thread.start_new_thread = start_new_thread

    def begin(self) -> None:
        """Trace this thread from now (the probe's import) to the end of the run: what pytest's
        hooks, a conftest.py's and the plugins', run of the change outside a test's phases
        counts as run at import, as a test module's import does."""
        self.early = True
        self.resume()

    def resume(self) -> None:
        """Trace this thread (a test module's import, a test's phase); nested in the early
        window, one more :meth:`pause` ends it."""
        if self.why is not None:
            return
        self._depth += 1
        if self._on:
            if sys.gettrace() != self._call:
                self._evaded()
            return
        current = sys.gettrace()
        if current is None:
            sys.settrace(self._call)
        elif current != self._call:  # the code under test (or a debugger) set its own
            self.why = "another tracer was active"
            return
        self._on = True

    def pause(self) -> None:
        """Stop tracing this thread until the next :meth:`resume`. A tracer gone or another in
        its place is the doing of what ran since (a test, a test module's import): what it did
        to the changed files is hidden from here, so each counts as looked at (``EVADED``)."""
        if self.why is not None or not self._on:
            return
        self._depth = max(self._depth - 1, 0)
        if self._depth:
            if sys.gettrace() != self._call:
                self._evaded()
            return
        self._on = False
        if sys.gettrace() == self._call:
            sys.settrace(None)
            return
        self._evaded()

    def _evaded(self) -> None:
        """The tracer gone from this thread, or another in its place: what ran since is hidden,
        and each changed file counts as looked at (``EVADED``)."""
        self.why = "the tests' code removed or replaced the tracer (sys.settrace)"
        with contextlib.suppress(Exception):
            sys.settrace(None)
        for real in self.targets:
            self.read.add(real)
            self.how.setdefault(real, EVADED)

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        """While a test runs, asked by the repository's code (not by an import, nor by pytest's
        report of a traceback): an ``open`` of a changed file for reading (``open``,
        ``io.open_code``, a loader's ``get_data``, ``inspect.getsource``), a function's
        ``__code__`` where the function is defined in a changed file (not for its signature:
        ``inspect.signature``), a child process whose command line names a changed file, a
        listing of a directory holding one."""
        if event in _UNSEEN:
            # A forked child runs what it was handed untraced (multiprocessing's fork, a pool's
            # workers), as do a profile function, a subinterpreter, an audit hook (run with
            # tracing off), and whatever ran while another tracer stood in for this one, put
            # back since (helper-76): whenever it happens, its lines are not seen.
            if not self._ours(sys._getframe(1)):
                self.children = True
            return
        if self._busy or not self.watching or self.why is not None or not args:
            return
        if event == "compile":
            self._compiled(args)
            return
        if event == "open" and len(args) >= 2:
            mode = args[1]
            if not (isinstance(mode, str) and any(c in mode for c in "wax+")):
                self._looked(args[0], "read", sys._getframe(1))
        elif event == "object.__getattr__" and len(args) >= 2 and args[1] == "__code__":
            if _for_signature(sys._getframe(1)):
                return  # a signature (parameters, annotations) is what the code does: its API
            self._busy = True
            try:
                filename = getattr(getattr(args[0], "__code__", None), "co_filename", None)
            except Exception:
                filename = None
            finally:
                self._busy = False
            self._looked(filename, "looked at the code object of a function of", sys._getframe(1))
        elif event in ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"):
            self._child(event, args)
        elif event in ("os.listdir", "os.scandir"):
            self._listed(args[0], sys._getframe(1))

    @staticmethod
    def _ours(frame: FrameType | None) -> bool:
        """Whether the probe (its tracer, the sandbox's watch), ``threading`` (putting this
        tracer in a new thread) or ``doctest`` (putting back, after a doctest's examples, the
        tracer it found: helper-80) made the call that raised an event: by its module's name
        alone (nothing that could wait, in a hook that runs where a thread starts or forks)."""
        name = frame.f_globals.get("__name__") if frame is not None else None
        return isinstance(name, str) and (
            name in ("threading", "doctest") or name.startswith("eyeful_probe")
        )

    def _listed(self, directory: object, frame: FrameType | None) -> None:
        """A directory listed (``os.listdir``, ``os.scandir``: ``glob``, ``pathlib``'s
        ``iterdir``, ``pkgutil``): each changed file in it counts as looked at, for a file the
        change added or removed is what a listing tells (a count of a package's modules)."""
        if self._busy or not isinstance(directory, (str, bytes, os.PathLike, type(None))):
            return  # (a descriptor: os.scandir(fd) tells no path)
        self._busy = True
        try:
            where = os.path.realpath(os.fsdecode(directory) if directory is not None else ".")
            inside = [real for real in self.targets if os.path.dirname(real) == where]
            # The tests' own listing only: the code listing its own package (a plugin loader)
            # is what it does.
            if inside and self._origin(frame) != "tests":
                inside = []
        except Exception:  # a watch must never break the code it watches
            inside = []
        finally:
            self._busy = False
        for real in inside:
            self._looked(real, "listed the directory of", frame)

    def _child(self, event: str, args: tuple[Any, ...]) -> None:
        """A child process whose command line names a changed file: what it reads is not seen."""
        try:
            given = (
                args[1]
                if event in ("subprocess.Popen", "os.exec", "os.posix_spawn")
                else (args[0] if event == "os.system" else args[2])
            )
            words = [given] if isinstance(given, (str, bytes)) else list(given or ())
            line = " ".join(os.fsdecode(w) for w in words if isinstance(w, (str, bytes)))
        except Exception:
            return
        first = os.path.basename(line.split()[0]) if line.split() else ""
        if first not in _READERS or "python" in line:
            # What a child runs is not traced: the change's code maybe (a Python, a shell, the
            # project's script), unless it is a tool that only reads text (grep, a linter).
            self.children = True
        if not any(name in line for name in self.names):
            if first in _READERS:
                self._reads_below(first, line, args[2] if event == "subprocess.Popen" else None)
            return
        for real in self.targets:
            if os.path.basename(real) in line:
                # A Python started on the file (`python wc.py`), or the file itself, runs it:
                # what it does; a linter or a reader started on it looks at its text.
                runs = _PYTHON.fullmatch(first) is not None or first == os.path.basename(real)
                how = RAN if runs else "started a child process"
                self._looked(real, f"{how} ({line[:80]}) naming", sys._getframe(2))

    def _compiled(self, args: tuple[Any, ...]) -> None:
        """Source compiled under no file's name (``exec(open(path).read())``: its code says
        ``<string>``) that is the text of a changed file read before: the change's lines run
        where the tracer does not see them (helper-81)."""
        source, name = args[0], args[1] if len(args) > 1 else None
        if not self.read or not isinstance(source, (str, bytes)):
            return
        if isinstance(name, (str, bytes)) and not os.fsdecode(name).startswith("<"):
            return
        self._busy = True
        try:
            text = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
            for real in self.read:
                if self._text_of(real).strip() == text.strip():
                    self.children = True
                    return
        except Exception:  # a watch must never break the code it watches
            return
        finally:
            self._busy = False

    def _text_of(self, real: str) -> bytes:
        found = self.texts.get(real)
        if found is None:
            try:
                with open(real, "rb") as handle:
                    found = handle.read()
            except OSError:
                found = b""
            self.texts[real] = found
        return found

    def _reads_below(self, first: str, line: str, cwd: object) -> None:
        """A reader started on a directory (`grep -r ... pkg`, `ls pkg`), or on none where it
        reads its working directory by itself (`git ls-files`, `find`, `ruff check`): each
        changed file below it counts as looked at (helper-80)."""
        if first in _RUNS_PLUGINS or (first == "find" and _FIND_RUNS.search(line)):
            return  # (`find -exec`, `-execdir`, `-ok`: it runs commands)
        try:
            here = os.fsdecode(cwd) if isinstance(cwd, (str, bytes, os.PathLike)) else os.getcwd()
            words = [w for w in line.split()[1:] if not w.startswith("-")]
            dirs = [os.path.join(here, w) for w in words if os.path.isdir(os.path.join(here, w))]
            if not dirs and first in _WHOLE_TREE:
                dirs = [here]
            roots = [os.path.realpath(d) + os.sep for d in dirs]
        except Exception:
            return
        for real in self.targets:
            if any(real.startswith(root) for root in roots):
                self._looked(real, f"started a child process ({line[:80]}) on the directory of",
                             sys._getframe(3))  # fmt: skip

    def _target(self, code: CodeType) -> tuple[str, frozenset[int], bool] | None:
        """The changed file a code object is of, its changed lines, and whether the code holds
        one of them (an edited function: how it compiles may differ, a name made local, a
        `yield` that makes it a generator, whatever line of it runs). By identity, the code
        kept alive beside it: equal code objects of two files compare equal (helper-74)."""
        found = self.codes.get(id(code))
        if found is None:
            path = os.path.realpath(code.co_filename)
            lines = self.targets.get(path)
            edited = (
                lines is not None
                and bool(code.co_flags & _FUNCTION)  # (not a module's or a class's body)
                and code.co_firstlineno in self._edited(path, lines)
            )
            found = self.codes[id(code)] = (code, None if lines is None else (path, lines, edited))
        return found[1]

    def _edited(self, path: str, lines: frozenset[int]) -> frozenset[int]:
        """The first lines of the functions of a changed file whose source holds a changed line
        (a `def`'s first decorator, a lambda's, a comprehension's line): by their source, for
        code the compiler drops still decides what a name is (an assignment after a return)."""
        found = self.functions.get(path)
        if found is None:
            self._busy = True  # (this reading is the probe's)
            try:
                with open(path, "rb") as file:
                    tree = ast.parse(file.read())
                firsts = set()
                for node in ast.walk(tree):
                    if isinstance(node, _SCOPES):
                        first = min(
                            [node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))]
                        )
                        last = node.end_lineno or node.lineno
                        if any(first <= line <= last for line in lines):
                            firsts.add(first)
                found = frozenset(firsts)
            except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                found = frozenset(line for line in range(1, max(lines, default=0) + 1))
            finally:
                self._busy = False
            self.functions[path] = found
        return found

    def _call(self, frame: FrameType, event: str, arg: object) -> _TraceFn | None:
        target = self._target(frame.f_code)
        if target is None:
            return None
        path, lines, edited = target
        if self.active:
            self.entered.add(path)
        hits, at_import = self.hits[path], self.at_import[path]
        top_level = frame.f_code.co_name == "<module>"
        if top_level:
            self.imported.add(path)

        def seen(line: int) -> None:
            if self.active:
                hits.add(line)
                self.test_hits.setdefault(path, set()).add(line)
                return
            at_import.add(line)
            if self.module is not None and not top_level:
                found = self.in_module.setdefault(self.module, {})
                found.setdefault(path, set()).add(line)

        def local(frame: FrameType, event: str, arg: object) -> _TraceFn:
            if event == "line" and frame.f_lineno in lines:
                seen(frame.f_lineno)
            return local

        if frame.f_lineno in lines:
            seen(frame.f_lineno)
        if edited:
            # Entering a function the change edited runs the change, whichever of its lines
            # run (how it compiles may differ: a name made local).
            self.edited_entered = True
        return local

    def take_test(self) -> dict[str, list[int]]:
        """The lines run since the last call (a test's setup, call and teardown), by file."""
        taken, self.test_hits = self.test_hits, {}
        return {path: sorted(lines) for path, lines in taken.items()}

    def unseen(self) -> list[str]:
        """The changed files loaded as modules whose import was not traced (a plugin pytest
        loaded before the probe imported them): what their import ran is not known."""
        loaded = set()
        for module in list(sys.modules.values()):
            name = getattr(module, "__file__", None)
            if isinstance(name, str):
                real = os.path.realpath(name)
                if real in self.targets:
                    loaded.add(real)
        return sorted(loaded - self.imported)

    def stop(self) -> dict[str, Any]:
        self.active = False
        self.early = False
        process = sys.modules.get("multiprocessing.process")
        if process is not None and repr(getattr(process, "_process_counter", "")) != "count(1)":
            # Its spawn and forkserver start children with no audit event: a process made at
            # all may have run the change's lines unseen (a module that imports it, none).
            self.children = True
        if self.why is None:
            self._depth = min(self._depth, 1)
            self.pause()
            threading.settrace(None)  # type: ignore[arg-type,unused-ignore]
            files: dict[str, list[int]] | None = {p: sorted(h) for p, h in self.hits.items() if h}
            early = {p: sorted(h) for p, h in self.at_import.items() if h}
            by_module = {
                module: {p: sorted(h) for p, h in found.items()}
                for module, found in self.in_module.items()
            }
        else:
            files, early, by_module = None, {}, {}
        return {
            "t": "executed",
            "files": files,
            "at_import": early,
            "in_module": by_module,
            "entered": sorted(self.entered) if self.why is None else [],
            "read": sorted(self.read),
            "how": dict(sorted(self.how.items())),
            "by_tests": sorted(self.by_tests),
            "children": self.children,
            "unseen": self.unseen() if self.why is None else [],
            "edited_entered": self.edited_entered,
            "own": sorted(self.own),
            "why": self.why,
        }


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class Walls:
    """Under eyeful's sandbox: what the code tried that the sandbox refuses (a write outside the
    places it may write, a connection), seen by an audit hook whatever the code made of the
    error, so that a failure the sandbox caused is never taken for one of the code."""

    def __init__(self, writable: list[str]) -> None:
        self.writable = [os.path.realpath(p) for p in writable if p]
        self.hits: list[str] = []

    @classmethod
    def start(cls, writable: list[str]) -> Walls:
        walls = cls(writable)
        sys.addaudithook(walls._event)
        return walls

    def _outside(self, path: object, *, creates: bool) -> bool:
        """Whether the sandbox, not the path itself, refuses this: a path outside the places
        the code may write that exists (``creates``: or whose directory exists, so that it could
        be made there outside the sandbox, where the filesystem is the same, only writable). A
        path under no existing directory fails the same way outside: the code's own doing."""
        if isinstance(path, int) or not isinstance(path, (str, bytes, os.PathLike)):
            return False
        real = os.path.realpath(os.fsdecode(path))
        if real.endswith(".pyc") or real.startswith("/dev/"):
            return False  # bytecode caches (Python shrugs off a failure to write one), devices
        if any(real == root or real.startswith(root + os.sep) for root in self.writable):
            return False
        exists = os.path.lexists(real)
        return exists or (creates and os.path.isdir(os.path.dirname(real)))

    def _event(self, event: str, args: tuple[Any, ...]) -> None:
        if len(self.hits) >= 20:
            return
        try:
            if event == "open" and len(args) >= 3:
                path, mode, flags = args[0], args[1], args[2]
                writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                    isinstance(flags, int) and flags & _WRITE_FLAGS
                )
                if writes and self._outside(path, creates=True):
                    self.hits.append(f"write to {os.fsdecode(path)}")
            elif event in ("os.mkdir", "os.symlink"):
                # Made anew: refused by the sandbox only where nothing is there yet.
                path = args[1] if event == "os.symlink" and len(args) > 1 else args[0]
                if self._outside(path, creates=True) and not os.path.lexists(os.fsdecode(path)):
                    self.hits.append(f"{event} {os.fsdecode(path)}")
            elif event in ("os.remove", "os.rename", "os.rmdir"):
                if args and self._outside(args[0], creates=False):
                    self.hits.append(f"{event} {os.fsdecode(args[0])}")
            elif event in ("socket.connect", "socket.sendto", "socket.getaddrinfo"):
                self.hits.append(f"{event} {args[1] if len(args) > 1 else ''}")
        except Exception:  # an audit hook must never break the code it watches
            return


class Reach:
    """Which files under a root had code of theirs run, by test: only function starts are
    watched (``sys.monitoring`` PY_START, disabled for a code object once seen until the next
    test, on 3.12+; before, marks compiled into the code: eyeful_probe_marks.MarkedReach), so it
    is cheap.
    What runs while a test module is collected belongs to that module's tests; what runs outside
    any test or module (conftest files, plugins) to every test. The tracer is put back for each
    test where an earlier one removed it; a test that removed or replaced it is marked (``all``).
    What else a test could see (files opened or loaded by name, its fixtures', the import graph):
    eyeful_probe_deps.Sight."""

    def __init__(self, root: str) -> None:
        self.roots = tuple({os.path.join(os.path.abspath(root), ""),
                            os.path.join(os.path.realpath(root), "")})  # fmt: skip
        self.session: set[str] = set()
        self.at_import: set[tuple[str, int]] = set()
        """The functions that ran before the first test (plugins' and conftest files' imports,
        every test module's collection), by file: their first lines (``co_firstlineno``). A
        change to one's body changes what an import runs (eyeful/importtime.py)."""
        self.current: set[str] = self.session
        self.tool: int | None = None
        self.why: str | None = None
        self.started: Callable[..., object] | None = None  # the PY_START callback (3.12+)
        self.testing = False  # a test runs (its setup, call, teardown)
        self.tested = False  # a test has begun
        self.sight: Sight | None = None  # what tests could see besides the code they ran
        self.known: dict[str, str | None] = {}  # file names as :meth:`relative` gives them

    @classmethod
    def start(cls, root: str) -> Reach:
        """Python 3.12+ (before, eyeful_probe_marks.MarkedReach or coverage's data)."""
        reach = cls(root)
        if getattr(sys, "monitoring", None) is not None:
            reach._monitor()
        else:
            reach.why = "no sys.monitoring (Python before 3.12)"
        return reach

    def _monitor(self) -> None:
        """Python 3.12+: PY_START, disabled for each code object once seen (until begin)."""
        monitoring: Any = getattr(sys, "monitoring")  # noqa: B009  (3.12+, mypy runs on 3.11)
        disable = monitoring.DISABLE

        def started(code: types.CodeType, offset: int) -> object:
            self.current.add(code.co_filename)
            if not self.tested:
                self.at_import.add((code.co_filename, code.co_firstlineno))
            return disable

        for tool in (4, 3, 2):
            try:
                monitoring.use_tool_id(tool, "eyeful")
            except ValueError:
                continue
            monitoring.register_callback(tool, monitoring.events.PY_START, started)
            monitoring.set_events(tool, monitoring.events.PY_START)
            self.tool = tool
            self.started = started
            self.sight = Sight.start(self)
            return
        self.why = "no free sys.monitoring tool id"

    def begin(self) -> None:
        """A test or a module's collection starts: what runs now is its own."""
        self.current = set()
        if self.tool is not None:
            getattr(sys, "monitoring").restart_events()  # noqa: B009

    def end(self) -> list[str]:
        """The files (relative to the root, ``/``-separated) since :meth:`begin`."""
        files, self.current = self.current, self.session
        return self.relative(files)

    def begin_test(self, own: str | None = None) -> None:
        """A test starts: its own files from now (``own``: its function's, which a watch that
        sees only the repository's modules may not see run), the tracer put back if an earlier
        test removed it (its absence is that test's, seen when it ended)."""
        self.begin()
        if own:
            self.current.add(own)
        self.testing = self.tested = True
        if self.sight is not None:
            self.sight.begin_test()
        if self.tool is not None and self.started is not None:
            monitoring: Any = getattr(sys, "monitoring")  # noqa: B009
            if monitoring.get_tool(self.tool) is None:
                with contextlib.suppress(ValueError):
                    monitoring.use_tool_id(self.tool, "eyeful")
                    monitoring.register_callback(
                        self.tool, monitoring.events.PY_START, self.started
                    )
                    monitoring.set_events(self.tool, monitoring.events.PY_START)

    def end_test(self, test: str, fixtures: list[object]) -> dict[str, Any]:
        """A test ended: its line, with the files reached while each fixture it uses was set up
        (whichever test set it up), and ``all`` (why) when it did what cannot be traced."""
        untraced = self._untraced()
        if untraced:
            self.current.add(EVERYTHING + untraced)
        if self.sight is not None:
            self.sight.end_test()
        self.testing = False
        files = self.current
        if self.sight is not None:
            files = files | self.sight.of_fixtures(fixtures)
        marks = sorted(f[1:] for f in files if f.startswith(EVERYTHING))
        self.current = files
        line: dict[str, Any] = {"t": "reached", "id": test, "files": self.end()}
        if marks:
            line["all"] = "; ".join(marks)
        return line

    def _untraced(self) -> str | None:
        """Why the tracer did not see all the test ran: removed or replaced."""
        if self.tool is not None:
            monitoring: Any = getattr(sys, "monitoring")  # noqa: B009
            if monitoring.get_tool(self.tool) != "eyeful" or not (
                monitoring.get_events(self.tool) & monitoring.events.PY_START
            ):
                return "the tracer was removed or replaced"
        return None

    def collected(self, node_id: str, module: object) -> dict[str, Any]:
        """A test module was collected: what its import ran, and the files of what its namespace
        holds (a module imported before, whose code ran then), are its tests' own."""
        files = self.current
        for value in list(vars(module).values()) if module is not None else ():
            try:  # any object: its attributes may be anything, or raise
                if isinstance(value, types.ModuleType):  # read as it is: never loaded here
                    found = module_file(value)
                else:
                    found = module_file(sys.modules.get(getattr(value, "__module__", None) or ""))
            except Exception:  # noqa: S112  (an object that will not say is no file)
                continue
            if isinstance(found, str):
                files.add(found)
        return {"t": "reached", "module": node_id, "files": self.end()}

    def relative(self, files: set[str]) -> list[str]:
        if self.sight is not None:
            self.sight.seen.update(files)
        known = self.known
        out = []
        for name in files:
            if name not in known:
                known[name] = self._relative(name)
            found = known[name]
            if found is not None:
                out.append(found)
        return sorted(out)

    def _relative(self, name: str) -> str | None:
        """``name`` relative to the root, or None: a mark, ``<frozen os>``, ``<string>``, an
        installed package's, or outside. Asked once per file name (a test reaches the same
        files as the one before: pytest's own, the project's)."""
        if name.startswith((EVERYTHING, "<")):
            return None
        path = os.path.abspath(name)
        if "-packages" + os.sep in path:
            return None
        for root in self.roots:
            if path.startswith(root):
                return path[len(root) :].replace(os.sep, "/")
        return None

    def stop(self) -> dict[str, Any]:
        """The session's line: its files, and the import graph of every file reached
        (``imports``, ``parents``: eyeful_probe_deps.Sight)."""
        if self.why is not None:
            return {"t": "reached", "id": None, "files": None, "why": self.why}
        self.stop_watching()
        line: dict[str, Any] = {"t": "reached", "id": None, "files": self.relative(self.session)}
        by_file: dict[str, set[int]] = {}
        for path, first in self.at_import:
            by_file.setdefault(path, set()).add(first)
        line["at_import"] = {
            rel[0]: sorted(first) for path, first in by_file.items()
            if (rel := self.relative({path}))
        }  # fmt: skip
        return self.with_graph(line)

    def stop_watching(self) -> None:
        """The watch taken away (the session has ended)."""
        if self.tool is not None:
            monitoring: Any = getattr(sys, "monitoring")  # noqa: B009
            monitoring.set_events(self.tool, 0)
            monitoring.free_tool_id(self.tool)

    def flush(self) -> None:
        """What ran so far counted to what runs now (:attr:`current`): a tracer counts it as it
        runs; a watch that collects first (eyeful_probe_marks.MarkedReach) gives it here."""

    def with_graph(self, line: dict[str, Any]) -> dict[str, Any]:
        """The session's line with the import graph (``imports``, ``parents``), where
        :class:`eyeful_probe_deps.Sight` watched; a graph that failed: no map."""
        if self.sight is None or line.get("files") is None:
            return line
        try:
            graph, parents = self.sight.stop()
        except Exception as error:  # no graph: no map (the whole suite runs)
            return {"t": "reached", "id": None, "files": None, "why": f"imports: {error!r}"}
        for key, edges in (("imports", graph), ("parents", parents)):
            line[key] = {
                rel[0]: self.relative(found)
                for path, found in sorted(edges.items())
                if found and (rel := self.relative({path}))
            }
        return line
