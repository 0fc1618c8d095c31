"""Where a Python project's packaging metadata takes its dynamic fields from, as setup's inputs
(eyeful/runs.py ``setup_key``): an install records the version it read (`*.dist-info`), so a
change to the version's source must install again, or the tests that ask
``importlib.metadata.version`` read the version of an earlier tree.

Also setup.cfg's ``version = attr: ...`` or ``file: ...``, and the Python files setup.py names
(it reads the version from one: their top-level assignments); an ``attr``'s module that imports
the name from another (`from pkg._version import __version__`) takes that one's in too.

Read from pyproject.toml: setuptools' ``[tool.setuptools.dynamic]`` (``attr``: the assignment
of that name in the module's file, found at the top level or under ``src/``; ``file``: the
files), hatch's and pdm's ``version`` ``path``, and flit's version (the module named as the
project). For an ``attr``, only the module's top-level assignments count (the version may be built
from another name): the rest of the module is code, which an editable install does not copy.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath
from typing import Any

import pygit2

from eyeful.snapshot import blob_at
from eyeful.tomlcompat import tomllib


def metadata_sources(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, str]:
    """What the metadata's dynamic fields are read from: path (and ``#name`` for an attribute)
    -> its text or blob id. {} for a project without pyproject.toml or dynamic fields."""
    found = _setup_cfg(repo, tree) | _setup_py(repo, tree)
    project = _toml(repo, tree, "pyproject.toml")
    if project is None:
        return found
    dynamic = project.get("project", {}).get("dynamic", [])
    if not isinstance(dynamic, list) or not dynamic:
        return found
    tool = project.get("tool", {})
    setuptools = tool.get("setuptools", {}).get("dynamic", {}) if isinstance(tool, dict) else {}
    for spec in setuptools.values() if isinstance(setuptools, dict) else []:
        if not isinstance(spec, dict):
            continue
        if isinstance(attr := spec.get("attr"), str) and "." in attr:
            module, name = attr.rsplit(".", 1)
            found |= _assignments(repo, tree, module, name)
        files = spec.get("file")
        for path in [files] if isinstance(files, str) else files if isinstance(files, list) else []:
            if isinstance(path, str):
                found |= _blob(tree, path)
    for table in (tool.get("hatch", {}), tool.get("pdm", {})) if isinstance(tool, dict) else ():
        version = table.get("version", {}) if isinstance(table, dict) else {}
        if isinstance(version, dict) and isinstance(path := version.get("path"), str):
            found |= _blob(tree, path)
    name = project.get("project", {}).get("name")
    if (
        "version" in dynamic
        and "flit" in str(project.get("build-system", {}))
        and isinstance(name, str)
    ):
        found |= _assignments(repo, tree, name.replace("-", "_"), "__version__")
    return found


def _toml(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> dict[str, Any] | None:
    try:
        entry = tree[path]
        data = blob_at(repo, entry.id).data.decode("utf-8")
        parsed = tomllib.loads(data)
    except (KeyError, ValueError, AssertionError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _blob(tree: pygit2.Tree, path: str) -> dict[str, str]:
    try:
        return {path: str(tree[path.lstrip("./")].id)}
    except (KeyError, ValueError):
        return {}


def _assignments(
    repo: pygit2.Repository, tree: pygit2.Tree, module: str, name: str, depth: int = 0
) -> dict[str, str]:
    """What ``name`` is made of in ``module``'s file (``a/b/__init__.py`` or ``a/b.py``, at the
    top or under ``src/``): every assignment at the module's top level, as syntax (the version
    may be built from another: `__version__ = ".".join(map(str, version_info))`), and where the
    module imports ``name`` from another (`from pkg._version import __version__`: helper-83),
    that module's too; where the file does not parse, the lines that assign ``name``."""
    base = module.replace(".", "/")
    for root in ("", "src/"):
        for path in (f"{root}{base}/__init__.py", f"{root}{base}.py"):
            found = _file_assignments(repo, tree, path, name, depth)
            if found is not None:
                return found
    return {}


def _file_assignments(
    repo: pygit2.Repository, tree: pygit2.Tree, path: str, name: str, depth: int = 0,
    *, versions: bool = False,
) -> dict[str, str] | None:  # fmt: skip
    """:func:`_assignments` of the file ``path`` (None: no such file); ``versions``: only the
    assignments to a name that says version (a file setup.py names: a script it installs, say,
    holds other constants)."""
    assigns = re.compile(rb"^\s*" + re.escape(name.encode()) + rb"\s*(?::[^=]*)?=.*$", re.M)
    try:
        data = blob_at(repo, tree[path].id).data
    except (KeyError, ValueError, AssertionError):
        return None
    try:
        parsed = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        lines = b"\n".join(m.group(0).strip() for m in assigns.finditer(data))
        return {f"{path}#{name}": lines.decode("utf-8", "replace")}
    assigned = [
        node for node in _module_level(parsed)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        and (not versions or _says_version(node))
    ]  # fmt: skip
    found = {f"{path}#{name}": "\n".join(ast.dump(node) for node in assigned)}
    if depth >= 3:
        return found
    # (the names the assignments read: a module of the package imported by name counts only
    # where they read it, `__version__ = _version.VERSION`: helper-85)
    read = {n.id for node in assigned for n in ast.walk(node) if isinstance(n, ast.Name)}
    for node in _module_level(parsed):
        if not isinstance(node, ast.ImportFrom):
            continue
        # `from pkg._version import __version__` (`VERSION as __version__`, `*`), or a module
        # of a package (`from pkg import _version`, then `_version.VERSION`): helper-83, -84.
        module = _absolute(path, node)
        for alias in node.names:
            given = alias.asname or alias.name
            if given == name or alias.name == "*":
                wanted = alias.name if given == name else name
                found |= _assignments(repo, tree, module, wanted, depth + 1)
            elif given in read:  # (a module of the package, if it is one: its assignments)
                found |= _assignments(repo, tree, f"{module}.{alias.name}", "*", depth + 1)
    return found


