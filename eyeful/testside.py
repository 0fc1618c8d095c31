"""The change's test side on the base's code: the tree every comparison runs as "the base".

A test that fails on the change and passes on the base shows a problem of the change's *code*
only when both runs ran the same tests. So the base side is the base's tree with every file of
the change's test side taken from the change (added, edited or deleted as the change has it):
test modules (``test_*.py``, ``*_test.py``, ``tests.py``, ``*_test.go``), ``conftest.py`` files,
and every file under a test directory, which is one of pytest's ``testpaths`` (pytest.ini,
tox.ini, setup.cfg, pyproject.toml on the change) or the directory of a collected test file
named as one (``tests/``, ``test/``, ``testing/``: a shared case list, fixtures' data) or holding
Python test modules only (never the repository's root, nor a package whose tests sit beside its
code), and a module outside those directories that only tests import and whose path names it as
the tests' (eyeful/testonly.py). A failure that also happens there is the tests' new demands on
code the change left as it was: pre-existing.
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Iterable
from pathlib import PurePosixPath

import pygit2

from eyeful.snapshot import regular_file, tree_at
from eyeful.testids import id_path
from eyeful.testonly import tests_only
from eyeful.tomlcompat import tomllib

__all__ = ["read_text", "side_paths", "side_tree"]

_TEST_MODULE = re.compile(r"conftest\.py|tests?\.py|test_.*\.py|.*_tests?\.py|.*_test\.go")
_PACKAGE_FILES = {"__init__.py", "conftest.py"}
_TEST_DIRS = frozenset({"tests", "test", "testing", "__tests__"})


def side_tree(
    repo: pygit2.Repository,
    base: str,
    head: str,
    collected: Iterable[str] = (),
    paths: list[str] | None = None,
    rootdir: str | None = "",
) -> str:
    """The base's tree with the change's test side (see the module's docstring); the base's own
    tree when the change's test side is the base's already. ``collected``: the repository paths
    of the test files the change's runs collected, whose directories may be test directories;
    ``rootdir``: pytest's, whose configuration names ``testpaths``; ``paths``: their
    :func:`side_paths` where the caller has them already."""
    if paths is None:
        paths = side_paths(repo, base, head, collected, rootdir)
    if not paths:
        return base
    head_tree = tree_at(repo, head)
    index = pygit2.Index()
    index.read_tree(tree_at(repo, base))
    for path in paths:
        entry = _entry(head_tree, path)
        if entry is None:
            if path in index:
                index.remove(path)
        elif entry.type_str == "blob":
            index.add(pygit2.IndexEntry(path, entry.id, entry.filemode))
    try:
        return str(index.write_tree(repo))
    except pygit2.GitError:  # a path that is a file on one side and a directory on the other
        return base


def side_paths(
    repo: pygit2.Repository,
    base: str,
    head: str,
    collected: Iterable[str] = (),
    rootdir: str | None = "",
) -> list[str]:
    """The paths the change added, edited or deleted on its test side."""
    diff = tree_at(repo, base).diff_to_tree(tree_at(repo, head))
    touched = sorted({p for d in diff.deltas for p in (d.old_file.path, d.new_file.path)})
    if not touched:
        return []
    head_tree = tree_at(repo, head)
    dirs = _testpaths(repo, head_tree, rootdir or "") | _test_dirs(repo, head_tree, collected)
    side = [p for p in touched if _on_test_side(p, dirs)]
    rest = [p for p in touched if p not in side]
    side += tests_only(repo, head_tree, tree_at(repo, base), rest, lambda p: _on_test_side(p, dirs))
    return sorted(side)


def _on_test_side(path: str, dirs: set[str]) -> bool:
    name = PurePosixPath(path).name
    return bool(_TEST_MODULE.fullmatch(name)) or any(path.startswith(d + "/") for d in dirs)


def _entry(tree: pygit2.Tree, path: str) -> pygit2.Object | None:
    try:
        return tree[path]
    except KeyError:
        return None


def read_text(repo: pygit2.Repository, tree: str, path: str) -> str | None:
    """A regular file of ``tree`` as text (UTF-8), or None."""
    data = regular_file(repo, tree, path)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _text(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> str | None:
    data = regular_file(repo, tree, path)
    return None if data is None else data.decode("utf-8", "replace")


def _testpaths(repo: pygit2.Repository, tree: pygit2.Tree, rootdir: str) -> set[str]:
    """pytest's ``testpaths`` on the change, in the configuration of its ``rootdir`` (a
    repository path), as plain directories of the repository (never the root)."""
    found: list[str] = []
    at = f"{rootdir}/" if rootdir else ""
    for name, section in (("pytest.ini", "pytest"), ("tox.ini", "pytest"),
                          ("setup.cfg", "tool:pytest")):  # fmt: skip
        text = _text(repo, tree, at + name)
        if text is None:
            continue
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        if parser.has_option(section, "testpaths"):
            found += parser.get(section, "testpaths").split()
    pyproject = _text(repo, tree, at + "pyproject.toml")
    if pyproject is not None:
        try:
            data = tomllib.loads(pyproject)
        except (tomllib.TOMLDecodeError, ValueError):
            data = {}
        options = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
        listed = options.get("testpaths", []) if isinstance(options, dict) else []
        found += [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []
    out = set()
    for path in found:
        clean = str(PurePosixPath(path.strip().strip("/")))
        if clean not in ("", ".") and ".." not in PurePosixPath(clean).parts and "*" not in clean:
            out.add(at + clean)
    return out


def _test_dirs(repo: pygit2.Repository, tree: pygit2.Tree, collected: Iterable[str]) -> set[str]:
    """The directories of collected test files named as test directories or holding nothing
    but tests."""
    out = set()
    for d in {str(PurePosixPath(id_path(t)).parent) for t in collected}:
        parts = PurePosixPath(d).parts
        named = [i for i, part in enumerate(parts) if part in _TEST_DIRS]
        if named:  # tests/unit/test_x.py: all of tests/
            out.add("/".join(parts[: named[0] + 1]))
        elif d not in ("", ".") and _only_tests(repo, tree, d):
            out.add(d)
    return out


def _only_tests(repo: pygit2.Repository, tree: pygit2.Tree, directory: str) -> bool:
    """Whether the Python files directly in ``directory`` are test modules (and packaging)."""
    entry = _entry(tree, directory)
    if entry is None or entry.type_str != "tree":
        return False
    names = [e.name or "" for e in tree_at(repo, entry.id) if e.type_str == "blob"]
    python = [n for n in names if n.endswith(".py") and n not in _PACKAGE_FILES]
    return bool(python) and all(_TEST_MODULE.fullmatch(n) for n in python)
