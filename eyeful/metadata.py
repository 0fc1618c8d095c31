"""Where a Python project's packaging metadata takes its dynamic fields from, as setup's inputs
(eyeful/runs.py ``setup_key``): an install records the version it read (`*.dist-info`), so a
change to the version's source must install again, or the tests that ask
``importlib.metadata.version`` read the version of an earlier tree.

Read from pyproject.toml: setuptools' ``[tool.setuptools.dynamic]`` (``attr``: the assignment
of that name in the module's file, found at the top level or under ``src/``; ``file``: the
files), hatch's and pdm's ``version`` ``path``, and flit's version (the module named as the
project). For an ``attr``, only the module's top-level assignments count (the version may be built
from another name): the rest of the module is code, which an editable install does not copy.
"""

from __future__ import annotations

import ast
import re
from typing import Any

import pygit2

from eyeful.snapshot import blob_at
from eyeful.tomlcompat import tomllib


def metadata_sources(repo: pygit2.Repository, tree: pygit2.Tree) -> dict[str, str]:
    """What the metadata's dynamic fields are read from: path (and ``#name`` for an attribute)
    -> its text or blob id. {} for a project without pyproject.toml or dynamic fields."""
    project = _toml(repo, tree, "pyproject.toml")
    if project is None:
        return {}
    dynamic = project.get("project", {}).get("dynamic", [])
    if not isinstance(dynamic, list) or not dynamic:
        return {}
    tool = project.get("tool", {})
    found: dict[str, str] = {}
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
    repo: pygit2.Repository, tree: pygit2.Tree, module: str, name: str
) -> dict[str, str]:
    """What ``name`` is made of in ``module``'s file (``a/b/__init__.py`` or ``a/b.py``, at the
    top or under ``src/``): every assignment at the module's top level, as syntax (the version
    may be built from another: `__version__ = ".".join(map(str, version_info))`); where the
    file does not parse, the lines that assign ``name``."""
    base = module.replace(".", "/")
    assigns = re.compile(rb"^\s*" + re.escape(name.encode()) + rb"\s*(?::[^=]*)?=.*$", re.M)
    for root in ("", "src/"):
        for path in (f"{root}{base}/__init__.py", f"{root}{base}.py"):
            try:
                data = blob_at(repo, tree[path].id).data
            except (KeyError, ValueError, AssertionError):
                continue
            try:
                parsed = ast.parse(data)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                lines = b"\n".join(m.group(0).strip() for m in assigns.finditer(data))
                return {f"{path}#{name}": lines.decode("utf-8", "replace")}
            top = [
                ast.dump(node) for node in parsed.body
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            ]  # fmt: skip
            return {f"{path}#{name}": "\n".join(top)}
    return {}
