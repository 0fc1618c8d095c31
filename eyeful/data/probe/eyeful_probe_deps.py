# ruff: noqa: PTH100, PTH105, PTH108, PTH109, PTH112, PTH113, PTH118, PTH120, PTH123
# (os.path, not pathlib: this runs in any project's Python)
"""What a repository file could see without running any of its code: the repository files it
imports, read from its source (``ast``): every ``import`` and ``from ... import`` in it, inside
functions and ``if`` blocks too, and ``importlib.import_module``/``__import__`` of a literal name,
each resolved as this process resolves it (``sys.modules`` first, then the packages' ``__path__``
and ``sys.path``), kept when it is a file under the repository. The map's import graph
(eyeful_probe_watch.Reach, eyeful/affected.py). Standard library only. PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import dis
import functools
import hashlib
import importlib
import importlib.util
import json
import os
import stat
import sys
from types import FrameType
from typing import Any, ClassVar

from eyeful_probe_names import module_file  # type: ignore[import-not-found]  # beside it
from eyeful_probe_names import namespace_of as _namespace_of

_LOADERS = frozenset({"import_module", "__import__"})
_WORDS = (*_LOADERS, "modules")
"""What a source must say for :func:`_entries` to read every node of it: a loader's name, or
``sys.modules``."""

EVERYTHING = "\0"
"""Marks a set of files as standing for every file: what it did cannot be traced (the reason
follows)."""
_CHILD = frozenset(
    {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
     "os.forkpty"}
)  # fmt: skip
_MAX_FRAMES = 300
_IMPORT_NAME = dis.opmap["IMPORT_NAME"]
_IMPORT = compile(
    "def watched(real, saw, getframe, statement, quiet):\n"
    "    def __import__(name, globals=None, locals=None, fromlist=(), level=0):\n"
    "        __tracebackhide__ = True\n"
    "        module = real(name, globals, locals, fromlist, level)\n"
    "        try:\n"
    "            if globals is None or (id(globals), name, level) not in quiet:\n"
    "                frame = getframe(1)\n"
    "                code = frame.f_code\n"
    "                file = code.co_filename\n"
    "                if code.co_code[frame.f_lasti] != statement:\n"
    "                    file = None\n"
    "                saw(module, name, globals, fromlist, level, frame, file)\n"
    "        except Exception:\n"
    "            pass\n"
    "        return module\n"
    "    return __import__\n",
    "<frozen importlib._bootstrap>", "exec",
)  # fmt: skip
"""The import functions watched (:meth:`Sight.start`): compiled as part of the import system (what
``warnings`` skips when it counts a ``stacklevel``, what code that looks for its importer walks
past), and never failing for the watch (a recursion limit reached in it, say)."""


class Early:
    """The repository files opened, compiled or run (``exec``, ``runpy``) before the map's watch
    starts (at ``pytest_configure``, after the initial ``conftest.py`` files ran: settings a
    conftest runs with ``runpy.run_path``, say): what ran then counts for every test. An audit
    hook from the probe's import on, silent once :meth:`take` is called (one cannot be
    removed)."""

    files: ClassVar[set[str]] = set()
    roots: ClassVar[tuple[str, ...]] = ()
    on: ClassVar[bool] = False

    @classmethod
    def start(cls, root: str) -> None:
        cls.roots = tuple({os.path.join(os.path.abspath(root), ""),
                           os.path.join(os.path.realpath(root), "")})  # fmt: skip
        cls.on = True
        sys.addaudithook(cls._audit)

    @classmethod
    def _audit(cls, event: str, args: tuple[Any, ...]) -> None:
        if not cls.on or event not in ("open", "exec", "compile"):
            return
        try:
            if event == "exec":
                path = getattr(args[0], "co_filename", None) if args else None
            else:
                path = args[1] if event == "compile" and len(args) > 1 else args[0]
            if isinstance(path, (bytes, os.PathLike)):
                path = os.fsdecode(path)
            if not isinstance(path, str) or not path or path[0] == "<":
                return
            full = os.path.abspath(path)
            if full.startswith(cls.roots) and full.endswith(".py") and os.path.isfile(full):
                cls.files.add(full)
        except Exception:  # an audit hook must never break the code it watches
            return

    @classmethod
    def take(cls) -> set[str]:
        cls.on = False
        return set(cls.files)


class Sight:
    """What the map adds to the code a test ran (eyeful_probe_watch.Reach): the repository
    files opened (any type), compiled or executed (``exec``) while it ran, and the modules
    loaded by name (``importlib.import_module``, ``__import__``, an import statement of code
    that is no repository file: a string run with ``exec``, a doctest; a module imported
    before included: no code of it runs, no file is opened); the files
    reached while each fixture was set up, for every test that uses it; a child process (and,
    from 3.12, the monitoring tool taken away: eyeful_probe_watch.Reach) marks the test
    (:data:`EVERYTHING`). A file opened, compiled or run while a repository module was imported
    becomes an edge of the import graph: what that module's import loads."""

    def __init__(self, reach: Any) -> None:  # noqa: ANN401  (eyeful_probe_watch.Reach)
        self.reach = reach
        self.roots: tuple[str, ...] = reach.roots
        self.fixtures: dict[int, tuple[object, set[str]]] = {}
        self.loads: dict[str, set[str]] = {}
        self.passes: dict[str, set[str]] = {}
        self.seen: set[str] = set()
        self.on = True
        self.swapped: dict[int, Any] = {}
        """The watched import function of each real one (by its id)."""
        self.bound: list[tuple[dict[str, Any], str, Any]] = []
        """Each name :meth:`_swap` bound to a watched import function, with the real one."""
        self.mine: dict[Any, str | None] = {}  # a module's file as a repository file: _loaded
        self.quiet: set[tuple[int, object, object]] = set()
        """The imports not to look at again (:meth:`_imported`): by the namespace importing
        (its ``globals``), the name and the level: a statement the import graph reads, or one
        that loaded no repository module (the same name loads the same module again)."""
        self.statements: dict[str, frozenset[tuple[str, int]]] = {}
        self.imports = Imports(self.roots)  # the sources' parse, shared with the graph's
        self.index: dict[str, list[str]] = {}
        """The files of each package's loaded submodules (:meth:`_submodules`), and what of
        ``sys.modules`` they were read from."""
        self.index_names: set[str] = set()
        self.indexed = 0
        self.last: str | None = None
        self.added_to: set[str] | None = None
        self.added: dict[str, int] = {}  # how much of each package's index added_to holds
        self.restore: list[tuple[object, str, object]] = []  # attributes _swap set
        self.spawner = False
        self.plugins: list[str] = []
        """The files of the modules registered with pytest, given at the session's end."""

    @classmethod
    def start(cls, reach: Any) -> Sight:  # noqa: ANN401
        sight = cls(reach)
        sys.addaudithook(sight._audit)
        real = importlib.import_module

        def import_module(name: str, package: str | None = None) -> Any:  # noqa: ANN401
            __tracebackhide__ = True  # pytest leaves this frame out
            module = real(name, package)
            if sight.on:
                with contextlib.suppress(Exception):  # never break the code it watches
                    own, package = sight._namespace(module)
                    sight._loaded(own, sys._getframe(1), package)
            return module

        names: dict[str, Any] = {"__name__": "importlib._bootstrap"}
        exec(_IMPORT, names)  # noqa: S102  (the wrapper's code, compiled above)
        sight.swapped = {
            id(real): functools.wraps(real)(import_module),
            id(builtins.__import__): names["watched"](
                builtins.__import__, sight._imported, sys._getframe, _IMPORT_NAME, sight.quiet
            ),
            id(importlib.__import__): names["watched"](
                importlib.__import__, sight._imported, sys._getframe, _IMPORT_NAME, sight.quiet
            ),
        }
        sight._swap()
        return sight

    def _swap(self) -> None:
        """Every name bound to an import function in the namespaces of the modules loaded (the
        standard ones, ``importlib.metadata``'s ``import_module`` for entry points, a conftest's
        copy of ``builtins.__import__`` kept for a fixture), and ``logging.config``'s importer,
        bound to its watched one: a module loaded later takes the watched ones. A module not yet
        loaded (``importlib.util.LazyLoader``'s) is left as it is: reading it would load it."""
        swapped = self.swapped
        for module in list(sys.modules.values()):
            namespace = _namespace_of(module)
            if (
                namespace is None or type(module).__name__ == "_LazyModule"  # not loaded yet
                or str(namespace.get("__name__", "")).startswith("eyeful_probe")
            ):  # fmt: skip
                continue
            for key, value in list(namespace.items()):
                watched = swapped.get(id(value))
                if watched is not None and watched is not value:
                    namespace[key] = watched
                    self.bound.append((namespace, key, value))
        config = _namespace_of(sys.modules.get("logging.config"))
        configurator = config.get("BaseConfigurator") if config else None
        importer = getattr(configurator, "__dict__", {}).get("importer")
        if isinstance(importer, staticmethod) and id(importer.__func__) in swapped:
            configurator.importer = staticmethod(swapped[id(importer.__func__)])  # type: ignore[union-attr]
            self.restore.append((configurator, "importer", importer))

    def _imported(
        self, module: object, name: object, globals_: Any, fromlist: Any, level: object,  # noqa: ANN401
        frame: FrameType, statement: str | None,
    ) -> None:  # fmt: skip
        """An ``__import__`` returned ``module`` to ``frame``: by an import statement of file
        ``statement``, or by a call. A statement the import graph reads (a repository file's
        source names it) says nothing more; any other (a call by name, a statement in a string
        run with ``exec``, in a doctest, in a file outside the repository or not on disk as it
        ran) loads by name every module on the path to the one it names, the namespace it
        returns and the submodules its ``fromlist`` took."""
        if not self.on:
            return
        quiet = (id(globals_), name, level) if isinstance(globals_, dict) else None
        if statement is not None and (name, level) in self._statements(statement):
            if quiet:
                self.quiet.add(quiet)
            return
        absolute = name if isinstance(name, str) else ""
        if level and isinstance(level, int) and isinstance(globals_, dict):
            package = globals_.get("__package__") or globals_.get("__name__", "")
            if "__path__" not in globals_ and not globals_.get("__package__"):
                package = package.rpartition(".")[0]
            absolute = importlib.util.resolve_name("." * level + absolute, package)
        parts = absolute.split(".")
        found = [sys.modules.get(".".join(parts[:n])) for n in range(1, len(parts) + 1)]
        below = getattr(module, "__name__", None)
        if isinstance(below, str):
            found.extend(
                sys.modules.get(f"{below}.{item}") for item in fromlist or ()
                if isinstance(item, str) and item != "*"
            )  # fmt: skip
        files = [module_file(m) for m in found]
        own, package = self._namespace(module)
        if not self._loaded(files + own, frame, package) and quiet:
            self.quiet.add(quiet)

    def _statements(self, filename: str) -> frozenset[tuple[str, int]]:
        """The ``(name, level)`` of each import statement in repository file ``filename``'s
        source (:meth:`Imports.parsed`), as ``__import__`` is called with them; none for
        another file."""
        known = self.statements.get(filename)
        if known is None:
            found: set[tuple[str, int]] = set()
            full = os.path.abspath(filename)
            if full.startswith(self.roots) and full.endswith(".py"):
                for entry in self.imports.parsed(full):
                    if entry[0] == "import":
                        found.add((entry[1], 0))
                    elif entry[0] == "from":
                        found.add((entry[1], entry[2]))
            known = self.statements[filename] = frozenset(found)
        return known

    def _namespace(self, module: object) -> tuple[list[str], str | None]:
        """A module's namespace in the caller's hands: its file and, for a package of the
        repository, its name: every submodule of it loaded by now is an attribute of it
        (``resolve_name("pkg:sub.X")`` reads ``pkg/sub.py``)."""
        namespace = _namespace_of(module)
        if namespace is None:
            return [], None
        own = namespace.get("__file__")
        files = [own] if isinstance(own, str) else []
        path = namespace.get("__path__")
        name = namespace.get("__name__")
        try:
            mine = path is not None and any(str(p).startswith(self.roots) for p in path)
        except Exception:  # a namespace path that will not list itself
            mine = False
        return files, name if mine and isinstance(name, str) else None

    def _submodules(self, package: str) -> list[str]:
        """The files of the loaded submodules of ``package`` (any depth), kept up to date with
        ``sys.modules`` as it grows (read once per module: a package loading thousands of
        plugins by name costs each once)."""
        names = list(sys.modules)
        count = self.indexed
        if len(names) >= count and count and names[count - 1] == self.last:
            new = names[count:]  # only added since: read those
        else:
            new = [n for n in names if n not in self.index_names]
        for module_name in new:
            self.index_names.add(module_name)
            file = self._repository_file(module_file(sys.modules.get(module_name)))
            parts = module_name.split(".")
            if file and len(parts) > 1:
                for n in range(1, len(parts)):
                    self.index.setdefault(".".join(parts[:n]), []).append(file)
        self.indexed = len(names)
        self.last = names[-1] if names else None
        return self.index.get(package, [])

    def _loaded(self, paths: list[Any], frame: FrameType, package: str | None = None) -> bool:
        """Modules' files loaded by name, and the submodules of ``package``: the current test's
        (or module's), and edges of the import graph when a repository module's top level
        loaded them. Whether any is a repository file."""
        mine = self.mine
        found = set()
        for path in paths:
            full = mine.get(path, "")
            if full == "":
                full = mine[path] = self._repository_file(path)
            if full:
                found.add(full)
        current = self.reach.current
        subs: list[str] = []
        if package is not None:
            subs = self._submodules(package)
            if self.added_to is not current:
                self.added_to, self.added = current, {}
            start = self.added.get(package, 0)
            current.update(subs[start:])
            self.added[package] = len(subs)
        if found:
            current |= found
        if found or subs:
            owner = self._owner(frame)
            if owner is not None:
                owner[0].setdefault(owner[1], set()).update((found | set(subs)) - {owner[1]})
        return bool(found or subs)

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "object.__getattr__" or not self.on:
            return  # the first: by far the most frequent (a frame's f_code), never ours
        try:
            if event == "open":
                if args:
                    self._saw(args[0], opened=True)
            elif event == "exec":
                if args:
                    self._saw(getattr(args[0], "co_filename", None))
            elif event == "compile":
                self._saw(args[1] if len(args) > 1 else None)
            elif not self.reach.testing:
                return
            elif event in _CHILD:
                self.reach.current.add(EVERYTHING + "it started a child process")
        except Exception:  # an audit hook must never break the code it watches
            return

    def begin_test(self) -> None:
        """multiprocessing's spawn starts a child with no audit event, and a forkserver's child
        is forked by the server, not by this process: their launcher (``spawnv_passfds``) and
        every process's start (``BaseProcess.start``: pools' workers too) are watched once the
        modules are loaded."""
        util = sys.modules.get("multiprocessing.util")
        self.spawner = util is not None
        self._watch(util, "spawnv_passfds")
        process = sys.modules.get("multiprocessing.process")
        self._watch(getattr(process, "BaseProcess", None), "start")

    def _watch(self, owner: object, name: str) -> None:
        """``owner.name`` marks the running test as having started a child process."""
        launch = getattr(owner, name, None)
        if launch is None or getattr(launch, "_eyeful", False):
            return
        reach = self.reach

        def watched(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401
            __tracebackhide__ = True
            if reach.testing:
                reach.current.add(EVERYTHING + "it started a child process")
            return launch(*args, **kwargs)

        watched._eyeful = True  # type: ignore[attr-defined]
        setattr(owner, name, functools.wraps(launch)(watched))

    def end_test(self) -> None:
        """A test that loaded multiprocessing itself may have started a child unseen."""
        if not self.spawner and "multiprocessing.util" in sys.modules:
            self.reach.current.add(EVERYTHING + "it loaded multiprocessing")

    def _saw(self, path: object, *, opened: bool = False) -> None:
        """A file opened, compiled, run or loaded by name: the current test's (or module's),
        and, when a repository module's import did it, an edge of the import graph. An opened
        path must be a file here: a name relative to another directory (``dir_fd``, as
        ``shutil.rmtree`` opens them) is not one of the repository's."""
        full = self._repository_file(path)
        if full is None or (opened and not os.path.isfile(full)):
            return
        self.reach.current.add(full)
        owner = self._owner(sys._getframe(1), full)
        if owner is not None:
            owner[0].setdefault(owner[1], set()).add(full)

    def _repository_file(self, path: object) -> str | None:
        """``path`` as a repository file (a compiled file as its source), or None."""
        if isinstance(path, (bytes, os.PathLike)):
            path = os.fsdecode(path)
        if not isinstance(path, str) or not path or path[0] == "<":
            return None
        full = os.path.abspath(path)
        if not full.startswith(self.roots):
            return None
        if full.endswith(".pyc"):
            try:
                return importlib.util.source_from_cache(full)
            except ValueError:
                return None
        return full

    def _owner(
        self, frame: FrameType | None, full: str = ""
    ) -> tuple[dict[str, set[str]], str] | None:
        """The repository module whose top level runs (other than ``full``'s), with the edges
        what it loads now joins: its import loads it. Through the import system (an import the
        static graph reads better: ``from a import b`` opens ``a/__init__.py`` without reading
        its namespace), only as a package passed through."""
        depth = 0
        imported = False
        while frame is not None and depth < _MAX_FRAMES:
            code = frame.f_code
            name = code.co_filename
            if name.startswith("<frozen importlib._bootstrap"):
                imported = True
            elif code.co_name == "<module>" and name != full and not name.startswith("<"):
                owner = os.path.abspath(name)
                if not owner.startswith(self.roots):
                    return None
                return (self.passes if imported else self.loads), owner
            frame = frame.f_back
            depth += 1
        return None

    def fixture_begin(self, fixturedef: object) -> set[str]:
        """A fixture's setup starts: what runs now is its own (and the test's)."""
        reach = self.reach
        reach.flush()  # what ran before the setup: not the fixture's
        saved: set[str] = reach.current
        reach.current = set()
        func = getattr(fixturedef, "func", None)
        for _ in range(5):  # the fixture's own function, where a decorator wrapped it
            wrapped = getattr(func, "__wrapped__", None)
            if wrapped is None:
                break
            func = wrapped
        name = getattr(getattr(func, "__code__", None), "co_filename", None)
        if isinstance(name, str):
            reach.current.add(name)
        if reach.tool is not None:
            getattr(sys, "monitoring").restart_events()  # noqa: B009
        return saved

    def fixture_end(self, fixturedef: object, saved: set[str]) -> None:
        reach = self.reach
        reach.flush()
        files: set[str] = reach.current
        kept = self.fixtures.setdefault(id(fixturedef), (fixturedef, set()))[1]
        kept |= files
        saved |= files
        reach.current = saved

    def of_fixtures(self, fixtures: list[object]) -> set[str]:
        """The files reached while these fixtures were set up, by any test."""
        found: set[str] = set()
        for fixturedef in fixtures:
            kept = self.fixtures.get(id(fixturedef))
            if kept is not None:
                found |= kept[1]
        return found

    def stop(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """The import graph (:meth:`Imports.graph`) of every repository file reached, loaded
        (``sys.modules``) or registered with pytest (``plugins``: conftest files,
        ``pytest_plugins`` modules)."""
        plugins = self.plugins
        self.on = False
        watched = {id(w) for w in self.swapped.values()}
        for namespace, key, real in self.bound:
            if id(namespace.get(key)) in watched:
                namespace[key] = real
        for owner, key, value in self.restore:
            with contextlib.suppress(Exception):
                setattr(owner, key, value)
        files = {os.path.abspath(f) for f in self.seen if not f.startswith(EVERYTHING)}
        for module in list(sys.modules.values()):
            name = module_file(module)
            if name is not None:
                files.add(os.path.abspath(name))
        files.update(os.path.abspath(f) for f in plugins)
        for edges in (self.loads, self.passes):
            for found in edges.values():
                files |= found
        mine = {f for f in files if f.startswith(self.roots)}
        imports = Imports(self.roots)  # sys.path as it is now
        imports.known, imports.used = self.imports.known, self.imports.used
        imports.fresh = self.imports.fresh
        self._submodules("")  # the index brought up to date
        imports.loaded = {
            package: {f for f in files if f.endswith(".py")}
            for package, files in self.index.items()
        }  # fmt: skip
        graph, parents = imports.graph(mine)
        for owner, found in self.loads.items():
            graph.setdefault(owner, set()).update(found - {owner})
        for owner, found in self.passes.items():
            parents.setdefault(owner, set()).update(found - {owner} - graph.get(owner, set()))
        return graph, parents


class Imports:
    """The static import graph of the repository's files under ``roots`` (directories ending in
    the separator)."""

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots
        search: list[str] = []
        for entry in sys.path:
            path = os.path.abspath(entry or os.getcwd())
            if os.path.isdir(path) and path not in search:
                search.append(path)
        self.search = search
        self.files: dict[str, str | None] = {}
        self.known: dict[str, list[Any]] | None = None  # read from cache_file when first needed
        self.used: dict[str, list[Any]] = {}
        self.loaded: dict[str, set[str]] = {}  # by package: :meth:`below`, given by Sight
        self.names: dict[str, str] | None = None  # by file: :meth:`name_of`
        self.fresh = False  # a source was parsed that the cache did not hold

    cache_file: str | None = None
    """Where the parsed sources are kept between runs (EYEFUL_PROBE_IMPORTS: eyeful's cache),
    set by eyeful_probe for its process."""

    def _mine(self, path: object) -> str | None:
        if not isinstance(path, str) or not path.endswith(".py"):
            return None
        path = os.path.abspath(path)
        return path if path.startswith(self.roots) else None

    def graph(self, files: set[str]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """``files`` and every repository file they import, transitively: each with the files
        whose namespace it takes (``import a.b`` binds ``a``: all of them; ``from a.b import c``
        takes ``c`` from ``a.b``, or the submodule ``a.b.c``), and apart the packages whose
        ``__init__.py`` only runs on the way (``a`` there): a change to that file reaches the
        importer, a change to what it imports does not."""
        full: dict[str, set[str]] = {}
        parents: dict[str, set[str]] = {}
        todo = [f for f in files if f.endswith(".py")]
        limit = sys.getrecursionlimit()  # a test may have left it low: the parse needs depth
        sys.setrecursionlimit(max(limit, _PARSE_DEPTH))
        try:
            while todo:
                path = todo.pop()
                if path in full:
                    continue
                found, passed = self.imports_of(path)
                full[path], parents[path] = found, passed - found
                todo.extend(f for f in found | passed if f not in full)
        finally:
            sys.setrecursionlimit(limit)
        with contextlib.suppress(Exception):  # a cache: only the next run's time depends on it
            self.save()
        return full, parents

    def imports_of(self, path: str) -> tuple[set[str], set[str]]:
        """The files whose namespace ``path`` takes, and the packages it only passes through."""
        found: set[str] = set()
        passed: set[str] = set()
        for entry in self.parsed(path):
            if entry[0] == "import":  # binds the top package: its loaded submodules too
                found |= self.module(entry[1]) | self.below(entry[1].partition(".")[0])
            elif entry[0] == "from":
                self._from(path, entry[1], entry[2], entry[3], found, passed)
            else:  # a literal load: the module itself is returned, its packages passed through
                own = self.module(entry[1], parents=False)
                found |= own | self.below(entry[1])
                passed |= self.module(entry[1]) - own
        found.discard(path)
        passed.discard(path)
        return found, passed

    def name_of(self, path: str) -> str | None:
        """The package a repository file's relative imports start from, as the run loaded it
        (a package's own name for its ``__init__.py``): from ``sys.modules``."""
        if self.names is None:
            self.names = {}
            for module_name, module in list(sys.modules.items()):
                namespace = _namespace_of(module) or {}
                mine = self._mine(namespace.get("__file__"))
                if mine:
                    package = "__path__" in namespace
                    self.names[mine] = module_name if package else module_name.rpartition(".")[0]
        return self.names.get(path)

    def below(self, name: str) -> set[str]:
        """The repository files of the loaded submodules of package ``name``: each is an
        attribute of it (``a.c.X`` reads ``a/c.py`` with no code of it run), whoever loaded it
        (:attr:`loaded`, the index :meth:`Sight._submodules` keeps)."""
        return self.loaded.get(name, set())

    def parsed(self, path: str) -> list[Any]:
        """The import statements of ``path``'s source, unresolved: ``["import", name]``,
        ``["from", module, level, [name, ...]]``, ``["load", name]`` (a literal
        ``import_module``/``__import__``); none where it is unreadable or not Python. Kept by
        the source's digest (:data:`_KEY_PREFIX` first) in :attr:`cache_file`."""
        try:
            with open(path, "rb") as file:
                source = file.read()
        except OSError:
            return []
        key = _KEY_PREFIX + hashlib.sha256(source).hexdigest()
        if self.known is None:
            self.known = _read_cache(self.cache_file)
        entries = self.used.get(key)  # parsed earlier in this run (:meth:`Sight._statements`)
        if entries is None:
            entries = self.known.get(key)
        if entries is None:
            try:
                entries = _entries(ast.parse(source, path), source)
            except (SyntaxError, ValueError):  # not Python (or not text): it imports nothing
                entries = []
            except Exception:  # too deep, no memory: not known now, not kept as nothing
                return []
            self.fresh = True
        self.used[key] = entries
        return entries

    def save(self) -> None:
        """The parsed sources of this run in :attr:`cache_file`, when any was new: written
        whole to a new file beside it, then renamed over it; where it cannot be written, the
        next run parses again."""
        if not self.fresh or not self.cache_file:
            return
        import tempfile

        folder, name = os.path.split(self.cache_file)
        try:
            fd, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=folder or None)
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(self.used, file)
            os.replace(temporary, self.cache_file)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def _from(
        self, path: str, module: str, level: int, names: list[str], found: set[str],
        passed: set[str],
    ) -> None:  # fmt: skip
        package = self.name_of(path) if level else None
        if package:  # by the importing module's package, where the run loaded it
            parts = package.split(".")
            if level <= len(parts):
                package = ".".join(parts[: len(parts) - level + 1])
                module, level = f"{package}.{module}" if module else package, 0
        if not level:
            own = self.module(module, parents=False)
            passed |= self.module(module) - own
            subs = [self.module(f"{module}.{name}", parents=False) for name in names]
        else:
            folder = os.path.dirname(path)
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            parts = module.split(".") if module else []
            for n in range(len(parts)):  # the packages on the way
                passed |= self._at(os.path.join(folder, *parts[:n]), init_only=True)
            own = self._at(os.path.join(folder, *parts))
            subs = [self._at(os.path.join(folder, *parts, name)) for name in names]
        for sub in subs:
            found |= sub
        if all(subs):  # only submodules: the package's own namespace is not read
            passed |= own
        else:
            found |= own

    def _at(self, base: str, *, init_only: bool = False) -> set[str]:
        """The file of the module at ``base`` (a package's ``__init__.py``, else ``base.py``)."""
        for candidate in (os.path.join(base, "__init__.py"), None if init_only else base + ".py"):
            if candidate and os.path.isfile(candidate):
                mine = self._mine(candidate)
                return {mine} if mine else set()
        return set()

    def module(self, name: str, *, parents: bool = True) -> set[str]:
        """The repository files importing ``name`` runs: its packages' and its own."""
        parts = [p for p in name.split(".") if p]
        found: set[str] = set()
        for n in range(1 if parents else len(parts), len(parts) + 1):
            file = self.file_of(".".join(parts[:n]))
            if file:
                found.add(file)
        return found

    def file_of(self, name: str) -> str | None:
        if name in self.files:
            return self.files[name]
        self.files[name] = None  # a cycle through a broken name ends here
        module = sys.modules.get(name)
        if module is not None:
            found = self._mine(module_file(module))
        else:
            head, _, tail = name.rpartition(".")
            found = None
            for folder in self._folders(head):
                if os.path.isdir(os.path.join(folder, tail)) or os.path.isfile(
                    os.path.join(folder, tail + ".py")
                ):
                    found = next(iter(self._at(os.path.join(folder, tail))), None)
                    break
        self.files[name] = found
        return found

    def _folders(self, package: str) -> list[str]:
        """Where the submodules of ``package`` are looked for ("": the top level)."""
        if not package:
            return self.search
        module = sys.modules.get(package)
        path = getattr(module, "__path__", None) if module is not None else None
        if path is not None:
            try:
                return [str(p) for p in path]
            except Exception:  # a namespace path that will not list itself
                return []
        head, _, tail = package.rpartition(".")
        return [
            os.path.join(folder, tail)
            for folder in self._folders(head)
            if os.path.isdir(os.path.join(folder, tail))
        ][:1]


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
_PARSE_DEPTH = 3000
_MAX_CACHE = 64 << 20
_KEY_PREFIX = "2:%d.%d:" % sys.version_info[:2]  # noqa: UP031
"""A cache key's prefix: the entries' format (a later probe that reads more of a source, or
writes it otherwise, counts it up), and this Python's version (its grammar)."""


def _read_cache(path: str | None) -> dict[str, list[Any]]:
    """The parsed sources kept by earlier runs: only entries of the shape :func:`_entries`
    writes; anything else (damaged, another version's) is parsed again."""
    if not path:
        return {}
    try:  # a regular file of a bounded size only: never wait on a FIFO, never read a device
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return {}
    try:
        with os.fdopen(fd, "rb") as file:
            status = os.fstat(file.fileno())
            if not stat.S_ISREG(status.st_mode) or status.st_size > _MAX_CACHE:
                return {}
            data = json.loads(file.read())
    except (OSError, ValueError, RecursionError, MemoryError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        key: entries for key, entries in data.items()
        if isinstance(entries, list) and all(_well_formed(e) for e in entries)
    }  # fmt: skip


def _well_formed(entry: object) -> bool:
    if not isinstance(entry, list) or not entry:
        return False
    kind = entry[0]
    if kind in ("import", "load"):
        return len(entry) == 2 and isinstance(entry[1], str)
    return (
        kind == "from" and len(entry) == 4 and isinstance(entry[1], str)
        and type(entry[2]) is int and entry[2] >= 0 and isinstance(entry[3], list)
        and all(isinstance(name, str) for name in entry[3])
    )  # fmt: skip


def _entries(tree: ast.AST, source: bytes) -> list[Any]:
    """The import statements of a module's syntax tree (:meth:`Imports.parsed`). Only the
    statements are walked unless the source names a loader: the walk over every node costs
    several times the parse."""
    # The text as Python reads it (a coding cookie may spell a name in other bytes), and a
    # name outside ASCII may normalize to a loader's (NFKC): then every node is read.
    try:
        text: str | None = importlib.util.decode_source(source)
    except Exception:  # the parse read it otherwise: read every node
        text = None
    loads = text is None or not text.isascii() or any(word in text for word in _WORDS)
    entries: list[Any] = []
    for node in ast.walk(tree) if loads else _statements(tree):
        if isinstance(node, ast.Import):
            entries.extend(["import", alias.name] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            entries.append(["from", node.module or "", node.level or 0, names])
        elif isinstance(node, (ast.Call, ast.Subscript)):
            name = _literal_load(node)
            if name:
                entries.append(["load", name])
    return entries


def _statements(tree: ast.AST) -> list[ast.AST]:
    """Every statement in ``tree``, at any depth (function and class bodies, ``if``, ``try``,
    ``with``, ``match``...), without the expressions: an ``import`` is a statement, and the
    walk over every node costs several times the parse."""
    found: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        found.append(node)
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                todo.extend(child for child in block if isinstance(child, ast.AST))
    return found


def _literal_load(node: ast.Call | ast.Subscript) -> str | None:
    """The name in ``importlib.import_module("name")``, ``__import__("name")``,
    ``sys.modules["name"]`` or ``sys.modules.get("name")``."""
    if isinstance(node, ast.Subscript):
        value, first = node.value, node.slice
        if not (isinstance(value, ast.Attribute) and value.attr == "modules"):
            return None
        return _name_in(first)
    func = node.func
    if (
        isinstance(func, ast.Attribute) and func.attr == "get" and node.args
        and isinstance(func.value, ast.Attribute) and func.value.attr == "modules"
    ):  # fmt: skip
        return _name_in(node.args[0])
    called = (
        func.id
        if isinstance(func, ast.Name)
        else func.attr
        if isinstance(func, ast.Attribute)
        else ""
    )
    if called not in _LOADERS or not node.args:
        return None
    return _name_in(node.args[0])


def _name_in(node: ast.AST) -> str | None:
    """An absolute module name written as a literal string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        name = node.value
        return name if name and not name.startswith(".") else None
    return None
