"""Repository modules only tests import: a test helper or case list outside the test directories
(``testing/cases.py`` that ``tests/test_x.py`` imports) is on the change's test side too.

Only tests importing a module does not make it a test's: most of a library's public modules are
imported by its tests alone, and a single-module project's code by nothing else. So a module counts
only when its path names it as the tests' (a directory or file called ``testing``, ``test_utils``,
``tests_support``, ``fixtures``, ...: ``_TESTISH``) and it does not sit among the project's own
modules unless its name starts with ``test_`` or ``tests_`` (``pkg/testing.py`` beside
``pkg/core.py`` is the package's public helper, as
``click.testing`` is; so is a subpackage ``pkg/testing/``, as ``numpy.testing``), a test-side file
imports it (directly or through other such modules, or names it in ``pytest_plugins``), and no
other Python file of the repository
imports it, on the change or on the base: an import the project's code makes (a package's ``from
.cases import *``) keeps it the project's code. Imports are read statically (``ast``), resolved
against the repository's root, ``src/`` and every directory above the importing file (liberally: a
name that may be the module is taken as an import of it, which only ever keeps a module off the
test side; so is a load by its name: `importlib.import_module("fixtures.users")` in the code
keeps `fixtures/users.py` the code's).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import PurePosixPath

import pygit2

from eyeful.snapshot import REGULAR_FILE_MODES, blob_at, blobs

__all__ = ["imported", "tests_only"]

_TESTISH = re.compile(
    r"_*(tests?|testing|testlib|testutils?"
    r"|(tests?|testing)_?(utils?|helpers?|support|lib|data|cases|tools|fixtures)|fixtures)",
    re.IGNORECASE,
)
_TESTS_PREFIX = re.compile(r"tests?_", re.IGNORECASE)
_MAX_SCANNED = 20_000  # Python files per tree: past that, nothing is taken as tests-only


def tests_only(
    repo: pygit2.Repository,
    head: pygit2.Tree,
    base: pygit2.Tree,
    candidates: list[str],
    on_side: Callable[[str], bool],
) -> list[str]:
    """Those of ``candidates`` (paths off the test side) that only tests import (module doc)."""
    if not any(_testish(p) for p in candidates if p.endswith(".py")):
        return []
    trees = [_python_files(repo, head), _python_files(repo, base)]
    if any(files is None for files in trees):
        return []
    head_files = trees[0] or {}
    code = [p for p in head_files if not on_side(p) and not _testish(p)]
    # No Python code but what is named as tests (and empty `__init__.py` files): a module named
    # so in a package that is not (`league/fixtures.py`, a match schedule) is the project, and
    # so is a package named so that exports something (testfixtures); a package named as the
    # tests' that exports nothing (`tests_support/` of a project in another language) holds
    # the tests' helpers.
    only_tests_named = not any(
        PurePosixPath(p).name != "__init__.py" or blob_at(repo, head_files[p]).size for p in code
    )
    named = _project_names(repo, head)
    helpers = {
        p
        for files in trees
        for p in files or {}
        if not on_side(p)
        and _testish(p)
        and (not only_tests_named or _helper_package(repo, p, files or {}))
        and not _beside_code(p, files or {}, on_side)
        and not _in_public_package(p, files or {})
        and not _the_project(p, named)
    }
    importers = [_importers(repo, files or {}, helpers) for files in trees]
    kept = set(helpers)
    while True:
        dropped = {
            h
            for h in kept
            for edges in importers
            if any(not on_side(i) and i not in kept for i in edges.get(h, ()))
        }
        if not dropped:
            break
        kept -= dropped
    # Reached from the tests on the change, through kept modules only.
    reached = {h for h in kept if any(on_side(i) for i in importers[0].get(h, ()))}
    while more := {h for h in kept - reached if importers[0].get(h, set()) & reached}:
        reached |= more
    return [p for p in candidates if p in reached]


def imported(
    repo: pygit2.Repository,
    head: pygit2.Tree,
    base: pygit2.Tree,
    paths: list[str],
    counts: Callable[[str], bool] = lambda importer: True,
) -> set[str]:
    """Those of ``paths`` (Python files) that another Python file (one ``counts``) imports, on
    the change or on the base (all of them where a tree has too many files to read)."""
    targets = {p for p in paths if p.endswith(".py")}
    if not targets:
        return set()
    out: set[str] = set()
    for tree in (head, base):
        files = _python_files(repo, tree)
        if files is None:
            return targets
        found = _importers(repo, files, targets)
        out |= {t for t, importers in found.items() if any(map(counts, importers))}
    return out


def _beside_code(path: str, files: dict[str, pygit2.Oid], on_side: Callable[[str], bool]) -> bool:
    """Whether a module sits among the project's own modules and no test's (``pkg/testing.py``
    beside ``pkg/core.py``, as ``click.testing`` is): the package's public helper, its code. A
    folder that holds test modules too (``pkg/test_core.py``) keeps its helpers the tests'."""
    if _TESTS_PREFIX.match(PurePosixPath(path).name):
        return False  # `tests_support.py`, `test_utils.py`: no public module is named so
    folder = PurePosixPath(path).parent
    beside = [
        other
        for other in files
        if other != path
        and PurePosixPath(other).parent == folder
        and PurePosixPath(other).name != "__init__.py"
    ]
    if any(on_side(other) for other in beside if PurePosixPath(other).name != "conftest.py"):
        return False  # a folder of test modules (a conftest.py alone is in most roots)
    return any(not _testish(other) for other in beside)


