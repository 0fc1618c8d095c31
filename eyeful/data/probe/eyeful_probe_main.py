# ruff: noqa: PTH100, PTH103, PTH109, PTH112, PTH113, PTH114, PTH118, PTH119, PTH120, PTH123, PTH206
# (os.path, not pathlib: this runs in every test's report, in any project's Python)
"""eyeful's pytest probe: what each test did, written as it happens. PYTEST_DONT_REWRITE

Loaded into a project's own pytest run without touching its command line: eyeful puts this
file's directory first on PYTHONPATH and adds ``eyeful_probe`` (which hands pytest this module:
eyeful_probe.py) to PYTEST_PLUGINS (see
``eyeful.pytest_records.plugin_env``). With EYEFUL_PROBE_DIR unset it does nothing at all. With it
set, each pytest process (``main``; with pytest-xdist the ``controller`` and each ``worker``) writes
``<pid>-<role>.jsonl`` in that directory: one JSON object a line, each written to the file
(``os.write``, no buffer in between) as it happens, except that a passing call's line waits for
its test's teardown: a run that is killed leaves the record of every test that had ended, and
the setup line of the one it was in. ``eyeful.pytest_records.read_pytest`` reads it.

It must never change which tests run or how they end: every hook catches every ``Exception``
and writes an ``internal_error`` line instead (KeyboardInterrupt and SystemExit go on as
usual). It uses only the standard library and pytest's own hook decorator. Verified with
pytest 7.0.0 (the oldest supported) and 9.2, pytest-xdist 3.5 and 3.8, on Python 3.11. An older
pytest gets no recorder: its main process writes ``<pid>-unsupported.txt`` (pytest's version)
and the run is read from its text.

Lines (every one has ``"t"``, its type); ids are pytest's node ids; paths are absolute:

- ``start``: ``role``, ``pid``, ``worker`` (xdist's worker id or null), ``pytest``,
  ``python``, ``rootdir``, ``args`` (the invocation's arguments), ``paths`` (main and controller
  only: the positions in ``args`` of the words pytest's own parser took as paths, with every
  option it knew; null when that cannot be told), ``time`` (epoch seconds).
- ``collected``: ``ids``, in run order, in chunks of at most 500 (main and workers only).
- ``kinds``: ``kinds``: {id: item class name} for each collected test that is not a plain test
  function (``DoctestItem``, a plugin's item), in chunks of at most 500.
- ``collect_skip``: ``id`` (a module that skipped itself while collected, as with
  ``pytest.importorskip`` at module level), ``reason``.
- ``collect_error``: ``id`` (the collector: a module's id), ``failure``, ``longrepr`` (its
  text, bounded).
- ``phase``: ``id``, ``when`` (setup/call/teardown), ``outcome`` (passed/failed/skipped, or
  xfailed/xpassed/xpass_strict), ``dur``, and only when there is one: ``reason`` (a skip's or an
  xfail's), ``captured`` ({"stdout": chars, "stderr": chars, "log": chars}), ``failure``.
  Written by main and by the workers, never by the controller (it receives copies).
- ``crash``: ``id``, ``message``: the controller's report that a worker died running ``id``.
- ``internal_error``: ``hook``, ``error``: the probe failed in that hook (the run went on).
- ``pytest_internal_error``: ``error``: pytest's own INTERNALERROR.
- ``finish``: ``exitstatus``, ``counts`` (tests by outcome, as this process saw them),
  ``collected`` (session.testscollected), ``failed`` (session.testsfailed).
- ``end``: written last, by pytest_unconfigure (after pytest's session ended).
- ``executed``: with EYEFUL_PROBE_TRACE naming a JSON file of {path: [line, ...]}: ``files``,
  the lines of those that ran in this process while a test ran ({path: [line, ...]}, only those
  with any), ``at_import`` those that ran while modules were collected, or null ``files`` with
  ``why`` when it could not trace (another tracer, a debugger or coverage, was on).
- ``ran``: with EYEFUL_PROBE_TRACE, after each test: ``id``, ``files``: those of the lines that
  ran while that test ran ({path: [line, ...]}, empty when none); none once it could not trace.
- ``reached``: with EYEFUL_PROBE_MAP naming the repository's root: the files under it whose
  code ran, or that were opened, compiled, executed or imported by name (relative, ``/``), by
  test (``id``; with those its fixtures reached, whichever test set them up; ``all``: why its
  run cannot be traced, a child process, or from 3.12 the monitoring tool taken away), by test
  module while it was collected (``module``), and at the finish the rest of the session's (``id``
  null; ``files`` null with ``why`` when it could not watch; ``rootdir`` and ``started``, where
  pytest's ids and its arguments' paths start, relative to the root; ``imports``, the import
  graph of the repository's files ({file: [file, ...]}: eyeful_probe_deps.py), and
  ``parents``, the packages each file's imports only pass through): the map of what each test
  could see (eyeful/affected.py). Where coverage.py measures the run on Python before 3.12, the
  tests' and modules' lines come at the finish, from coverage's data (eyeful_probe_cov.py).
- ``hidden``: ``ids``: the tests whose function raised a failure and whose call was reported
  passed (a hook of the project made it pass: a quarantine), at most 200; main and workers.
- ``left_out``: ``paths``: the directories and Python files collection left out by the word of
  a conftest (``collect_ignore``), a hook or a virtualenv's ``pyvenv.cfg`` (not ``--ignore`` or
  ``norecursedirs``), at most 200; main and workers.
- ``imported``: ``files``: the ``__file__`` of each imported module outside the standard
  library and site-/dist-packages (bounded), ``total``.

A ``failure`` is ``{"chain": [{"type", "message"}...], "crash_message", "raised_in":
{"file", "line"}, "frames": [{"file", "line", "function"}...], "frames_total"}``: ``chain`` is
the exception that ended the phase, then its ``__cause__`` (else its ``__context__`` unless
suppressed), and so on; ``crash_message`` is pytest's ``reprcrash.message`` (the exception line
with pytest's assertion explanation); ``frames`` is the traceback of the first exception,
outermost first, without pytest's and pluggy's own leading frames, its last 50 kept;
``raised_in`` is its innermost frame.

Where the record is (EYEFUL_PROBE_DIR, and EYEFUL_PROBE_FD: the main process's record file,
opened by eyeful and inherited as a descriptor) and what to trace are taken out of
``os.environ`` as this module is imported, before any conftest.py or test module: the code under
test does not find them there, and a pytest it starts (a subprocess, which inherits neither
variable nor descriptor) records nothing; one run in process (``pytest.main``) finds the
recorder active and stays off too. xdist's workers get the variables from their controller
(``workerinput``) and write files of their own. The main process writes its record through the
inherited descriptor (a pytest that did not inherit it, started by tox, say, writes by the
path), so under eyeful's sandbox the directory is read-only for the tests (and there, the run
stays in one process: a worker could not write). The last line a process writes is ``end``,
written by pytest_unconfigure: a ``finish`` that no ``end`` follows is no session's end. What
remains possible: code that goes looking for the open descriptor (``/proc/self/fd``) or the
recorder object in this process can still write through them.
"""

from __future__ import annotations

import ast
import contextlib
import fnmatch
import json
import os
import re
import sys
import time
from collections.abc import Generator
from types import FunctionType, TracebackType
from typing import TYPE_CHECKING, Any

import pytest
from eyeful_probe_names import library_roots, module_file  # type: ignore[import-not-found]

if TYPE_CHECKING:  # the tracer, the map and the sandbox's watch: imported where a run asks
    from eyeful_probe_watch import Reach, Tracer, Walls  # type: ignore[import-not-found]

_DIR_VAR = "EYEFUL_PROBE_DIR"
_FD_VAR = "EYEFUL_PROBE_FD"
_TRACE_VAR = "EYEFUL_PROBE_TRACE"
_SANDBOX_VAR = "EYEFUL_PROBE_SANDBOX"
_MAP_VAR = "EYEFUL_PROBE_MAP"
_LOADER_VAR = "EYEFUL_PROBE_LOADER"
_IMPORTS_VAR = "EYEFUL_PROBE_IMPORTS"
_HERE = os.path.dirname(os.path.abspath(__file__))
_OWN_FILE = os.path.realpath(__file__)
_WORKER_KEY = "eyeful_probe"  # xdist's workerinput: what the controller hands its workers