_VERSIONISH = re.compile(r"v?\d+(\.\d+)+\S*")


def _says_version(node: ast.stmt) -> bool:
    """An assignment to a name that says version, or of a version's value (`v = "1.0"`, a
    tuple of numbers)."""
    if "version" in ast.dump(node).lower():
        return True
    value = getattr(node, "value", None)
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return _VERSIONISH.fullmatch(value.value) is not None
    return isinstance(value, ast.Tuple) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, int) for e in value.elts
    )


def _module_level(tree: ast.Module) -> list[ast.stmt]:
    """A module's statements that run at its import: its top level, and what `try`, `if` and
    `with` hold there (not functions' or classes' bodies)."""
    out: list[ast.stmt] = []
    todo: list[ast.stmt] = list(tree.body)
    while todo:
        node = todo.pop(0)
        out.append(node)
        if isinstance(node, (ast.Try, ast.If, ast.With)):
            for block in ("body", "orelse", "finalbody", "handlers"):
                for item in getattr(node, block, []) or []:
                    todo.extend(item.body if isinstance(item, ast.ExceptHandler) else [item])
    return out


def _absolute(path: str, node: ast.ImportFrom) -> str:
    """The module a `from ... import` in the file ``path`` names, as a dotted name from the
    root (`src/` aside)."""
    if not node.level:
        return node.module or ""
    parts = path.removeprefix("src/").split("/")[:-1]
    parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
    return ".".join([*parts, *([node.module] if node.module else [])])


def _setup_cfg(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, str]:
    """setup.cfg's ``[metadata] version = attr: pkg.__version__`` or ``file: VERSION``."""
    import configparser  # (off a passing review's path)

    try:
        text = blob_at(repo, tree["setup.cfg"].id).data.decode("utf-8", "replace")
        parser = configparser.ConfigParser(interpolation=None)
        parser.read_string(text)
        value = parser.get("metadata", "version", fallback="").strip()
    except (KeyError, ValueError, AssertionError, configparser.Error):
        return {}
    if value.startswith("attr:") and "." in value:
        module, name = value[len("attr:") :].strip().rsplit(".", 1)
        return _assignments(repo, tree, module, name)
    if value.startswith("file:"):
        found: dict[str, str] = {}
        for path in value[len("file:") :].split(","):
            found |= _blob(tree, path.strip())
        return found
    return {}


def _setup_py(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, str]:
    """The Python files setup.py names (`open("pkg/__init__.py")`, `os.path.join("pkg",
    "__init__.py")`): an install reads its version from them (helper-83); their top-level
    assignments."""
    try:
        parsed = ast.parse(blob_at(repo, tree["setup.py"].id).data)
    except (KeyError, ValueError, AssertionError, SyntaxError, RecursionError, MemoryError):
        return {}
    named: set[str] = set()
    for node in ast.walk(parsed):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            named.add(node.value)
        elif isinstance(node, ast.Call):
            parts = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if len(parts) > 1 and all(isinstance(p, str) for p in parts):
                named.add("/".join(str(p) for p in parts))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            named.add("/".join(_divided(node)))  # (pathlib: `Path(...) / "pkg" / "a.py"`)
    found: dict[str, str] = {}
    for path in sorted(named):
        path = path.removeprefix("./")
        if path.endswith(".py") and path != "setup.py":
            found |= _file_assignments(repo, tree, path, "__version__", versions=True) or {}
        elif path and not _PROSE.match(PurePosixPath(path).name) and "\n" not in path:
            # (`open("VERSION")`: what it holds is the version; a file, not a directory)
            found |= {k: v for k, v in _blob(tree, path).items() if _a_file(tree, path)}
    return found


def _a_file(tree: pygit2.Tree, path: str) -> bool:
    try:
        return tree[path.lstrip("./")].type_str == "blob"
    except (KeyError, ValueError):
        return False


_PROSE = re.compile(r"(?i)(readme|changes|changelog|history|news|authors|license|copying)\b")


def _divided(node: ast.BinOp) -> list[str]:
    """The string constants of a chain of `/` (a path built with pathlib), left to right."""
    parts: list[str] = []
    left: ast.expr = node
    while isinstance(left, ast.BinOp) and isinstance(left.op, ast.Div):
        right = left.right
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            parts.insert(0, right.value)
        left = left.left
    return parts