def _in_public_package(path: str, files: dict[str, pygit2.Oid]) -> bool:
    """Whether the part of the path that names tests is a subpackage of a package
    (``mylib/testing/`` beside ``mylib/__init__.py``: numpy.testing, trio.testing): the
    package's public helper, its code, whoever imports it."""
    parts = PurePosixPath(path).parts[:-1]
    for i, part in enumerate(parts):
        if i and _TESTISH.fullmatch(part) and "/".join(parts[:i]) + "/__init__.py" in files:
            return True
    return False


_SETUP_NAME = re.compile(
    rb"""^\s*name\s*=\s*["']?([\w.-]+)["']?\s*(?:#.*)?$"""  # setup.cfg, pyproject.toml
    rb"""|\bname\s*=\s*["']([\w.-]+)["']""",  # setup.py's setup(name="...")
    re.MULTILINE,
)


def _project_names(repo: pygit2.Repository, tree: pygit2.Tree) -> set[str]:
    """The distribution's name (pyproject.toml, setup.cfg, setup.py), as an import name."""
    out: set[str] = set()
    for name in ("pyproject.toml", "setup.cfg", "setup.py"):
        try:
            entry = tree[name]
        except KeyError:
            continue
        if entry.type_str == "blob":
            for found in _SETUP_NAME.finditer(blob_at(repo, entry.id).data):
                name = (found[1] or found[2]).decode().lower()
                # `testing.postgresql` is imported as `testing`: every form the name may take
                out |= {name.replace("-", "_").replace(".", "_"), re.split(r"[.-]", name)[0]}
    return out


def _the_project(path: str, names: set[str]) -> bool:
    """Whether ``path`` is in the project's own package (``testfixtures/`` of the distribution
    testfixtures, at the root or under ``src/``)."""
    parts = PurePosixPath(path).parts
    top = parts[1] if parts[0] == "src" and len(parts) > 1 else parts[0]
    return top.removesuffix(".py").lower() in names


def _helper_package(repo: pygit2.Repository, path: str, files: dict[str, pygit2.Oid]) -> bool:
    """Whether a folder on the path is named as the tests' (``tests_support/fixtures.py``) and
    exports nothing: its ``__init__.py`` is empty or absent (a library's, testfixtures', is
    its public face)."""
    parts = PurePosixPath(path).parts[:-1]
    for i, part in enumerate(parts):
        if _TESTISH.fullmatch(part):
            init = files.get("/".join(parts[: i + 1]) + "/__init__.py")
            return init is None or blob_at(repo, init).size == 0
    return False


def _testish(path: str) -> bool:
    parts = PurePosixPath(path).parts
    stem = PurePosixPath(path).stem
    names = [*parts[:-1], *([] if stem == "__init__" else [stem])]
    return any(_TESTISH.fullmatch(n) for n in names)


def _python_files(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, pygit2.Oid] | None:
    """Every regular ``.py`` file of the tree, or None past ``_MAX_SCANNED``."""
    out: dict[str, pygit2.Oid] = {}
    for path, entry in blobs(repo, tree):
        if path.endswith(".py") and entry.filemode in REGULAR_FILE_MODES:
            out[path] = entry.id
            if len(out) > _MAX_SCANNED:
                return None
    return out