def _take_environment() -> dict[str, str]:
    """The probe's variables, taken out of ``os.environ`` when this module is imported (through
    PYTEST_PLUGINS: before any conftest.py or test module): the code under test never finds
    where the record is, and a pytest started by a test records nothing."""
    taken: dict[str, str] = {}
    for name in (_DIR_VAR, _FD_VAR, _TRACE_VAR, _SANDBOX_VAR, _MAP_VAR, _LOADER_VAR, _IMPORTS_VAR):
        value = os.environ.pop(name, None)
        if value:
            taken[name] = value
    return taken


_ENV = _take_environment()
if any(_ENV.get(v) for v in (_MAP_VAR, _TRACE_VAR, _SANDBOX_VAR)) or os.environ.get(
    "PYTEST_XDIST_WORKER"  # (a worker learns what it is asked from its controller, later)
):
    # The tracer, the map and the sandbox's watch, imported now as any plugin is (before the
    # initial conftest files run, before a coverage tool measures): only where a run asks.
    import eyeful_probe_cov  # type: ignore[import-not-found]  # noqa: F401  # beside it
if _ENV.get(_MAP_VAR) and not _ENV.get(_TRACE_VAR):
    from eyeful_probe_deps import Early  # type: ignore[import-not-found]  # beside it

    Early.start(_ENV[_MAP_VAR])  # before the initial conftest files run
_early_tracer: Tracer | None = None
if _ENV.get(_TRACE_VAR):
    from eyeful_probe_watch import Tracer  # beside it

    # Traced from now (before the initial conftest files run) to the end: what a conftest.py's
    # imports and hooks, and the plugins', run of the change is seen, in or between the tests.
    _early_tracer = Tracer.start(_ENV[_TRACE_VAR], ours=(_ENV.get(_LOADER_VAR, ""),))
    _early_tracer.begin()
_active: list[object] = []  # the recorder of this process, once registered

MESSAGE_CHARS = 2000  # of each exception's str()
CRASH_CHARS = 4000  # of pytest's reprcrash message
LONGREPR_CHARS = 8000  # of a collection error's text (its end kept)
REASON_CHARS = 1000
MAX_CHAIN = 10
MAX_FRAMES = 50
MAX_LEFT_OUT = 200
MAX_IMPORTED = 5000
CHUNK = 500  # ids per "collected" line

