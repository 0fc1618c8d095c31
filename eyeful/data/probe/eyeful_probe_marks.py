# ruff: noqa: PTH100, PTH105, PTH108, PTH118, PTH119, PTH120
# (os.path, not pathlib: this runs in any project's Python)
"""The map's watch without a tracer (but where a coverage tool measures: eyeful_probe_cov.py):
each repository module the import system loads from source is compiled with a mark at the start
of every function and of the module's body (``__eyeful_marks__["12:/abs/mod.py"] = None``: a
dictionary store, no call), so that the functions that ran are the marks set since the test
began. A tracer (``sys.settrace``) slows every line of every file, pytest's own included, by a
third or more on Python 3.11, and ``sys.monitoring``'s events, restarted for each test, cost
3.12 1.1-1.3x; a mark costs a store in the repository's own functions only, and no test can
take it away. Nothing is written to ``__pycache__``; the marked code is kept in eyeful's cache.
Standard library only.
PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import hashlib
import importlib.machinery
import importlib.util
import marshal
import os
import stat
import sys
from types import CodeType
from typing import Any

from eyeful_probe_deps import (  # type: ignore[import-not-found]  # beside it
    EVERYTHING,
    Imports,
    Sight,
)
from eyeful_probe_names import module_file  # type: ignore[import-not-found]  # beside it
from eyeful_probe_watch import Reach  # type: ignore[import-not-found]  # beside it

ANY_FUNCTION = -1  # eyeful/importtime.py's
_MAX_KEPT = 256 << 20
_KEY_PREFIX = b"marks 2:" + importlib.util.MAGIC_NUMBER
NAME = "__eyeful_marks__"
"""The marks' dictionary, a builtin: found from every module without a name in its namespace."""