def _importers(
    repo: pygit2.Repository, files: dict[str, pygit2.Oid], targets: set[str]
) -> dict[str, set[str]]:
    """For each target, the files that import it (statically, liberally resolved)."""
    if not targets:
        return {}
    words = {_word(t).encode() for t in targets}
    out: dict[str, set[str]] = {}
    for path, oid in files.items():
        data = blob_at(repo, oid).data
        if not any(w in data for w in words) and b"from ." not in data:
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        for target in _imported(path, tree, targets):
            if target != path:
                out.setdefault(target, set()).add(path)
    return out


def _word(path: str) -> str:
    """The name an import of ``path`` must spell (its package's, for an ``__init__.py``)."""
    p = PurePosixPath(path)
    return p.parent.name if p.stem == "__init__" else p.stem


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_LOADERS = frozenset({"import_module", "__import__"})


def _loader(node: ast.AST) -> ast.Call | None:
    """``node`` when it calls ``import_module`` or ``__import__`` (any receiver)."""
    if not isinstance(node, ast.Call) or not node.args:
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return node if name in _LOADERS else None


def _named(value: object) -> bool:
    """A string that may be a dotted module name (``fixtures.users``)."""
    return isinstance(value, str) and "." in value and _DOTTED.fullmatch(value) is not None


def _imported_by_name(node: ast.AST) -> str | None:
    """The module a call ``import_module("a.b")`` or ``__import__("a.b")`` names (a relative
    ``import_module(".users", package="fixtures")`` too), or None."""
    call = _loader(node)
    if call is None or not isinstance(call.args[0], ast.Constant):
        return None
    value = call.args[0].value
    if not isinstance(value, str):
        return None
    if value.startswith("."):
        package = next((k.value for k in call.keywords if k.arg == "package"), None)
        if not isinstance(package, ast.Constant) or not isinstance(package.value, str):
            return None
        value = package.value + value  # (one level: `..x` is rare enough to pass over)
    return value if _DOTTED.fullmatch(value) else None


def _imported(path: str, tree: ast.Module, targets: set[str]) -> set[str]:
    folder = PurePosixPath(path).parent
    roots = {"", "src", *(str(p) for p in [folder, *folder.parents] if str(p) != ".")}
    found: set[str] = set()
    # A file that loads modules by name (`import_module(name)` over a list of settings): every
    # dotted string in it may name one (helper-65). Read in the one walk, used after it.
    loads = False
    strings: list[str] = []
    for node in ast.walk(tree):
        modules: list[tuple[str, ...]] = []
        relative = False
        loads = loads or _loader(node) is not None
        if isinstance(node, ast.Constant) and _named(node.value):
            strings.append(str(node.value))
            continue
        if isinstance(node, ast.Import):
            modules = [tuple(a.name.split(".")) for a in node.names]
            bases = roots
        elif (plugins := _pytest_plugins(node)) is not None:
            modules = [tuple(name.split(".")) for name in plugins]  # pytest imports them
            bases = roots
        elif (named := _imported_by_name(node)) is not None:
            # `importlib.import_module("fixtures.users")`, `__import__(...)`: the file loads it
            # (helper-61); a string elsewhere (a script's output path, a nox session's
            # `-m tests_support.cases`) imports nothing.
            modules = [tuple(named.split("."))]
            bases = roots
        elif isinstance(node, ast.ImportFrom):
            parts = tuple(node.module.split(".")) if node.module else ()
            modules = [parts] + [(*parts, a.name) for a in node.names if a.name != "*"]
            if node.level:
                relative = True
                up = [folder, *folder.parents]
                if node.level - 1 >= len(up):
                    continue
                anchor = str(up[node.level - 1])
                bases = {"" if anchor == "." else anchor}
            else:
                bases = roots
        else:
            continue
        for module in modules:
            for base in bases:
                found |= _files_of(base, module, targets, relative)
    for name in strings if loads else []:
        for base in roots:
            found |= _files_of(base, tuple(name.split(".")), targets, False)
    return found


def _pytest_plugins(node: ast.AST) -> list[str] | None:
    """The modules a ``pytest_plugins = [...]`` assignment names (a conftest's), or None."""
    if not isinstance(node, (ast.Assign, ast.AnnAssign)):
        return None
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if not any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets):
        return None
    value = node.value
    items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def _files_of(base: str, module: tuple[str, ...], targets: set[str], relative: bool) -> set[str]:
    """The targets an import of ``module`` from ``base`` runs: the module and its packages."""
    out = set()
    for n in range(0 if relative else 1, len(module) + 1):
        stem = "/".join(p for p in (base, *module[:n]) if p)
        for path in (f"{stem}.py", f"{stem}/__init__.py") if stem else ("__init__.py",):
            if path in targets:
                out.add(path)
    return out