_encode = json.encoder.encode_basestring_ascii
# What a test function raises that is no failure of it: a skip, an expected failure, an exit.
_NOT_FAILURES = (pytest.skip.Exception, pytest.xfail.Exception, pytest.exit.Exception)
_PHASES = ("setup", "call", "teardown")
_FUNCTION = pytest.Function


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Register a recorder for this run when eyeful asked for one and the run is not nested."""
    try:
        workerinput = getattr(config, "workerinput", None)
        if workerinput is not None:
            # A worker of a recorded run: its controller handed it the probe's variables.
            given = workerinput.get(_WORKER_KEY)
            env = dict(given) if isinstance(given, dict) else {}
        else:
            env = dict(_ENV)
        directory = env.get(_DIR_VAR)
        if not directory or _active:
            _drop_early(workerinput)
            return  # not asked, or a pytest run inside the recorded one (pytest.main in a test)
        directory = os.path.abspath(directory)
        if workerinput is None and hasattr(config.option, "cacheclear"):
            # pytest's cache in eyeful's reused worktree is what runs of other trees left:
            # `--lf`, `--sw`, `--nf` would pick tests by it. Every run starts from none (this
            # runs before the cache provider's pytest_configure reads it).
            config.option.cacheclear = True
        record = _inherited(env.get(_FD_VAR)) if workerinput is None else None
        if getattr(pytest, "version_tuple", (0,)) < (7, 0):  # version_tuple came with 7.0
            if workerinput is None:
                _say_unsupported(directory, record)
            _drop_early(workerinput)
            return
        confined = env.get(_SANDBOX_VAR)
        if confined and hasattr(config.option, "dist"):
            # In the sandbox the record's directory is read-only: only this process writes,
            # through the descriptor eyeful opened. xdist's workers could not: they run here.
            config.option.dist = "no"
            config.option.tx = []
        probe = _Probe(config, directory, record, env)
        if workerinput is None and _distributing(config):
            probe.role = "controller"
        probe.open()  # before the sandbox's watch starts, and before any test module is imported
        _active.append(probe)
        config.pluginmanager.register(probe, "eyeful_probe_recorder")
        if getattr(pytest, "version_tuple", (0,)) < (8, 0):  # no pytest_collect_directory
            config.pluginmanager.register(_IgnoreWatch(probe), "eyeful_probe_ignored")
        trace = env.get(_TRACE_VAR)
        if trace:
            from eyeful_probe_watch import Tracer  # beside it

            probe.tracer = _early_tracer if workerinput is None else None
            probe.tracer = probe.tracer or Tracer.start(trace)
            config.pluginmanager.register(_Phases(probe.tracer), "eyeful_probe_phases")
        elif env.get(_MAP_VAR):
            from eyeful_probe_cov import watch  # beside it
            from eyeful_probe_deps import Imports  # beside it

            Imports.cache_file = env.get(_IMPORTS_VAR)
            probe.reach = watch(config, env[_MAP_VAR])
            if getattr(probe.reach, "sight", None) is not None:
                config.pluginmanager.register(_Fixtures(probe.reach), "eyeful_probe_fixtures")
        if probe.tracer is not None or probe.reach is not None:
            config.pluginmanager.register(_Tests(probe), "eyeful_probe_tests")
        if probe.loader is not None:
            config.pluginmanager.register(_Loader(probe.loader), "eyeful_probe_loader")
        if confined:
            from eyeful_probe_watch import Walls  # beside it

            probe.walls = Walls.start(confined.split(os.pathsep))
        # One module that fails to import must not hide the rest of the suite: its collection
        # error is recorded, and every other module still runs.
        config.option.continue_on_collection_errors = True
    except Exception:  # never stop the run
        return


def _tests_made_none(
    collector: pytest.Collector, config: pytest.Config, made: list[object] | None = None
) -> int:
    """Names of a collected module that name tests pytest drops without a word: a name holding
    None (a decorator of the code that forgot its ``return``) or an object that is no function
    but wraps the test (a decorator's class without ``__call__``), a function whose
    ``__test__`` is False, a class that inherits a False ``__test__`` or is abstract by what it
    inherits (a base class of the code's); a module whose ``__test__`` is False (it may be the
    code's flag); a test function of which the module's collection (``made``: its nodes) made no
    item (a ``pytest_pycollect_makeitem`` that returned none); and under ``--doctest-modules``,
    a function whose docstring's examples a decorator without ``functools.wraps`` hid."""
    try:
        module = getattr(collector, "_obj", None)
        namespace = getattr(module, "__dict__", None) or {}
        here = getattr(module, "__name__", None)
        functions = [str(p) for p in config.getini("python_functions")]
        classes = [str(p) for p in config.getini("python_classes")]
        if type(collector).__name__ == "DoctestModule":  # (its module's tests: as a Module)
            return sum(1 for value in list(namespace.values()) if _hid_examples(value, here))
        count = int(namespace.get("__test__", True) is False)  # `__test__ = code.FLAG`, say
        source = _Source(getattr(module, "__file__", None))
        test_function, test_class = _Names(functions), _Names(classes)
        items = None if made is None else {getattr(n, "originalname", None) or getattr(
            n, "name", None) for n in made}  # fmt: skip
        for name, value in list(namespace.items()):
            if type(value) is _PLAIN_FUNCTION and "__test__" not in value.__dict__:
                # a test function as pytest collects it (the most names, at once), unless the
                # collection made nothing of it
                count += (items is not None and name not in items and test_function.match(name)
                          and not _a_fixture(value))  # fmt: skip
                continue
            if isinstance(value, type):
                if test_class.match(name) and _dropped_class(value, here, source):
                    count += 1
                else:
                    count += _methods_made_none(value, test_class, functions, source)
            elif value is None and test_class.match(name):
                count += source.defines(name, "class")  # a class decorator forgot its `return`
            else:
                count += test_function.match(name) and _dropped_function(name, value, source)
        return count
    except Exception:  # never stop the run
        return 0


_PLAIN_FUNCTION = FunctionType


def _made(outcome: object) -> list[object] | None:
    """The nodes a collection made (``outcome``: the hook wrapper's), where it passed."""
    try:
        report = outcome.get_result()  # type: ignore[attr-defined]
    except BaseException:
        return None
    return list(report.result) if report.passed else None


def _a_fixture(value: object) -> bool:
    """A fixture's function (pytest collects none; before pytest 8.4 it is a plain function)."""
    return any(hasattr(value, mark) for mark in ("_pytestfixturefunction", "_fixture_function"))


class _Names:
    """pytest's ``python_functions`` or ``python_classes``: prefixes, or glob patterns."""

    def __init__(self, patterns: list[str]) -> None:
        self.prefixes = tuple(p for p in patterns if not any(c in p for c in "*?["))
        self.globs = [p for p in patterns if any(c in p for c in "*?[")]

    def match(self, name: str) -> bool:
        return name.startswith(self.prefixes) or any(
            fnmatch.fnmatchcase(name, p) for p in self.globs
        )


class _Source:
    """A module's source text, read once and only if asked."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.text: str | None = None
        self.tree: ast.Module | None = None

    def read(self) -> str | None:
        if self.text is None:
            try:
                with open(self.path or "", encoding="utf-8", errors="replace") as handle:
                    self.text = handle.read()
            except OSError:
                return None
        return self.text

    def defines(self, name: str, kind: str = "def|class") -> bool:
        """Whether the source has a ``def`` or ``class`` statement (``kind``) of ``name``
        (True when it cannot be read)."""
        text = self.read()
        if text is None:
            return True
        found = re.search(rf"^\s*(?:async\s+)?(?:{kind})\s+{re.escape(name)}\b", text, re.M)
        return found is not None

    def turns_off(self, name: str) -> bool:
        """Whether a class statement of ``name`` writes ``__test__ = False`` in its own body
        (a helper named as tests; not a value the code gives it: helper-81). True when the
        source cannot be read or parsed."""
        text = self.read()
        if text is None:
            return True
        if self.tree is None:
            try:
                self.tree = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return True
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ClassDef) and node.name == name:
                for statement in node.body:
                    if (
                        isinstance(statement, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == "__test__"
                                for t in statement.targets)
                        and isinstance(statement.value, ast.Constant)
                        and statement.value.value is False
                    ):  # fmt: skip
                        return True
        return False


def _dropped_function(name: str, value: object, source: _Source) -> bool:
    """A test function's name holding None where the module defines it (a decorator that
    forgot its ``return``; not `test_dir = None`, nor an optional import's fallback), a function
    whose ``__test__`` is False (a helper's `@disabled`), or an object that is no function but
    holds the test function (its ``__wrapped__``, or an attribute): pytest skips each without a
    word."""
    if value is None:
        return source.defines(name)
    if isinstance(value, type):
        return False
    if callable(value):
        return getattr(value, "__test__", True) is False
    held = [getattr(value, "__wrapped__", None), *getattr(value, "__dict__", {}).values()]
    if any(getattr(v, "__name__", None) == name and callable(v) for v in held):
        return True
    return source.defines(name, "def")  # (a tuple, a property: `return f,`, helper-81)


def _methods_made_none(
    value: type, test_class: _Names, functions: list[str], source: _Source, depth: int = 0,
) -> int:  # fmt: skip
    """The test methods of a test class in the module (one named as pytest's tests, or a
    ``unittest.TestCase``, whose tests pytest asks for by ``test...`` names, whatever its
    ``testMethodPrefix``), its own or from its bases (a mixin of another module: that module's
    source says what it defines), that pytest drops without a word: a method a decorator made
    None or no function (a tuple, a property; a ``classmethod`` of None), and the same in the
    test classes nested in it (helper-79, helper-81)."""
    unittest = sys.modules.get("unittest")
    case = getattr(unittest, "TestCase", None)
    if isinstance(case, type) and issubclass(value, case):
        names = _Names(["test"])
    elif test_class.match(value.__name__) and value.__dict__.get("__test__", True) is not False:
        names = _Names(functions)
    else:
        return 0
    count = 0
    for name in dir(value):
        if name.startswith("__") or not (names.match(name) or test_class.match(name)):
            continue
        owner = next((c for c in value.__mro__ if name in c.__dict__), None)
        if owner is None or owner is object:
            continue
        raw = owner.__dict__[name]
        if isinstance(raw, (classmethod, staticmethod)):
            raw = raw.__func__
        if isinstance(raw, type):
            if depth < 3 and test_class.match(name) and raw is not value:
                count += _methods_made_none(raw, test_class, functions,
                                            _source_of(raw, source), depth + 1)  # fmt: skip
            continue
        if (
            raw is None
            and test_class.match(name)
            and _source_of(owner, source).defines(name, "class")
        ):
            count += 1  # a nested class a decorator made None
            continue
        if names.match(name):
            count += _dropped_function(name, raw, _source_of(owner, source))
    return count


def _source_of(cls: type, source: _Source) -> _Source:
    """The source of the module defining ``cls`` (``source``, the collected module's, when it
    is that one)."""
    module = sys.modules.get(getattr(cls, "__module__", "") or "")
    path = getattr(module, "__file__", None)
    if path is None or path == source.path:
        return source
    return _SOURCES.setdefault(path, _Source(path))


_SOURCES: dict[str, _Source] = {}


def _dropped_class(value: object, here: str | None, source: _Source) -> bool:
    """A test class that inherits a False ``__test__`` (a decorated base), or sets its own from
    a value (``__test__ = code.FLAG``: helper-79) where its own body does not write
    ``__test__ = False`` (helper-81), a constructor from another module (pytest collects no
    class with one; a ``unittest.TestCase``'s is unittest's, and pytest runs those), or
    abstract methods from another module. (A class that writes ``__test__ = False`` itself,
    defines its own constructor (pytest warns of it) or declares its own abstract methods is
    the usual way to name a helper `Test...`: not counted.)"""
    if not isinstance(value, type) or getattr(value, "__module__", None) != here:
        return False
    if getattr(value, "__test__", True) is False and (
        "__test__" not in value.__dict__ or not source.turns_off(value.__name__)
    ):
        return True
    unittest = sys.modules.get("unittest")
    case = getattr(unittest, "TestCase", None)
    if isinstance(case, type) and issubclass(value, case):
        return False  # (pytest's unittest plugin runs these: their constructor is unittest's)
    for method in ("__init__", "__new__"):  # pytest collects no class with a constructor
        maker = next((c for c in value.__mro__ if method in c.__dict__), object)
        if maker is not object and getattr(maker, "__module__", None) not in (here, "builtins"):
            return True  # one it inherits from the code (its own: pytest's warning says it)
    abstract = getattr(value, "__abstractmethods__", None)
    if not abstract:
        return False
    for name in abstract:
        owner = next((c for c in value.__mro__ if name in c.__dict__), None)
        if owner is not None and getattr(owner, "__module__", None) == here:
            return False
    return True


def _hid_examples(value: object, here: str | None) -> bool:
    """A name of this module whose object holds no example while the function of this module it
    wraps has one (a decorator without ``functools.wraps``, this module's or another's: the
    function in its closure or, for a decorator's class, in an attribute): doctest no longer
    sees it."""
    if not callable(value) or isinstance(value, type):
        return False
    if ">>>" in (getattr(value, "__doc__", None) or "") or hasattr(value, "__wrapped__"):
        return False
    held: list[object] = []
    for cell in getattr(value, "__closure__", None) or ():
        try:
            held.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    held += list(getattr(value, "__dict__", {}).values())
    return any(
        callable(inner)
        and getattr(inner, "__module__", None) == here
        and ">>>" in (getattr(inner, "__doc__", None) or "")
        for inner in held
    )


def _not_collected(modules: set[str], config: pytest.Config) -> int:
    """How many files named as test modules (``python_files``) sit beside the modules pytest
    collected without being collected themselves: a conftest's ``collect_ignore`` or
    ``pytest_ignore_collect`` left them out, which the code under test may decide."""
    try:
        patterns = [str(p) for p in config.getini("python_files")]
        # What the command line leaves out (`--ignore`, `--ignore-glob`, in addopts too) is
        # left out alike on every tree: not the code's doing.
        ignored = {os.path.abspath(str(p)) for p in config.getoption("ignore") or ()}
        globs = [os.path.abspath(str(p)) for p in config.getoption("ignore_glob") or ()]
        skipped = [str(p) for p in config.getini("norecursedirs")]
    except Exception:  # never stop the run
        return 0
    count = 0
    dirs = {os.path.dirname(m) for m in modules}
    # and the directories right below them that pytest collected nothing from (a subdirectory
    # a conftest's `collect_ignore` names), but those it never enters
    below = {
        os.path.join(d, entry.name)
        for d in dirs
        for entry in _entries(d)
        if entry.is_dir() and not entry.name.startswith((".", "__"))
        and not any(fnmatch.fnmatch(entry.name, p) for p in skipped)
    }  # fmt: skip
    for directory in dirs | below:
        names = [entry.name for entry in _entries(directory)]
        for name in names:
            if name.endswith(".py") and any(fnmatch.fnmatchcase(name, p) for p in patterns):
                path = os.path.join(directory, name)
                left = path in ignored or any(fnmatch.fnmatch(path, g) for g in globs)
                count += path not in modules and not left
    return count


_NEVER_MODULES = frozenset({"conftest.py", "setup.py", "__main__.py"})  # no test module's


class _IgnoreWatch:
    """pytest 7 (no ``pytest_collect_directory``): its ignore hook watched, each path it left out
    noted (a wrapper of a hook called for every path: pytest 8 needs none)."""

    def __init__(self, probe: _Probe) -> None:
        self.probe = probe

    @pytest.hookimpl(hookwrapper=True)
    def pytest_ignore_collect(self, collection_path: object) -> Generator[None, Any, None]:
        outcome = yield
        try:
            if outcome.get_result() is True:
                self.probe.note_left_out(collection_path)
        except Exception:  # never stop the run (a hook's own error is pytest's to report)
            return


class _RaiseWatch:
    """The test function's own end, inside every other wrapper of its call: one that raised a
    failure and is reported passed had a hook of the project pass it (a quarantine). Registered
    only where the project implements an outcome hook (nothing else can pass a failure), once
    collection loaded every conftest: a wrapper per test costs a suite of fast tests 1%."""

    def __init__(self, probe: _Probe) -> None:
        self.probe = probe

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> Generator[None, Any, None]:
        # Each attempt for itself: a rerun that passed (pytest-rerunfailures) hid nothing.
        self.probe.raised.discard(pyfuncitem.nodeid)
        outcome = yield
        try:
            excinfo = outcome.excinfo
            if excinfo is not None and not isinstance(excinfo[1], _NOT_FAILURES):
                self.probe.raised.add(pyfuncitem.nodeid)
        except Exception:  # never stop the run (a hook's own error is pytest's to report)
            return

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        # A setup or teardown that failed as pytest reported it, before the project's wrappers
        # of the report (outside this one) had their say: one they report passed was hidden.
        outcome = yield
        try:
            if call.when == "call":
                return
            key = f"{item.nodeid}\0{call.when}"  # (this attempt's: a rerun's is its own)
            self.probe.raised.discard(key)
            if outcome.get_result().failed:
                self.probe.raised.add(key)
        except Exception:
            return


class _GivenOut:
    """What the command line (``--ignore``, ``--ignore-glob``, in addopts too) and
    ``norecursedirs`` leave out of collection: alike on every tree, not the code's doing."""

    def __init__(self, config: pytest.Config) -> None:
        self.paths = {os.path.abspath(str(p)) for p in config.getoption("ignore") or ()}
        self.globs = [os.path.abspath(str(p)) for p in config.getoption("ignore_glob") or ()]
        self.dirs = [str(p) for p in config.getini("norecursedirs")]

    def covers(self, path: str) -> bool:
        if path in self.paths or any(fnmatch.fnmatch(path, g) for g in self.globs):
            return True
        name = os.path.basename(path)
        return os.path.isdir(path) and any(
            fnmatch.fnmatch(name, p) or fnmatch.fnmatch(path, p) for p in self.dirs
        )


def _entries(directory: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as found:
            return list(found)
    except OSError:
        return []


def _inifile(config: pytest.Config) -> str | None:
    """The configuration file pytest read (absolute), or None."""
    found = getattr(config, "inipath", None) or getattr(config, "inifile", None)
    return os.path.abspath(str(found)) if found else None


class _Phases:
    """A test's setup, call and teardown, traced (registered only with a tracer: a suite run
    pays nothing for it). Outermost: other plugins' wrappers of a phase, a conftest's too, run
    inside it."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, None]:
        yield from self._traced()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, None]:
        yield from self._traced()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_teardown(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, Any, None]:
        yield from self._traced()

    def _traced(self) -> Generator[None, Any, None]:
        # What runs in a phase is the test's; what runs between them (pytest's reporting, a
        # conftest's report hooks) is traced too, as run outside any test.
        self.tracer.resume()
        self.tracer.active = True
        try:
            yield
        finally:
            self.tracer.active = False
            self.tracer.pause()


class _Fixtures:
    """Each fixture's setup watched apart (registered only with the map: eyeful/affected.py):
    what it reaches belongs to every test that uses it, not only to the one that set it up."""

    def __init__(self, reach: Reach) -> None:
        self.reach = reach

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(
        self,
        fixturedef: Any,  # noqa: ANN401  (pytest's FixtureDef)
        request: object,
    ) -> Generator[None, Any, None]:
        sight = self.reach.sight
        try:
            saved = sight.fixture_begin(fixturedef)
        except Exception:  # never stop the run
            saved = None
        try:
            yield
        finally:
            if saved is not None:
                with contextlib.suppress(Exception):
                    sight.fixture_end(fixturedef, saved)


class _Loader:
    """The loader eyeful wrote into the worktree's root for this run (eyeful/probeload.py) is not
    the project's: never collected. (Registered only with one: a run's every path asks.)"""

    def __init__(self, path: str) -> None:
        self.path = path

    def pytest_ignore_collect(self, collection_path: object) -> bool | None:
        return True if str(collection_path) == self.path else None


class _Tests:
    """Each test's run, wrapped (registered only with a tracer or the map: a suite run pays
    nothing for it, pluggy's wrapper of every test included)."""

    def __init__(self, probe: _Probe) -> None:
        self.probe = probe

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, None]:
        probe = self.probe
        tracer, reach = probe.tracer, probe.reach
        if tracer is not None:
            tracer.take_test()  # what ran between tests is no test's
        if reach is not None:
            try:
                reach.begin_test(_own_file(item))
            except Exception as error:
                probe._internal_error("pytest_runtest_protocol", error)
        try:
            yield
        finally:
            if tracer is not None:
                with contextlib.suppress(Exception):
                    ran = tracer.take_test()
                    if tracer.why is None:
                        probe._line({"t": "ran", "id": item.nodeid, "files": ran})
            if reach is not None:
                with contextlib.suppress(Exception):
                    probe._line(reach.end_test(item.nodeid, _fixtures_of(item)))


def _fixtures_of(item: pytest.Item) -> list[object]:
    """The fixture definitions a test uses (each name's, overridden ones included)."""
    defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", None) or {}
    return [d for name in getattr(item, "fixturenames", ()) for d in defs.get(name, ())]


def _own_file(item: pytest.Item) -> str | None:
    """The file of a test's function (a decorator's wrapper undone), else of the test item."""
    function = getattr(item, "function", None)
    for _ in range(5):
        wrapped = getattr(function, "__wrapped__", None)
        if wrapped is None:
            break
        function = wrapped
    name = getattr(getattr(function, "__code__", None), "co_filename", None)
    if isinstance(name, str):
        return name
    path = getattr(item, "path", None)
    return str(path) if path is not None else None


def _plugin_files(config: pytest.Config) -> list[str]:
    """The files of the modules registered with pytest: conftest files, ``pytest_plugins``."""
    files = []
    for plugin in config.pluginmanager.get_plugins():
        name = getattr(plugin, "__file__", None)
        if isinstance(name, str):
            files.append(name)
    return files


# pytest's hooks that run a test, write its report or status, set it up, or run the whole loop:
# what an implementation of them makes of a failure (a pass, a skip) the report says.
_OUTCOME_HOOKS = (
    "pytest_runtest_makereport", "pytest_runtest_call", "pytest_pyfunc_call",
    "pytest_runtest_protocol", "pytest_runtest_setup", "pytest_report_teststatus",
    "pytest_runtest_logreport", "pytest_runtestloop",
)  # fmt: skip


def _outcome_hook_files(config: pytest.Config) -> list[str]:
    """The files (real paths) whose functions implement an outcome hook in this run, outside
    the standard library, the installed distributions and this probe: a conftest, a plugin the
    project loads (`pytest_plugins`, `-p`), an object registered by a hook, under any name
    (``specname``)."""
    found: set[str] = set()
    libraries = library_roots()
    for name in _OUTCOME_HOOKS:
        caller = getattr(config.hook, name, None)
        for impl in caller.get_hookimpls() if caller is not None else []:
            function = impl.function
            for _ in range(20):  # through decorators that keep what they wrap
                wrapped = getattr(function, "__wrapped__", None)
                if wrapped is None:
                    break
                function = wrapped
            code = getattr(function, "__code__", None)
            if code is None or code.co_filename.startswith(libraries):
                continue  # (pytest's own: most of them, and no path to resolve)
            path = os.path.realpath(code.co_filename)
            if path != _OWN_FILE and not path.startswith(libraries):
                found.add(path)
    return sorted(found)


def _collection_words(config: pytest.Config) -> list[str]:
    """What decides which paths and tests a session collects: its paths, and the options that
    leave some out (``--ignore``, ``--ignore-glob``, ``--deselect``, ``-k``, ``-m``)."""
    option = config.option
    words = [str(arg) for arg in getattr(config, "args", ())]
    for name in ("ignore", "ignore_glob", "deselect"):
        words += [f"{name}={value}" for value in getattr(option, name, None) or ()]
    for name in ("keyword", "markexpr"):
        words.append(f"{name}={getattr(option, name, '')}")
    return words


def _distributing(config: pytest.Config) -> bool:
    """Whether xdist will make this process its controller (its own test, run before its
    pytest_configure registers the session that spawns the workers)."""
    option = config.option
    if getattr(option, "collectonly", False):
        return False
    return getattr(option, "dist", "no") != "no" and bool(getattr(option, "tx", None))


def _inherited(value: str | None) -> int | None:
    """The record file eyeful opened for this command (EYEFUL_PROBE_FD, ``fd:device:inode``),
    when this process has it: one started by Python's subprocess (tox, nox) does not."""
    try:
        fd, device, inode = (int(part) for part in (value or "").split(":"))
        info = os.fstat(fd)
    except (ValueError, OSError):
        return None
    return fd if (info.st_dev, info.st_ino) == (device, inode) else None


def _open_record(name: str, directory: str) -> int:
    """A record file of this process's own, by its path (a worker; a pytest that did not
    inherit eyeful's descriptor): only outside the sandbox, where the directory is writable."""
    os.makedirs(directory, exist_ok=True)
    return os.open(os.path.join(directory, name), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)


def _drop_early(workerinput: object) -> None:
    """The tracer begun at the probe's import, stopped where this run records nothing."""
    if workerinput is None and _early_tracer is not None and not _active:
        _early_tracer.stop()


def _say_unsupported(directory: str, record: int | None) -> None:
    """Tell eyeful that this pytest is older than the probe supports: it reads the run's text."""
    version = str(getattr(pytest, "__version__", "unknown"))
    if record is not None:
        os.write(record, (json.dumps({"t": "unsupported", "pytest": version}) + "\n").encode())
        return
    fd = _open_record(f"{os.getpid()}-unsupported.txt", directory)
    try:
        os.write(fd, version.encode("ascii", "replace"))
    finally:
        os.close(fd)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more chars]"


def _cut_end(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"[{len(text) - limit} chars before] ..." + text[-limit:]


def _type_name(exc: BaseException) -> str:
    cls = type(exc)
    module = getattr(cls, "__module__", None)
    name = getattr(cls, "__qualname__", None) or cls.__name__
    return name if module in (None, "builtins", "__main__") else f"{module}.{name}"


def _str(exc: BaseException) -> str:
    try:
        return _cut(str(exc), MESSAGE_CHARS)
    except Exception as error:  # a __str__ that fails
        return f"<str() failed: {type(error).__name__}>"


def _chain(exc: BaseException | None) -> list[dict[str, str]]:
    links: list[dict[str, str]] = []
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen and len(links) < MAX_CHAIN:
        seen.add(id(exc))
        links.append(_doctest_link(exc) or {"type": _type_name(exc), "message": _str(exc)})
        if exc.__cause__ is not None:
            exc = exc.__cause__
        elif exc.__context__ is not None and not exc.__suppress_context__:
            exc = exc.__context__
        else:
            exc = None
    return links


def _doctest_link(exc: BaseException) -> dict[str, str] | None:
    """A doctest's failure in its own words: the example, what it expected and what it got (the
    exception's own text names only the DocTest); an example that raised, by its exception;
    of several (`--doctest-continue-on-failure`: MultipleDoctestFailures), the first."""
    several = getattr(exc, "failures", None)
    if isinstance(several, list) and several and hasattr(several[0], "example"):
        exc = several[0]
    example = getattr(exc, "example", None)
    source = getattr(example, "source", None)
    if not isinstance(source, str) or not hasattr(exc, "test"):
        return None
    got, info = getattr(exc, "got", None), getattr(exc, "exc_info", None)
    if isinstance(got, str):  # doctest.DocTestFailure
        want = str(getattr(example, "want", ""))
        said = f"Got: {got.strip()}" if got.strip() else "Got nothing"  # (doctest's words)
        message = f"Failed example: {source.strip()}\nExpected: {want.strip()}\n{said}"
        return {"type": _type_name(exc), "message": _cut(message, CRASH_CHARS)}
    if isinstance(info, tuple) and len(info) == 3 and isinstance(info[1], BaseException):
        raised = info[1]  # doctest.UnexpectedException
        message = f"{_str(raised)} (raised by the doctest example: {source.strip()})"
        return {"type": _type_name(raised), "message": _cut(message, CRASH_CHARS)}
    return None


def _internal_dirs() -> tuple[str, ...]:
    dirs = []
    for name in ("_pytest", "pluggy"):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            dirs.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return tuple(dirs)


def _abspath(path: str) -> str:
    # "<frozen importlib._bootstrap>", "<string>", "<doctest x[0]>" are no files
    return path if path.startswith("<") else os.path.abspath(path)


def _frames(
    tb: TracebackType | None, internal: tuple[str, ...]
) -> tuple[list[dict[str, Any]], int]:
    frames: list[dict[str, Any]] = []
    while tb is not None:
        code = tb.tb_frame.f_code
        frames.append(
            {"file": _abspath(code.co_filename), "line": tb.tb_lineno, "function": code.co_name}
        )
        tb = tb.tb_next
    start = 0  # pytest's and pluggy's frames that called the test
    while start < len(frames) - 1 and frames[start]["file"].startswith(internal):
        start += 1
    frames = frames[start:]
    return frames[-MAX_FRAMES:], len(frames)


def _failure(
    exc: BaseException | None, longrepr: object, internal: tuple[str, ...]
) -> dict[str, Any]:
    failure: dict[str, Any] = {"chain": _chain(exc)}
    crash = getattr(longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    failure["crash_message"] = _cut(message, CRASH_CHARS) if isinstance(message, str) else None
    if exc is not None and exc.__traceback__ is not None:
        frames, total = _frames(exc.__traceback__, internal)
        failure["frames"] = frames
        failure["frames_total"] = total
        last = frames[-1] if frames else None
        failure["raised_in"] = {"file": last["file"], "line": last["line"]} if last else None
    else:
        failure["frames"] = []
        failure["frames_total"] = 0
        failure["raised_in"] = None
    return failure


_CAPTURED = re.compile(r"\n-+ Captured (?:stdout|stderr|log) ")


def _longrepr_text(longrepr: object) -> str:
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, reason)
        return str(longrepr[2])
    try:
        return str(longrepr)
    except Exception as error:
        return f"<str() failed: {type(error).__name__}>"


def _outside_python() -> list[str]:
    """The files of the imported modules that are neither the standard library's nor an
    installed distribution's: the project's own, wherever they were imported from."""
    prefixes = library_roots()
    files: set[str] = set()
    real_dirs: dict[str, str] = {}
    for module in list(sys.modules.values()):
        path = module_file(module)  # never loads a module loaded lazily
        if path is None or path.startswith(prefixes):
            continue
        if os.path.dirname(os.path.abspath(path)) == _HERE:  # the probe's own modules
            continue
        path = os.path.abspath(path)
        if path.startswith(prefixes) or _realpath(path, real_dirs).startswith(prefixes):
            continue
        parts = path.split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts:
            continue
        files.add(path)
    return sorted(files)


def _shadowed(roots: list[str]) -> dict[str, str]:
    """The project's own top-level packages and modules (in a root, or its ``src``) imported
    from a file outside every root: an installed copy, which may not be this tree's code.
    Name -> the file it was imported from."""
    real_roots = tuple(os.path.realpath(r) + os.sep for r in roots if r)
    # The names the roots hold (each directory listed once): a package, a module.
    own: set[str] = set()
    for root in real_roots:
        for base in (root, os.path.join(root, "src")):
            for entry in _entries(base):
                if entry.name.endswith(".py"):
                    own.add(entry.name[:-3])
                elif entry.is_dir() and os.path.isfile(os.path.join(entry.path, "__init__.py")):
                    own.add(entry.name)
    out: dict[str, str] = {}
    stdlib = getattr(sys, "stdlib_module_names", ())
    for name in own - set(stdlib):
        module = sys.modules.get(name)
        path = module_file(module) if module is not None else None  # never loads a lazy one
        if path is not None and not os.path.realpath(path).startswith(real_roots):
            out[name] = os.path.abspath(path)
    return out


def _realpath(path: str, real_dirs: dict[str, str]) -> str:
    """``os.path.realpath(path)``, each directory resolved once: a session imports hundreds of
    the project's modules from a few dozen directories."""
    directory, base = os.path.split(path)
    real = real_dirs.get(directory)
    if real is None:
        real = real_dirs[directory] = os.path.realpath(directory)
    full = os.path.join(real, base)
    return os.path.realpath(full) if os.path.islink(full) else full


_MARK = "eyeful-probe:path"  # no option's prefix, no argument file's ``@``


def _parsed_paths(parser: Any, args: list[str]) -> list[str]:  # noqa: ANN401 (pytest.Parser)
    """The paths pytest's parser reads in ``args``; none where it refuses them (the marker
    where an option wants a number, say)."""
    try:
        return list(getattr(parser.parse(args), "file_or_dir", None) or ())
    except (Exception, SystemExit):
        return []


def _path_words(config: pytest.Config) -> list[int] | None:
    """The positions of the words of the command line that pytest took as paths: each word that
    is among its parsed paths (``file_or_dir``), put in its place as a marker, comes out among
    the paths again when pytest's own parser, with every option of pytest's, its plugins' and
    the project's ``pytest_addoption`` in it, reads it as one (never as an option's value).
    None when the paths are not all words of the command line (an ``@file`` of arguments)."""
    parser = getattr(config, "_parser", None)
    if parser is None:
        return None
    args = [str(arg) for arg in config.invocation_params.args]
    kept = getattr(parser, "optparser", None)  # older pytest builds it anew at each parse
    try:
        paths = list(getattr(parser.parse(args), "file_or_dir", None) or ())
        if not paths:
            return []  # (no word was a path: none to mark)
        found = _marked_at_once(parser, args, paths)
        if found is None:  # one parse per word: the slow way (a thousand ids, a second)
            found = [
                at
                for at, word in enumerate(args)
                if word in paths
                and _MARK in _parsed_paths(parser, [*args[:at], _MARK, *args[at + 1 :]])
            ]
        return found if len(found) == len(paths) else None
    except (Exception, SystemExit):
        return None
    finally:
        if kept is not None:
            parser.optparser = kept


def _marked_at_once(parser: Any, args: list[str], paths: list[str]) -> list[int] | None:  # noqa: ANN401
    """:func:`_path_words` in one parse: every word that is among the paths put in its place as
    a marker of its own. A word the parser reads as an option's value is read so whatever it
    holds (a marker starts with no prefix character), unless the option checks it (a number, a
    choice): then the parse fails, or comes out short, and None says to parse word by word."""
    marked = [f"{_MARK}:{at}" if word in paths else word for at, word in enumerate(args)]
    found = []
    for path in _parsed_paths(parser, marked):
        mark, _, at = path.rpartition(":")
        if mark != _MARK or not at.isdigit():
            return None
        found.append(int(at))
    return found if len(found) == len(paths) else None


class _Probe:
    """The recorder of one pytest process."""

    def __init__(
        self, config: pytest.Config, directory: str, record: int | None, env: dict[str, str]
    ) -> None:
        self.config = config
        self.directory = directory
        self.record = record
        self.env = env
        self.role = "worker" if hasattr(config, "workerinput") else "main"
        self.fd: int | None = None
        self.pending: list[str] = []  # a passing call's line, until the test's teardown
        # A failed phase's line, until pytest_exception_interact brings its exception.
        self.held: tuple[str, str, dict[str, Any], object] | None = None
        self.controller = False
        self.counts: dict[str, int] = {}
        self.passed = 0  # calls that passed on the fast path, added to counts at the finish
        self.deselected = 0  # tests a hook or -k/-m took out of the run
        self.uncollected = 0  # classes or functions pytest would not collect (its warning)
        self.given = -1  # the items collection gave the hooks that may take some out
        self.dropped = 0  # items those hooks took out without saying (no pytest_deselected)
        self.modules: set[str] = set()  # the files of the modules pytest collected
        self.ignored = 0  # test modules beside those that pytest did not collect
        self.left_out: list[str] = []  # what collection left out by a conftest's or hook's word
        self.entered: set[str] = set()  # the directories pytest 8's collection entered
        self.files: set[str] = set()  # the files it made a collector of
        self.given_out: _GivenOut | None = None
        self.made_none = 0  # names of tests in collected modules that hold None
        # The paths pytest decided to collect and the options that take paths or tests out,
        # before the project's pytest_configure ran (this is made in a tryfirst one): a conftest
        # that rewrites them picks the tests by itself (`config.option.ignore += [...]`).
        self.args_given = _collection_words(config)
        self.args = 0  # 1 when collection started from other paths than those
        self.raised: set[str] = set()  # tests whose function raised a failure
        self.hidden: list[str] = []  # of those, the ones reported passed: a hook passed them
        self.hook_files: list[str] | None = None  # outcome hooks' files, once collection ended
        self.internal = _internal_dirs()
        self.tracer: Tracer | None = None
        self.walls: Walls | None = None
        self.reach: Reach | None = None
        self.loader = env.get(_LOADER_VAR) or None

    # writing

    def _write(self, text: str) -> None:
        """Write a line, after those held back."""
        pending = self.pending
        if pending:
            pending.append(text)
            text = "".join(pending)
            pending.clear()
        data = text.encode("ascii")
        while data and self.fd is not None:
            data = data[os.write(self.fd, data) :]

    def _line(self, obj: dict[str, Any]) -> None:
        self._write(json.dumps(obj, ensure_ascii=True, default=repr, separators=(",", ":")) + "\n")

    def _internal_error(self, hook: str, error: BaseException) -> None:
        with contextlib.suppress(Exception):
            self._line({"t": "internal_error", "hook": hook, "error": _cut(repr(error), 1000)})

    def open(self) -> None:
        """The record: eyeful's file, inherited, else one of this process's own (named by the
        role pytest_configure knows; the start line says whether it became xdist's controller)."""
        if self.record is not None:
            self.fd = self.record
            # Not for the processes the tests start (`os.system` keeps inheritable descriptors).
            os.set_inheritable(self.fd, False)
        else:
            self.fd = _open_record(f"{os.getpid()}-{self.role}.jsonl", self.directory)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:  # noqa: ANN401 (xdist's WorkerController)
        """xdist: a worker gets the probe's variables from its controller, not the environment
        (where the tests would find them). Outside eyeful's sandbox only (see pytest_configure)."""
        try:
            given = {k: v for k, v in self.env.items() if k != _FD_VAR}
            node.workerinput[_WORKER_KEY] = given
        except Exception as error:
            self._internal_error("pytest_configure_node", error)

    # hooks

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        try:
            if self.config.pluginmanager.has_plugin("dsession"):
                self.role = "controller"
                self.controller = True
            elif self.role == "controller":
                self.role = "main"  # xdist did not distribute after all
            workerinput = getattr(self.config, "workerinput", None)
            rootdir = getattr(self.config, "rootpath", None) or getattr(self.config, "rootdir", "")
            self._line(
                {
                    "t": "start",
                    "role": self.role,
                    "pid": os.getpid(),
                    "worker": workerinput.get("workerid") if workerinput else None,
                    "pytest": getattr(sys.modules.get("pytest"), "__version__", None),
                    "python": sys.version.split()[0],
                    "rootdir": os.path.abspath(str(rootdir)),
                    "inifile": _inifile(self.config),
                    "args": [str(arg) for arg in self.config.invocation_params.args],
                    "paths": None if workerinput else _path_words(self.config),
                    "time": time.time(),
                }
            )
        except Exception as error:
            self._internal_error("pytest_sessionstart", error)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += len(items)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.given = len(items)

    def pytest_warning_recorded(self, warning_message: Any, when: str) -> None:  # noqa: ANN401
        category = getattr(warning_message, "category", None)
        if when == "collect" and getattr(category, "__name__", "") == "PytestCollectionWarning":
            self.uncollected += 1

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        try:
            if self.controller:
                return
            if self.given >= 0:
                self.dropped = max(0, self.given - len(session.items) - self.deselected)
            self.ignored = _not_collected(self.modules, self.config)
            self.args = int(_collection_words(self.config) != self.args_given)
            self.hook_files = _outcome_hook_files(self.config)
            if self.hook_files:
                self.config.pluginmanager.register(_RaiseWatch(self), "eyeful_probe_raised")
            ids = [item.nodeid for item in session.items]
            for start in range(0, len(ids), CHUNK):
                self._line({"t": "collected", "ids": ids[start : start + CHUNK]})
            if not ids:
                self._line({"t": "collected", "ids": []})
            # Tests that are not test functions (a doctest, a plugin's item): their file may be
            # the code under test itself.
            kinds = {i.nodeid: type(i).__name__ for i in session.items if type(i) is not _FUNCTION}
            names = list(kinds)
            for start in range(0, len(names), CHUNK):
                chunk = names[start : start + CHUNK]
                self._line({"t": "kinds", "kinds": {name: kinds[name] for name in chunk}})
        except Exception as error:
            self._internal_error("pytest_collection_finish", error)

    @pytest.hookimpl(tryfirst=True, optionalhook=True)  # (pytest 8's hook)
    def pytest_collect_directory(self, path: object) -> None:
        """The directories collection entered: what it did not enter beside them, it left out
        (:meth:`_left_out`)."""
        self.entered.add(str(path))

    def note_left_out(self, collection_path: object) -> None:
        """One path pytest's ignore hook left out (pytest 7: :class:`_IgnoreWatch`)."""
        path = os.path.abspath(str(collection_path))
        if path == self.loader or os.path.basename(path) == "__pycache__":
            return  # (eyeful's loader; pytest's own rule for bytecode)
        if len(self.left_out) >= MAX_LEFT_OUT or not (path.endswith(".py") or os.path.isdir(path)):
            return
        if self.given_out is None:
            self.given_out = _GivenOut(self.config)
        if not self.given_out.covers(path):
            self.left_out.append(path)

    def _left_out(self) -> list[str]:
        """What collection left out by the word of a conftest (``collect_ignore``), a hook or a
        virtualenv's ``pyvenv.cfg``, which the code or the change may decide; not what the
        command line (``--ignore``) or ``norecursedirs`` leave out, alike on every tree. Read
        where pytest 8 entered: a directory beside the ones it entered, under the run's start
        paths, that it did not enter; a test module there (any module under
        ``--doctest-modules``) it made no collector of. (pytest 7: its ignore hook, watched.)"""
        if not self.entered:
            return self.left_out
        given = _GivenOut(self.config)
        starts = [os.path.abspath(str(arg).split("::")[0]) for arg in self.config.args]
        patterns = [str(p) for p in self.config.getini("python_files")]
        doctests = bool(getattr(self.config.option, "doctestmodules", False))
        found: list[str] = []
        for directory in sorted(self.entered):
            if not any(directory == s or directory.startswith(s + os.sep) for s in starts):
                continue  # (above the start paths: what lies beside them was never asked for)
            for entry in _entries(directory):
                if entry.name == "__pycache__" or entry.path == self.loader:
                    continue
                if entry.is_dir():
                    left = entry.path not in self.entered
                elif entry.name.endswith(".py") and entry.path not in self.files:
                    left = entry.name not in _NEVER_MODULES and (
                        doctests or any(fnmatch.fnmatch(entry.name, p) for p in patterns)
                    )
                else:
                    left = False
                if left and not given.covers(entry.path):
                    found.append(entry.path)
                if len(found) >= MAX_LEFT_OUT:
                    return found
        return found

    @pytest.hookimpl(hookwrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, Any, None]:
        module = isinstance(collector, pytest.Module)
        reach = self.reach if module else None
        if reach is not None:
            reach.begin()
        tracer = self.tracer if isinstance(collector, pytest.File) else None
        if tracer is not None:
            if module:
                tracer.collecting(os.path.realpath(str(collector.path)))
            tracer.resume()  # the module's import: the lines it runs there
        outcome = yield
        if isinstance(collector, pytest.File):
            self.files.add(str(collector.path))
        if module:
            self.modules.add(str(collector.path))
            self.made_none += _tests_made_none(collector, self.config, _made(outcome))
        if tracer is not None:
            tracer.pause()
            tracer.collecting(None)
        if reach is not None:
            self._reached_by_module(reach, collector)
        try:
            if self.controller:
                return
            report = outcome.get_result()
            if report.skipped and module:  # a module that skipped itself (importorskip)
                reason = _longrepr_text(report.longrepr)
                self._line({"t": "collect_skip", "id": report.nodeid, "reason": reason[:2000]})
            if not report.failed:
                return
            call = getattr(report, "call", None)
            excinfo = getattr(call, "excinfo", None)
            exc = getattr(excinfo, "value", None)
            # pytest wraps an ImportError or SyntaxError in its CollectError, `from` the real one
            if exc is not None and type(exc).__name__ == "CollectError" and exc.__cause__:
                exc = exc.__cause__
            self._line(
                {
                    "t": "collect_error",
                    "id": report.nodeid,
                    "failure": _failure(exc, report.longrepr, self.internal),
                    "longrepr": _cut_end(_longrepr_text(report.longrepr), LONGREPR_CHARS),
                }
            )
        except Exception as error:
            self._internal_error("pytest_make_collect_report", error)

    def _reached_by_module(self, reach: Reach, collector: pytest.Collector) -> None:
        try:
            self._line(reach.collected(collector.nodeid, getattr(collector, "_obj", None)))
        except Exception as error:
            reach.end()
            self._internal_error("pytest_make_collect_report", error)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        try:
            if self.held is not None:
                self._write_held(None)
            when = report.when
            # (a call's key is its id, a setup's or teardown's the id and the phase: _RaiseWatch)
            key = report.nodeid if when == "call" else f"{report.nodeid}\0{when}"
            hidden = self.raised and report.passed and key in self.raised
            if hidden and report.nodeid not in self.hidden:  # (once: call and teardown alike)
                self.hidden.append(report.nodeid)
            if (
                report.outcome == "passed"
                and not report.sections
                and "wasxfail" not in report.__dict__
                and not self.controller
            ):
                # The common case, without building an object. A passing call's line waits
                # for the teardown's; a setup's is written at once, so that a test that never
                # ends still shows it began.
                line = (
                    f'{{"t":"phase","id":{_encode(report.nodeid)},"when":"{when}",'
                    f'"outcome":"passed","dur":{report.duration:.6f}}}\n'
                )
                if when == "call":
                    self.pending.append(line)
                    self.passed += 1
                    return
                if when == "setup" or when == "teardown":
                    self._write(line)
                    return
            if self.controller:
                if when not in _PHASES:  # xdist's report of a worker that died running it
                    self._line(
                        {
                            "t": "crash",
                            "id": report.nodeid,
                            "message": _cut(_longrepr_text(report.longrepr), REASON_CHARS),
                        }
                    )
                    self.counts["crashed"] = self.counts.get("crashed", 0) + 1
                else:
                    self._count(report, when)
                return
            self._phase(report, when)
        except Exception as error:
            self._internal_error("pytest_runtest_logreport", error)

    @pytest.hookimpl(tryfirst=True)
    def pytest_exception_interact(
        self, node: object, call: pytest.CallInfo[object], report: object
    ) -> None:
        # pytest calls this right after pytest_runtest_logreport for a phase that raised (not a
        # skip, not an xfail): the failure's line waits for it, for the exception itself.
        try:
            held = self.held
            if (
                held is not None
                and isinstance(report, pytest.TestReport)
                and (held[0], held[1]) == (report.nodeid, report.when)
            ):
                excinfo = call.excinfo
                self._write_held(excinfo.value if excinfo is not None else None)
        except Exception as error:
            self._internal_error("pytest_exception_interact", error)

    def _write_held(self, exc: BaseException | None) -> None:
        held, self.held = self.held, None
        if held is not None:
            line, longrepr = held[2], held[3]
            line["failure"] = _failure(exc, longrepr, self.internal)
            # pytest's own rendering, for a person to read: never what a verdict rests on.
            # pytest's own rendering, without the captured output it appends (kept apart).
            rendered = _CAPTURED.split(_longrepr_text(longrepr), 1)[0]
            line["longrepr"] = _cut_end(rendered, LONGREPR_CHARS)
            self._line(line)

    def _outcome(self, report: pytest.TestReport, when: str) -> str:
        outcome: str = report.outcome
        if hasattr(report, "wasxfail"):
            return (
                "xfailed" if outcome == "skipped" else "xpassed" if outcome == "passed" else outcome
            )
        if (
            outcome == "failed"
            and when == "call"
            and isinstance(report.longrepr, str)
            and report.longrepr.startswith("[XPASS(strict)]")
        ):
            return "xpass_strict"
        return outcome

    def _count(self, report: pytest.TestReport, when: str) -> str:
        outcome = self._outcome(report, when)
        if (
            when == "call"
            or outcome not in ("passed", "skipped")
            or (when == "setup" and outcome == "skipped")
        ):
            key = "error" if outcome == "failed" and when != "call" else outcome
            self.counts[key] = self.counts.get(key, 0) + 1
        return outcome

    def _phase(self, report: pytest.TestReport, when: str) -> None:
        outcome = self._count(report, when)
        line: dict[str, Any] = {
            "t": "phase",
            "id": report.nodeid,
            "when": when,
            "outcome": outcome,
            "dur": round(report.duration, 6),
        }
        if outcome in ("xfailed", "xpassed"):
            line["reason"] = _cut(str(getattr(report, "wasxfail", "")), REASON_CHARS)
        elif outcome == "skipped":
            line["reason"] = _cut(_longrepr_text(report.longrepr), REASON_CHARS)
        elif outcome == "xpass_strict":
            line["reason"] = _cut(str(report.longrepr), REASON_CHARS)
        if report.sections:  # each phase's report has the sections of the phases before it too
            captured = {"stdout": 0, "stderr": 0, "log": 0}
            for title, content in report.sections:
                for kind in captured:
                    if title == f"Captured {kind} {when}":
                        captured[kind] += len(content)
            if any(captured.values()):
                line["captured"] = captured
        if outcome == "failed":
            self.held = (report.nodeid, when, line, report.longrepr)
            return
        self._line(line)

    def pytest_internalerror(self, excrepr: object, excinfo: object) -> None:
        try:
            self._line({"t": "pytest_internal_error", "error": _cut_end(str(excrepr), 4000)})
        except Exception as error:
            self._internal_error("pytest_internalerror", error)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        try:
            if self.held is not None:
                self._write_held(None)
            files = _outside_python()
            self._line({"t": "imported", "files": files[:MAX_IMPORTED], "total": len(files)})
            shadowed = _shadowed([os.getcwd(), str(getattr(self.config, "rootpath", "") or "")])
            if shadowed:
                self._line({"t": "shadowed", "modules": shadowed})
            hooks = _outcome_hook_files(self.config) if self.hook_files is None else self.hook_files
            if hooks:
                self._line({"t": "outcome_hooks", "files": hooks[:200]})
            left_out = self._left_out()
            if left_out:
                self._line({"t": "left_out", "paths": left_out})
            if self.hidden:
                self._line({"t": "hidden", "ids": self.hidden[:MAX_LEFT_OUT]})
            if (
                self.deselected
                or self.uncollected
                or self.dropped
                or self.ignored
                or self.made_none
                or self.args
            ):  # (collection's warnings come after pytest_collection_finish)
                self._line({"t": "narrowed", "deselected": self.deselected,
                            "uncollected": self.uncollected, "dropped": self.dropped,
                            "ignored": self.ignored, "made_none": self.made_none,
                            "args": self.args})  # fmt: skip
            if self.tracer is not None:
                self._line(self.tracer.stop())
            if self.reach is not None:
                sight = getattr(self.reach, "sight", None)
                if sight is not None:
                    sight.plugins = _plugin_files(self.config)
                from eyeful_probe_cov import last_lines

                for line in last_lines(self.reach, self.config, self.env[_MAP_VAR]):
                    self._line(line)
            if self.walls is not None and self.walls.hits:
                self._line({"t": "sandboxed", "hits": self.walls.hits})
        except Exception as error:
            self._internal_error("pytest_sessionfinish", error)
        try:
            counts = dict(self.counts)
            if self.passed:
                counts["passed"] = counts.get("passed", 0) + self.passed
            self._line(
                {
                    "t": "finish",
                    "exitstatus": int(exitstatus),
                    "counts": counts,
                    "collected": getattr(session, "testscollected", None),
                    "failed": getattr(session, "testsfailed", None),
                }
            )
        except Exception as error:
            self._internal_error("pytest_sessionfinish", error)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        with contextlib.suppress(Exception):
            if self.held is not None:
                self._write_held(None)
            if self.fd is not None:
                # pytest's own end, after its session finished: a finish line without this one
                # was not written by the session's end (eyeful.pytest_records).
                self._line({"t": "end"})
                os.close(self.fd)
                self.fd = None
        with contextlib.suppress(ValueError):
            _active.remove(self)


def _say_loaded() -> None:
    """The record's first line, written as pytest imports this module (PYTEST_PLUGINS, ``-p``:
    before any conftest.py runs): a pytest that ends before its session starts (a conftest, or
    what it imports, calling ``sys.exit()``; ``os._exit`` in an early hook) leaves this line
    alone, which eyeful reads as a run that never ended, never as one without a record."""
    fd = _inherited(_ENV.get(_FD_VAR))
    if fd is not None:
        with contextlib.suppress(OSError):
            args = [str(arg)[:200] for arg in sys.argv[1:50]]  # (`--version`: informs only)
            line = {"t": "loaded", "pid": os.getpid(), "args": args}
            os.write(fd, (json.dumps(line) + "\n").encode())


_say_loaded()