class _Marker(ast.NodeTransformer):
    """Puts a mark first in the module's body and in every function's (after a docstring, and
    after ``from __future__`` imports in the module), and in every lambda's expression."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _mark(self, body: list[ast.stmt], first: int, *, module: bool = False) -> None:
        at = 0
        if body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                at = 1  # the docstring stays the docstring
        if module:
            while (
                at < len(body)
                and isinstance(body[at], ast.ImportFrom)
                and getattr(body[at], "module", None) == "__future__"
            ):
                at += 1
        line = body[min(at, len(body) - 1)].lineno
        store = ast.Assign(
            targets=[
                ast.Subscript(
                    value=ast.Name(id=NAME, ctx=ast.Load()),
                    slice=ast.Constant(value=f"{first}:{self.path}"),
                    ctx=ast.Store(),
                )
            ],
            value=ast.Constant(value=None),
        )
        # Code run where builtins lack the name (a function rebuilt by value in a child
        # process, cloudpickle's; builtins replaced) runs as written: a try costs nothing where
        # nothing is raised, and a bare except looks up no name.
        guarded = ast.Try(
            body=[store],
            handlers=[ast.ExceptHandler(type=None, name=None, body=[ast.Pass()])],
            orelse=[],
            finalbody=[],
        )
        for node in ast.walk(guarded):
            setattr(node, "lineno", line)  # noqa: B010  (ast.AST declares none of these)
            setattr(node, "end_lineno", line)  # noqa: B010
            setattr(node, "col_offset", 0)  # noqa: B010
            setattr(node, "end_col_offset", 0)  # noqa: B010
        body.insert(at, guarded)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        self.generic_visit(node)
        # co_firstlineno: the first decorator's line where there is one, else the def's
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        self._mark(node.body, first)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        """``lambda x: (__eyeful_marks__.__setitem__("3:/abs/mod.py", None), x)[1]``: no
        ``try`` fits in an expression, so where builtins lack the name the lambda raises
        NameError, in the run that records the map only (its confirmations run unmarked)."""
        self.generic_visit(node)
        body = node.body
        mark = ast.Call(
            func=ast.Attribute(
                value=ast.Name(id=NAME, ctx=ast.Load()), attr="__setitem__", ctx=ast.Load()
            ),
            args=[ast.Constant(value=f"{node.lineno}:{self.path}"), ast.Constant(value=None)],
            keywords=[],
        )
        pair = ast.Subscript(
            value=ast.Tuple(elts=[mark, body], ctx=ast.Load()),
            slice=ast.Constant(value=1),
            ctx=ast.Load(),
        )
        for new in ast.walk(pair):
            if new is not body and not _inside(new, body):
                ast.copy_location(new, body)
        node.body = pair
        return node


def _inside(node: ast.AST, body: ast.AST) -> bool:
    return any(node is child for child in ast.walk(body))


def marked(source: bytes, path: str) -> CodeType:
    """``source`` compiled as the import system compiles it, with the marks: each a string
    constant, the function's first line and the file (``12:/abs/pkg/mod.py``), whose hash the
    string keeps."""
    tree = ast.parse(source, path)
    marker = _Marker(path)
    marker.visit(tree)
    if tree.body:
        marker._mark(tree.body, 0, module=True)  # a module: line 0, no function's
    code: CodeType = compile(tree, path, "exec", dont_inherit=True)
    return code


class MarkedReach(Reach):  # type: ignore[misc]  # Reach is untyped to mypy (beside it)
    """The map's :class:`eyeful_probe_watch.Reach` with marks in place of a tracer. A repository
    module imported before the marks were in place (a plugin's import) cannot say when its code
    runs: its file counts for every test."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.marks: dict[str, None] = {}
        self.real_get_code: Any = None
        self.kept = _Kept(Imports.cache_file)
        self.marked: set[str] = set()  # the files compiled with marks
        self.early: set[str] = set()  # the files reached before the first test
        self.test_modules: set[str] = set()  # the files of the collected test modules

    @classmethod
    def start(cls, root: str) -> MarkedReach:
        reach = cls(root)
        for module in list(sys.modules.values()):
            name = module_file(module)  # never loads a module loaded lazily
            if name is not None and reach._mine(name):
                reach.session.add(name)
        setattr(builtins, NAME, reach.marks)
        reach._load_marked()
        reach.sight = Sight.start(reach)
        return reach

    def _mine(self, path: str) -> bool:
        full = os.path.abspath(path)
        return full.startswith(self.roots) and "-packages" + os.sep not in full

    def _load_marked(self) -> None:
        """Every source loader (the path finder's, an editable install's) compiles the
        repository's modules marked, and neither reads nor writes their ``__pycache__``."""
        loader: Any = importlib.machinery.SourceFileLoader
        real = self.real_get_code = loader.get_code
        reach = self

        def get_code(self: Any, fullname: str) -> CodeType | None:  # noqa: ANN401
            path = self.get_filename(fullname)
            if not isinstance(path, str) or not path.endswith(".py") or not reach._mine(path):
                return real(self, fullname)  # type: ignore[no-any-return]
            try:
                source = self.get_data(path)
                code = reach.kept.code(source, path)
                reach.marked.add(path)
                return code
            except Exception:
                # the import system's own compile says what is wrong (a syntax error); unmarked,
                # it is every test's file
                reach.session.add(path)
                return real(self, fullname)  # type: ignore[no-any-return]

        get_code.__wrapped__ = real  # type: ignore[attr-defined]
        loader.get_code = get_code

    def flush(self) -> None:
        """The marks set since the last flush: their files to what runs now (a test, a fixture's
        setup, a module's collection, the session), and before the first test also the
        functions' first lines (``at_import``)."""
        marks = self.marks
        if not marks:
            return
        # list() takes the keys in one step (a loop over the dictionary while another thread
        # adds to it would raise); each is taken out alone, so that one added meanwhile stays
        # for the next flush.
        keys = list(marks)
        pop = marks.pop
        for key in keys:
            pop(key, None)
        hit = [key.partition(":") for key in keys]
        current = self.current
        for _, _, path in hit:
            current.add(path)
        if not self.tested:
            self.at_import.update((path, int(line)) for line, _, path in hit)

    def begin(self) -> None:
        self.flush()
        super().begin()

    def end(self) -> list[str]:
        self.flush()
        if not self.tested:
            self.early |= self.current
        return super().end()  # type: ignore[no-any-return]

    def end_test(self, test: str, fixtures: list[object]) -> dict[str, Any]:
        self.flush()
        return super().end_test(test, fixtures)  # type: ignore[no-any-return]

    def collected(self, node_id: str, module: object) -> dict[str, Any]:
        self.flush()
        name = getattr(module, "__file__", None)
        if isinstance(name, str):
            self.test_modules.add(name)
        return super().collected(node_id, module)  # type: ignore[no-any-return]

    def _unmarked_modules(self) -> set[str]:
        """The repository's modules loaded without marks that are neither a collected test
        module nor a ``conftest.py`` (whose tests' entries hold them): pytest's rewritten
        helpers (``register_assert_rewrite``, ``pytest_plugins`` modules), those loaded by
        another loader. What runs in them cannot be seen: they count for every test."""
        found = set()
        for module in list(sys.modules.values()):
            name = module_file(module)
            if (
                name is not None
                and name.endswith(".py")
                and name not in self.marked
                and name not in self.test_modules
                and os.path.basename(name) != "conftest.py"
                and self._mine(name)
            ):
                found.add(name)
        return found

    def stop_watching(self) -> None:
        """The marks taken away; the files whose code ran before the first test without marks
        (run by ``exec``, compiled by pytest, imported before the marks): any of their functions
        may have run at an import (eyeful/importtime.py's ``ANY_FUNCTION``)."""
        self.flush()
        self.session |= self._unmarked_modules()
        for name in (self.early | self.session) - self.marked:
            if not name.startswith(EVERYTHING):
                self.at_import.add((name, ANY_FUNCTION))
        if self.real_get_code is not None:
            importlib.machinery.SourceFileLoader.get_code = self.real_get_code  # type: ignore[method-assign]
        # the marked code that stays loaded keeps setting marks: nobody reads them now
        setattr(builtins, NAME, {})
        self.kept.save()


class _Kept:
    """The marked code of earlier runs, by the file's path and source (what the import system
    would compile), kept in one file of eyeful's cache beside the import graph's parses
    (``marks.marshal``): read whole when first needed, written whole at the end with this run's
    entries where one was new. It saves the parse and compile only; a damaged file, or an entry
    that does not load, is compiled again."""

    def __init__(self, imports_file: str | None) -> None:
        self.path = (
            os.path.join(os.path.dirname(imports_file), "marks.marshal") if imports_file else None
        )
        self.known: dict[str, bytes] | None = None
        self.used: dict[str, bytes] = {}
        self.fresh = False

    def code(self, source: bytes, path: str) -> CodeType:
        # the optimisation level (-O, PYTHONOPTIMIZE) decides what compile keeps: asserts,
        # docstrings
        level = b"%d\0" % sys.flags.optimize
        digest = hashlib.sha256(
            _KEY_PREFIX + level + os.fsencode(path) + b"\0" + source
        ).hexdigest()
        if self.known is None:
            self.known = self._read()
        data = self.known.get(digest)
        if data is not None:
            try:
                code = marshal.loads(data)  # noqa: S302  (see _read)
            except (ValueError, EOFError, TypeError):
                code = None
            if isinstance(code, CodeType):
                self.used[digest] = data
                return code
        code = marked(source, path)
        if self.path is not None:
            self.used[digest] = marshal.dumps(code)
            self.fresh = True
        return code

    def _read(self) -> dict[str, bytes]:
        if self.path is None:
            return {}
        try:  # a regular file of a bounded size only: never wait on a FIFO, never read a device
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return {}
        try:
            with os.fdopen(fd, "rb") as file:
                status = os.fstat(file.fileno())
                if not stat.S_ISREG(status.st_mode) or status.st_size > _MAX_KEPT:
                    return {}
                # eyeful's own cache, as trusted as __pycache__: written by eyeful's runs, and
                # never given to a run in the sandbox (its code could write it)
                data = marshal.loads(file.read())  # noqa: S302
        except (OSError, ValueError, EOFError, TypeError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, bytes)}

    def save(self) -> None:
        if not self.fresh or self.path is None:
            return
        import tempfile

        folder, name = os.path.split(self.path)
        try:
            fd, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as file:
                marshal.dump(self.used, file)
            os.replace(temporary, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
