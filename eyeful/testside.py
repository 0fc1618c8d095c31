"""The change's test side on the base's code: the tree every comparison runs as "the base".

A test that fails on the change and passes on the base shows a problem of the change's *code*
only when both runs ran the same tests. So the base side is the base's tree with every file of
the change's test side taken from the change (added, edited or deleted as the change has it):
``conftest.py`` and Go's ``*_test.go`` files, a configuration file's pytest options that state
the tests' demands (eyeful/testconfig.py), Python test modules
(``test_*.py``, ``*_test.py``, ``tests.py``) the change's runs collected tests from, and every
file under a test directory: one
named as tests (``tests/``, ``test/``, ``unit_tests/``, ``testing/`` unless a ``tests/`` is below
it) that holds a collected test file or that is, or lies under, one of pytest's ``testpaths``
(pytest.ini, tox.ini, setup.cfg, pyproject.toml on the change); and a module outside those
directories that only tests import and whose path names it as the tests' (eyeful/testonly.py).
A failure that also happens there is the tests' new demands on code the change left as it was:
pre-existing. Whatever is not certainly the tests' stays the base's: code taken for tests would
run the change's code as the base's and hide its breaks (toolz's ``testpaths = ["toolz"]``, a
``stats/t_test.py``, data beside a test module).
"""

from __future__ import annotations

import ast
import fnmatch
import itertools
import posixpath
import re
import shlex
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from typing import NamedTuple, TypeVar, cast

import pygit2

from eyeful import gocode
from eyeful.hunks import docstrings
from eyeful.moved import shape
from eyeful.shellwords import simple_commands
from eyeful.snapshot import REGULAR_FILE_MODES, blob_at, blobs, regular_file, tree_at
from eyeful.testconfig import (
    CONFIG_FILES,
    overlaid,
    section_differs,
    tools_alone_differ,
)
from eyeful.testids import id_path
from eyeful.testonly import imported, tests_only
from eyeful.tomlcompat import tomllib

__all__ = [
    "collection_changed",
    "command_files",
    "config_kept",
    "data_of_tests",
    "decides_outcomes",
    "docstrings_only",
    "left_out_tests",
    "links_outside",
    "named_configs",
    "read_text",
    "renamed_files",
    "renamed_out_id",
    "side_paths",
    "side_tree",
    "tests_renamed_out",
]

_TEST_MODULE = re.compile(r"conftest\.py|tests?\.py|test_.*\.py|.*_tests?\.py|.*_test\.go")
# Directory names that say "tests" and nothing else: `ab_test/` or `test_plus/` may be packages.
_NAMED_DIR = re.compile(
    r"tests?|__tests__|testdata|(?:unit|integration|functional|e2e|system|"
    r"acceptance|regression|perf|smoke)[_-]tests?|tests?[_-]data"
)
_DELETED_TESTS = re.compile(r"test_.*\.py")  # named as pytest's default names test modules
_TESTS_OWN = frozenset({"conftest.py"})  # pytest's alone (pytest.ini: eyeful/testconfig.py)
_MAX_WALKED = 20_000  # entries of a testpaths directory read to tell tests from code


def side_tree(
    repo: pygit2.Repository,
    base: str,
    head: str,
    collected: Iterable[str] = (),
    paths: list[str] | None = None,
    rootdir: str | None = "",
    documented: Iterable[str] = (),
) -> str:
    """The base's tree with the change's test side (see the module's docstring); the base's own
    tree when the change's test side is the base's already. ``collected``: the repository paths
    of the test files the change's runs collected, whose directories may be test directories;
    ``rootdir``: pytest's, whose configuration names ``testpaths``; ``paths``: their
    :func:`side_paths` where the caller has them already; ``documented``: the Python modules
    the change's runs collected doctests from."""
    if paths is None:
        paths = side_paths(repo, base, head, collected, rootdir, documented)
    if not paths:
        return base
    head_tree = tree_at(repo, head)
    index = pygit2.Index()
    index.read_tree(tree_at(repo, base))
    for path in paths:
        entry = _entry(head_tree, path)
        config = _config(repo, base, head, path)
        if config is not None and entry is not None:  # its pytest section only
            blob = repo.create_blob(config.encode("utf-8"))
            index.add(pygit2.IndexEntry(path, blob, entry.filemode))
        elif entry is None:
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
    documented: Iterable[str] = (),
) -> list[str]:
    """The paths the change added, edited or deleted on its test side: with the files above, a
    module of ``documented`` (doctests collected from it) whose change is its docstrings alone
    (the doctests' side; with its code edited too, the file is the code)."""
    deltas = _deltas(repo, base, head)
    touched = sorted({p for d in deltas for p in (d.old, d.new)})
    if not touched:
        return []
    head_tree = tree_at(repo, head)
    modules, dotted = _test_modules(list(collected))
    dirs = _testpaths(repo, head_tree, rootdir or "") | _test_dirs(modules | dotted)
    deleted = {d.old for d in deltas if d.status == "D"}

    named = _python_files(repo, head_tree, rootdir or "")

    def on_side(path: str) -> bool:
        if path in deleted and _DELETED_TESTS.fullmatch(PurePosixPath(path).name):
            return True  # a test module the change deleted (or renamed away): gone on both
        return _on_test_side(path, dirs, modules, dotted, named)

    side = [p for p in touched if on_side(p)]
    # A Python file on the side by its name alone (not in a test directory): one another file
    # imports is code, or code and tests in one (`stats/ab_test.py` with a test written in it,
    # `geo/testdata/__init__.py`, a deleted `pkg/test_signal.py` the package imported).
    by_name = [
        p for p in side
        if p.endswith(".py") and PurePosixPath(p).name not in _TESTS_OWN
        and not any(p.startswith(d + "/") for d in dirs)
    ]  # fmt: skip
    if by_name:
        # Another test module by its name alone importing it (`from pkg.test_a import CASES`)
        # keeps it the tests'; code, or a test in a test directory, importing it does not.
        def counts(importer: str) -> bool:
            in_dirs = any(importer.startswith(d + "/") for d in dirs)
            return in_dirs or not _TEST_MODULE.fullmatch(PurePosixPath(importer).name)

        code = imported(repo, head_tree, tree_at(repo, base), by_name, counts)
        side = [p for p in side if p not in code]
    side += [p for p in touched if _config(repo, base, head, p) is not None]
    for path in sorted(set(documented) & set(touched) - set(side)):
        if docstrings_only(
            regular_file(repo, base, path), regular_file(repo, head, path)
        ) and not _docstrings_read(repo, head_tree, path):
            side.append(path)
    rest = [p for p in touched if p not in side]
    side += tests_only(repo, head_tree, tree_at(repo, base), rest, on_side)
    return sorted(side)


# What in a Python file (a conftest.py, a plugin) can decide which tests a run collects:
# pytest's collection hooks and variables, hooks that can change the options (`-k`, `-m`,
# `--ignore`) or load other plugins, and unittest's `load_tests` protocol.
_COLLECTS = re.compile(
    rb"pytest_(?:collect|ignore_collect|pycollect|generate_tests|make_collect_report|deselected"
    rb"|plugins|configure|load_initial_conftests|cmdline|addhooks|sessionstart)"
    rb"|collect_ignore|__test__|load_tests"
)
# A class deriving from a TestCase, outside the tests' files too (a library's public base of
# test classes: Django's): what it derives from decides whether its subclasses are tests.
_TESTCASE_BASE = re.compile(rb"^[ \t]*class[ \t]+\w+[ \t]*\([^)]*TestCase\b", re.MULTILINE)
# (`IsolatedAsyncioTestCase`, Django's `SimpleTestCase` and `TransactionTestCase`: helper-68)
# pytest's own files: a conftest.py can turn on a hook without naming one (`from x import *`).
_PLACES = frozenset({"__init__.py", "go.mod"})  # added or deleted: where tests are looked for
_ALWAYS = frozenset({"conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml"})


# What in a Python file can decide a collected test's outcome: pytest's hooks that run its
# call, write its report or its status, run the whole loop, or set it up (a skip there).
OUTCOME_HOOKS = (
    "pytest_runtest_makereport", "pytest_runtest_call", "pytest_pyfunc_call",
    "pytest_runtest_protocol", "pytest_runtest_setup", "pytest_report_teststatus",
    "pytest_runtest_logreport", "pytest_runtestloop",
)  # fmt: skip
"""The probe names the files implementing these too (its ``_OUTCOME_HOOKS``: the same list)."""
_OUTCOMES = re.compile("|".join(OUTCOME_HOOKS).encode())
# In a test helper's unittest.TestCase: the methods that run a test or record its outcome.
_RUNS_CASES = re.compile(
    rb"def\s+(?:run|debug|__call__|_callTestMethod|_callSetUp|_callTearDown|_callCleanup"
    rb"|addFailure|addError|addSkip|addExpectedFailure|addSubTest)\s*\(\s*self"
)
# In a conftest.py: what skips or expects failure for the tests below it (a fixture, a hook).
_SKIP_NAMES = frozenset({"skip", "skipif", "xfail", "importorskip", "add_marker"})
_SKIPS = re.compile(rb"\b(?:" + "|".join(sorted(_SKIP_NAMES)).encode() + rb")\b")


def _holds_tests(repo: pygit2.Repository, tree: str, path: str) -> bool:
    """Whether the directory of ``path`` is a test directory by its name, or holds a test
    module (named as pytest and unittest name them) in ``tree``."""
    folder = PurePosixPath(path).parent
    if _NAMED_DIR.fullmatch(folder.name):
        return True
    top = tree_at(repo, tree)
    entry = top if str(folder) == "." else _entry(top, str(folder))
    if entry is None or entry.type_str != "tree":
        return False
    return any(
        item.type_str == "blob" and _DELETED_TESTS.fullmatch(item.name or "")
        for item in tree_at(repo, entry.id)
    )


def links_outside(repo: pygit2.Repository, base: str, head: str) -> list[str]:
    """Symbolic links the change adds or points elsewhere whose target leads out of the tree
    (an absolute path, or ``..`` past its root): eyeful's worktrees lie elsewhere, so what they
    lead to there is not what the user's tree has. Each as ``path -> target``."""
    out = []
    head_tree = tree_at(repo, head)
    for delta in _deltas(repo, base, head):
        if delta.status == "D" or delta.mode != pygit2.enums.FileMode.LINK:
            continue
        entry = _entry(head_tree, delta.new)
        if entry is None:
            continue
        target = blob_at(repo, entry.id).data.decode("utf-8", "replace")
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(delta.new), target))
        if target.startswith("/") or joined == ".." or joined.startswith("../"):
            out.append(f"{delta.new} -> {target}")
    return out


def _of_the_tests(path: str) -> bool:
    """A file of the tests by its name (a conftest.py, a test module) or its directory's (a
    helper under `tests/`): the base runs the change's version of it. (A plugin in the code is
    the code's: each side runs its own.)"""
    parts = PurePosixPath(path).parts
    return bool(_TEST_MODULE.fullmatch(parts[-1])) or any(
        _NAMED_DIR.fullmatch(part) for part in parts[:-1]
    )


def decides_outcomes(
    repo: pygit2.Repository,
    base: str,
    head: str,
    hooked: list[str] | None = None,
    held: bool = True,
) -> str | None:
    """A file of the tests the change edits that can decide the outcome of tests it does not
    define: it holds (as the change has it) one of pytest's hooks that run a test, write its
    report or set it up, or it is a conftest.py the change adds skips or expected failures to.
    Both sides run the change's test side (the base runs the change's tests), so what such a
    file makes of a failure (a pass, a skip) is made alike on both: the runs are no evidence.
    ``hooked``: the files whose functions implemented such a hook in the change's run (the
    probe's ``outcome_hooks``), whatever their names; ``held``: the change's run skipped or
    expected the failure of a test (else a skip the change adds to a conftest held nothing
    back). None: no such file."""
    for delta in _deltas(repo, base, head):
        old, path = delta.old, delta.new
        ours = path.endswith(".py") and _of_the_tests(path)
        if not ours and (delta.status == "D" or path not in (hooked or ())):
            continue
        before, after = regular_file(repo, base, old), regular_file(repo, head, path)
        if path in (hooked or ()) and delta.status != "D" and _beyond_fixtures(before, after):
            return f"the change edits {path}, whose functions decide outcomes in the change's run"
        if not ours:
            continue
        hooks = sorted({m.decode() for m in _OUTCOMES.findall(after or b"")})
        if hooks and _beyond_fixtures(before, after):
            return f"the change edits {path}, which holds {hooks[0]} (it can decide an outcome)"
        if after and b"TestCase" in after and (method := _case_runner_edited(before, after)):
            return f"the change edits {path}, whose test case's {method} decides outcomes"
        if held and PurePosixPath(path).name == "conftest.py":
            # Only what the change adds: a skip it took away hides nothing on the change.
            had = Counter(_skip_statements(before))
            if any(count > had[one] for one, count in Counter(_skip_statements(after)).items()):
                return f"the change adds to what {path} skips or expects to fail"
    return None


def _case_runner_edited(before: bytes | None, after: bytes) -> str | None:
    """The first method that runs a test or records its outcome (``run``, ``_callTestMethod``,
    ``addFailure``...) of the file's TestCase classes, or of a class of the file one derives from
    (:func:`_case_runners`), that the change adds or edits, compared as syntax; a helper class's
    ``run`` (a fake thread's) is no test case's. By text where the file does not parse."""
    module = _parsed(after)
    if module is None:
        found = _RUNS_CASES.search(after)
        return None if found is None else found.group(0).split(b"(")[0].split()[-1].decode()
    old = _case_runners(_parsed(before))
    for key, body in _case_runners(module).items():
        if old.get(key) != body:
            return key.rsplit(".", 1)[-1]
    return None


def _case_runners(module: ast.Module | None) -> dict[str, str]:
    """The outcome-deciding methods of the file's TestCase classes and of every class of the file
    one of them derives from (a mixin's ``run``), by ``Class.method``, each as its syntax: a
    ``def``, or an assignment in the class's body (``run = _quiet``); and any assignment to such
    a method anywhere else (``unittest.TestCase.run = ...``)."""
    if module is None:
        return {}
    classes = {n.name: n for n in ast.walk(module) if isinstance(n, ast.ClassDef)}
    aliases = {"TestCase"} | {
        a.asname for n in ast.walk(module) if isinstance(n, ast.ImportFrom)
        for a in n.names if a.name == "TestCase" and a.asname
    }  # fmt: skip

    def bases(node: ast.ClassDef) -> set[str]:
        return {
            b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases
        }

    cases = {name for name, node in classes.items() if any(
        "TestCase" in b or b in aliases for b in bases(node))}  # fmt: skip
    grew = True
    while grew:  # a TestCase of the file's own TestCase classes too
        grew = False
        for name, node in classes.items():
            if name not in cases and bases(node) & cases:
                cases.add(name)
                grew = True
    pending = [base for name in cases for base in bases(classes[name]) if base in classes]
    involved = set(cases)
    while pending:  # the classes of the file they derive from: mixins, helpers' bases
        name = pending.pop()
        if name not in involved:
            involved.add(name)
            pending += [b for b in bases(classes[name]) if b in classes]
    found: dict[str, str] = {}
    for name in involved:
        for item in classes[name].body:
            named = _assigned_names(item)
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                named = [item.name]
            for method in named:
                if _RUNS_CASES.fullmatch(f"def {method}(self".encode()):
                    found[f"{name}.{method}"] = ast.dump(item)
    for assigned in ast.walk(module):  # `unittest.TestCase.run = ...`
        if isinstance(assigned, ast.Assign):
            for target in assigned.targets:
                if isinstance(target, ast.Attribute) and _RUNS_CASES.fullmatch(
                    f"def {target.attr}(self".encode()
                ):
                    found[f"{ast.unparse(target)}"] = ast.dump(assigned)
    return found


def _assigned_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _parsed(data: bytes | None) -> ast.Module | None:
    try:
        return ast.parse(data or b"")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _skip_statements(data: bytes | None) -> list[str]:
    """The statements (and decorators) of a conftest that skip or expect failure, each as its
    syntax (so a statement rewrapped, or a comment that says "skip", is the same); by line where
    the file does not parse."""
    module = _parsed(data)
    if module is None:
        return [line.strip().decode("utf-8", "replace") for line in (data or b"").splitlines()
                if _SKIPS.search(line)]  # fmt: skip
    found = []
    for node in ast.walk(module):
        parts: list[ast.AST] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            parts = list(node.decorator_list)
        elif isinstance(node, ast.stmt) and not hasattr(node, "body"):
            parts = [node]
        for part in parts:
            names = {n.id for n in ast.walk(part) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(part) if isinstance(n, ast.Attribute)}
            if names & _SKIP_NAMES:
                found.append(ast.dump(part))
    return found


def _beyond_fixtures(before: bytes | None, after: bytes | None) -> bool:
    """Whether a file that holds an outcome hook changed otherwise than in its fixtures and
    tests (each a top-level function, compared as syntax): a fixture the change adds beside a
    report hook (a screenshot on failure) changes no outcome; anything else may. True where a
    side does not parse."""
    sides = [_parsed(before), _parsed(after)]
    if sides[0] is None or sides[1] is None:
        return True

    def rest(module: ast.Module) -> Counter[str]:
        return Counter(ast.dump(node) for node in module.body if not _fixture_or_test(node))

    return rest(sides[0]) != rest(sides[1])


def _fixture_or_test(node: ast.stmt) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if node.name.startswith("test"):
        return True
    return any("fixture" in ast.dump(decorator) for decorator in node.decorator_list)


_TEST_MAIN = re.compile(rb"^func\s+TestMain\s*\(", re.M)  # it may set -test.run, or not call m.Run


def left_out_tests(
    repo: pygit2.Repository, tree: str, paths: list[str], command: str = ""
) -> str | None:
    """A test module of ``tree`` (named as pytest names them; under ``--doctest-modules``, in
    the test ``command`` or the configuration's ``addopts``, any Python module with a ``>>>``
    example too) in what a run's collection left out by a conftest's or a hook's word
    (``paths``: repository paths of directories and files, the probe's ``left_out``), named;
    None when none holds one: an untracked virtualenv, a ``setup.py`` a conftest leaves out."""
    top = tree_at(repo, tree)
    patterns = ["test_*.py", "*_test.py", *_python_files(repo, top, "")]
    words = command.split() + _option(repo, top, "", "addopts")
    doctests = "--doctest-modules" in words

    def named(name: str, oid: pygit2.Oid | None = None) -> bool:
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            return True
        if not doctests or not name.endswith(".py") or oid is None:
            return False
        return b">>>" in blob_at(repo, oid).data

    for path in paths:
        entry = _entry(top, path) if path and not path.startswith(("/", "..", "<")) else None
        if entry is None:
            continue
        if entry.type_str != "tree":
            if named(PurePosixPath(path).name, entry.id):
                return path
            continue
        pending, seen = [(path, tree_at(repo, entry.id))], 0
        while pending and seen <= _MAX_WALKED:
            folder, subtree = pending.pop()
            for item in subtree:
                seen += 1
                if item.type_str == "tree":
                    pending.append((f"{folder}/{item.name}", tree_at(repo, item.id)))
                elif named(item.name or "", item.id):
                    return f"{folder}/{item.name}"
    return None


class _Delta(NamedTuple):
    """One file the change adds, edits or deletes, as a tree diff gives it (renames unpaired)."""

    old: str
    new: str
    status: str
    mode: int


_T = TypeVar("_T")
_BY_TREES: dict[tuple[str, str, str, str], object] = {}
"""What was read of two trees, by what, repository and trees (content-addressed, so never
stale): a review asks the same diff for collection, outcomes, configuration, data and code,
and the same renames for collection and where a test went."""


def _by_trees(what: str, repo: pygit2.Repository, base: str, head: str,
              make: Callable[[], _T]) -> _T:  # fmt: skip
    key = (what, repo.path, base, head)
    if key not in _BY_TREES:
        if len(_BY_TREES) >= 32:
            _BY_TREES.clear()
        _BY_TREES[key] = make()
    return cast(_T, _BY_TREES[key])


def _deltas(repo: pygit2.Repository, base: str, head: str) -> tuple[_Delta, ...]:
    def make() -> tuple[_Delta, ...]:
        diff = tree_at(repo, base).diff_to_tree(tree_at(repo, head))
        return tuple(
            _Delta(d.old_file.path, d.new_file.path, d.status_char(), d.new_file.mode)
            for d in diff.deltas
        )

    return _by_trees("deltas", repo, base, head, make)


def bodies_edited_alone(repo: pygit2.Repository, base: str, head: str, side: set[str]) -> bool:
    """Whether every file the change touches beyond ``side`` (its tests and their configuration)
    is a Python file it edits in place (none added, removed, renamed, made executable or not,
    nor any other kind of file) inside its functions' bodies alone, their docstrings and the
    comments alike: what a module defines, and what its import runs but for functions, are the
    base's. Then the code the tests reach differs only in lines a tracer sees run, or not."""
    code = [d for d in _deltas(repo, base, head) if not {d.old, d.new} <= side]
    if not code:
        return False
    base_tree = tree_at(repo, base)
    for delta in code:
        if delta.status != "M" or delta.old != delta.new or not delta.new.endswith(".py"):
            return False
        if delta.old not in base_tree or base_tree[delta.old].filemode != delta.mode:
            return False
        sides = [_outline(regular_file(repo, tree, delta.new)) for tree in (base, head)]
        if sides[0] is None or sides[0] != sides[1]:
            return False  # a definition, a docstring or a comment (words the code may read)
    return True


def _outline(source: bytes | None) -> tuple[str, list[str], list[str], list[bool]] | None:
    """A Python file without its functions' bodies (what a module defines and its import runs,
    line numbers aside), its docstrings, its comments outside those bodies (`getcomments`
    reads the ones above a definition), in order, and which functions are generators (a
    `yield` in a body makes calling it run none of it: helper-74); None where it does not
    parse."""
    import io
    import tokenize  # (only where a regression is judged)

    if source is None:
        return None
    try:
        tree = ast.parse(source)
        words = [str(node.value) for node in docstrings(tree)]
        functions = [
            node for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]  # fmt: skip
        bodies = [(f.body[0].lineno, f.end_lineno or f.lineno) for f in functions]
        comments = [
            token.string
            for token in tokenize.tokenize(io.BytesIO(source).readline)
            if token.type == tokenize.COMMENT
            and not any(first <= token.start[0] <= last for first, last in bodies)
        ]
        generators = [_yields(function.body) for function in functions]
        for function in functions:
            function.body = []
        return ast.dump(tree), words, comments, generators
    except (SyntaxError, ValueError, RecursionError, MemoryError, tokenize.TokenError):
        return None


def _yields(body: list[ast.stmt]) -> bool:
    """Whether a function's body yields (its own, not a nested function's or class's)."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def tests_renamed_out(repo: pygit2.Repository, base: str, head: str) -> dict[str, str]:
    """Tests the change renamed in their test module to a name no runner collects (``test_mul``
    to ``_test_mul``, ``TestMul`` to ``MulChecks``: helper-79), their decorators, arguments and
    body alike: the test's id on the base -> its new name. The test is still there, not run."""

    def make() -> dict[str, str]:
        out: dict[str, str] = {}
        for delta in _deltas(repo, base, head):
            path = delta.new
            if delta.status != "M" or not path.endswith(".py") or _code_side(path, _TEST_FILES):
                continue
            old, new = regular_file(repo, base, path), regular_file(repo, head, path)
            if old is None or new is None:
                continue
            try:
                parsed = ast.parse(new)
                before, after = _tests_by_shape(ast.parse(old)), _tests_by_shape(parsed)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            inherited = _bases(parsed)
            for qualname, code in before.items():
                if qualname in after:
                    continue
                moved = [
                    q for q, s in after.items()
                    if s == code and not _collected_name(q) and q.split(".")[0] not in inherited
                ]  # fmt: skip
                if moved:
                    out[f"{path}::{qualname.replace('.', '::')}"] = moved[0]
        return out

    return dict(_by_trees("renamed-out", repo, base, head, make))


_TEST_FILES = ["test_*.py", "*_test.py"]


def _tests_by_shape(tree: ast.Module) -> dict[str, str]:
    """A module's functions and classes' methods (one level of classes), by qualified name:
    their decorators, arguments and body, names and positions aside."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = shape(node)
        elif isinstance(node, ast.ClassDef):
            out[node.name] = shape(node)
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{item.name}"] = shape(item)
    return out


def _bases(tree: ast.Module) -> set[str]:
    """The names a module's classes derive from (a test class made a base the collected
    classes share runs its tests under them: helper-84)."""
    return {
        base.id if isinstance(base, ast.Name) else base.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for base in node.bases
        if isinstance(base, (ast.Name, ast.Attribute))
    }


def _collected_name(qualname: str) -> bool:
    """Whether pytest's default names (and unittest's) collect ``qualname``."""
    *classes, name = qualname.split(".")
    if any(not c.startswith("Test") for c in classes):
        return False
    return name.startswith("test") or (not classes and name.startswith("Test"))


def renamed_out_id(test: str, renamed: dict[str, str]) -> bool:
    """Whether ``test`` (a pytest id, or unittest's dotted one) is one of ``renamed``'s."""
    plain = test.split("[", 1)[0]
    if plain in renamed:
        return True
    for key in renamed:
        path, _, qual = key.partition("::")
        dotted = path[: -len(".py")].replace("/", ".") + "." + qual.replace("::", ".")
        if plain == dotted or dotted.endswith("." + plain) or plain.endswith("." + dotted):
            return True
    return False


def renamed_files(repo: pygit2.Repository, base: str, head: str) -> dict[str, str]:
    """Files the change renamed, as git finds renames: new path -> the base's path."""

    def make() -> dict[str, str]:
        kinds = {d.status for d in _deltas(repo, base, head)}
        if not {"A", "D"} <= kinds:
            return {}  # a rename is a file deleted and one added: none, no search
        diff = tree_at(repo, base).diff_to_tree(tree_at(repo, head))
        diff.find_similar()
        return {
            d.new_file.path: d.old_file.path
            for d in diff.deltas
            if d.status_char() == "R" and d.new_file.path != d.old_file.path
        }

    return dict(_by_trees("renames", repo, base, head, make))


def named_configs(command: str) -> frozenset[str]:
    """The configuration files a test command names (pytest's ``-c FILE``, ``--config-file``),
    as repository paths: relative ones, normalised."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    pairs = itertools.pairwise(words)
    named = [after for word, after in pairs if word in ("-c", "--config-file")]
    named += [w.split("=", 1)[1] for w in words if w.startswith("--config-file=")]
    named += [w[2:] for w in words if w.startswith("-c") and len(w) > 2 and w[2] != "-"]
    return frozenset(
        posixpath.normpath(p) for p in named if p and not p.startswith(("/", "~", "$"))
    )


_RUNNERS_FILES = {
    "make": ("GNUmakefile", "makefile", "Makefile"),
    "gmake": ("GNUmakefile", "makefile", "Makefile"),
    "just": ("justfile", "Justfile", ".justfile"), "nox": ("noxfile.py",), "tox": ("tox.ini",),
    "invoke": ("tasks.py",), "inv": ("tasks.py",),
    # (task runners whose tasks pyproject.toml holds: poe's, pdm's, hatch's, taskipy's)
    "poe": ("pyproject.toml",), "pdm": ("pyproject.toml",), "task": ("pyproject.toml",),
    "hatch": ("pyproject.toml", "hatch.toml"),
}  # fmt: skip
"""The files a task runner reads when the command names none (`make test`: the Makefile)."""
_WRAPPERS = frozenset({"uv", "poetry", "pipenv", "pdm", "hatch", "rye"})
"""Those that run another command after `run` (`uv run pytest`: pytest's words count too)."""
_MAX_FOLLOWED = 32  # files a command names that are read for the files they name in turn
_MAX_FOLLOWED_BYTES = 64 * 1024


def command_files(command: str, read: Callable[[str], str | None] | None = None) -> frozenset[str]:
    """The repository's files a test command may run or read for which tests run, as paths
    from the root: each word that may name a file (`sh run_tests.sh`, `./scripts/test`,
    `make -f ci.mk`, after a `cd ci`), a module it runs (`python -m tools.runtests`), a task
    runner's own file (`make test`: the Makefile; nox's noxfile.py; `poe test`:
    pyproject.toml). An edit to one may narrow the suite (helper-79: `pytest tests` made
    `pytest tests/unit`), which only the base's run shows. With ``read`` (a file's text, or
    None), the files those files name in turn (a script's `. ci/vars.sh`, a Makefile's
    `include`: helper-81), a few levels down."""
    found = set(_words_files(command, ""))
    pending = sorted(found)
    followed = 0
    while read is not None and pending and followed < _MAX_FOLLOWED:
        path = pending.pop(0)
        text = read(path)
        if text is None or len(text) > _MAX_FOLLOWED_BYTES or path.endswith(".py"):
            continue
        followed += 1
        here = posixpath.dirname(path)
        for named in _words_files(text, "") | _words_files(text, here):
            if named not in found:
                found.add(named)
                pending.append(named)
    return frozenset(found)


def _words_files(text: str, cwd: str) -> set[str]:
    """:func:`command_files` of ``text`` alone, its words resolved from ``cwd`` (a path from
    the root; a `cd` moves it)."""
    found: set[str] = set()
    for words in simple_commands(text, parentheses=True):
        if len(words) == 2 and words[0] in ("cd", "pushd"):
            cwd = posixpath.normpath(posixpath.join(cwd, words[1]))
        else:
            found |= {posixpath.join(cwd, p) for p in _files_of(words)}
    paths = {posixpath.normpath(p) for p in found if p and not any(c in p for c in "*?[$`~")}
    return {p for p in paths if not p.startswith(("/", "..")) and p != "."}


def _files_of(words: list[str]) -> set[str]:
    """:func:`command_files` of one simple command, from where it runs."""
    found: set[str] = set()
    words = [w for w in words if w not in ("env", "exec", "time", "nice", "command")]
    while words and "=" in words[0] and not words[0].startswith("-"):
        words = words[1:]  # (`VAR=value`)
    runner = words[0] if words else ""
    name = PurePosixPath(runner).name
    if name in _WRAPPERS and len(words) > 2 and words[1] == "run":
        found |= _files_of(words[2:])
    where = ""
    for word, after in itertools.pairwise([*words, ""]):
        if word in ("-C", "--directory") and name in ("make", "gmake", "just"):
            where = after
        elif word.startswith("--directory="):
            where = word.split("=", 1)[1]
    if name in _RUNNERS_FILES and not any(w in ("-f", "--file", "--makefile") for w in words):
        found.update(posixpath.join(where, f) for f in _RUNNERS_FILES[name])
    for word, after in itertools.pairwise([*words, ""]):
        if word == "-m" and re.fullmatch(r"[A-Za-z_][\w.]*", after):
            stem = after.replace(".", "/")
            found.update({f"{stem}.py", f"{stem}/__main__.py"})
        elif word.startswith("-"):
            found.add(word.split("=", 1)[1] if "=" in word else "")
        elif "=" not in word:
            found.add(posixpath.join(where, word) if where and word != runner else word)
    return found


def collection_changed(
    repo: pygit2.Repository, base: str, head: str, configs: frozenset[str] = frozenset()
) -> str | None:
    """A file the change added, edited or deleted that can decide which tests a run collects
    (a conftest.py, pytest.ini, a file the test command names as its configuration
    (``configs``, `-c ci.ini`), a shared file's pytest section, a Python file with a
    collection hook, `pytest_plugins` or `load_tests` on either side), named in the reason;
    None when there is none: then the change's tests are the base's and those it added, with
    the code's own parametrizations."""
    patterns = ["test_*.py", "*_test.py", *_python_files(repo, tree_at(repo, base), "")]
    for delta in _deltas(repo, base, head):
        old, path = delta.old, delta.new
        name = PurePosixPath(path).name
        if name in _ALWAYS or path in configs or old in configs:
            return f"the change edits {path}"
        if (
            delta.status in "AD"
            and name in _PLACES
            and (
                name == "go.mod" or _holds_tests(repo, base if delta.status == "D" else head, path)
            )
        ):
            # A package of tests made a namespace package (unittest's discovery skips it), or a
            # Go module nested in a package (`./...` no longer enters it): its tests are gone.
            return f"the change {'adds' if delta.status == 'A' else 'deletes'} {path}"
        if name == "go.work":
            return f"the change edits {path}"
        if name in CONFIG_FILES and section_differs(
            name, read_text(repo, base, old), read_text(repo, head, path)
        ):
            return f"the change edits the pytest section of {path}"
        if name.endswith("_test.go"):
            tags = [_go_constraints(repo, tree, p) for tree, p in ((base, old), (head, path))]
            if tags[0] != tags[1]:
                return f"the change edits the build constraints of {path}"
            sides = [regular_file(repo, base, old), regular_file(repo, head, path)]
            if any(_TEST_MAIN.search(data) for data in sides if data is not None):
                return f"the change edits {path}, whose TestMain decides which tests run"
            continue
        if not name.endswith(".py"):
            continue
        sides = [regular_file(repo, base, old), regular_file(repo, head, path)]
        if any(_COLLECTS.search(data) for data in sides if data is not None):
            return f"the change edits {path}, which can decide which tests are collected"
        if _code_side(path, patterns) and any(
            _TESTCASE_BASE.search(data) for data in sides if data is not None
        ):
            # helper-66: the code's base of test classes, no longer a TestCase: neither runner
            # collects them, and says nothing. (A test file's edits are the tests' own, on both
            # sides.)
            return f"the change edits {path}, which defines a TestCase that tests may derive from"

    def collected(name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in patterns)

    for new, old in renamed_files(repo, base, head).items():
        was, now = PurePosixPath(old), PurePosixPath(new)
        if collected(was.name) and (was.parent != now.parent or not collected(now.name)):
            return (
                f"the change moves the test module {old} to {new}, where pytest may not collect it"
            )
    renamed_out = tests_renamed_out(repo, base, head)
    if renamed_out:
        test, name = next(iter(renamed_out.items()))
        return f"the change renames the test {test} to {name}, which is not collected"
    return None


def _code_side(path: str, patterns: list[str]) -> bool:
    """Whether ``path`` is neither a test module by its name nor in a directory named as tests."""
    parts = PurePosixPath(path).parts
    if any(part in ("tests", "test", "testing") for part in parts[:-1]):
        return False
    return not any(fnmatch.fnmatchcase(parts[-1], p) for p in patterns)


_GO_CONSTRAINT = re.compile(rb"^//(?:go:build |\s*\+build ).*$", re.MULTILINE)


def _go_constraints(repo: pygit2.Repository, tree: str, path: str) -> list[bytes] | None:
    """A Go file's build constraints (``//go:build``, ``// +build``); None where it is absent."""
    data = regular_file(repo, tree, path)
    return None if data is None else _GO_CONSTRAINT.findall(data.split(b"\npackage ", 1)[0])


def _examples_alone(old: str, new: str) -> bool:
    """Whether two docstrings differ in their examples alone: each holds one, and their prose
    (what doctest's parser leaves between the examples) is the same."""
    if ">>>" not in old or ">>>" not in new:
        return False
    import doctest  # off the path of a review nothing failed in (it brings unittest and pdb)

    parser = doctest.DocTestParser()
    try:
        prose = [[p for p in parser.parse(doc) if isinstance(p, str)] for doc in (old, new)]
    except ValueError:  # an example doctest cannot read: no example to tell apart
        return False
    return [p.strip() for p in prose[0] if p.strip()] == [p.strip() for p in prose[1] if p.strip()]


def docstrings_only(base: bytes | None, head: bytes | None) -> bool:
    """Whether two versions of a Python module differ in their docstrings' examples alone (a
    module's, a class's, a function's; comments and layout aside): both parse, are alike without
    their docstrings, and each docstring that differs holds an example (``>>>``) on both sides.
    A docstring without one is no doctest: it is prose, help text, a route a decorator reads."""
    if base is None or head is None:
        return False
    try:
        old, new = ast.parse(base), ast.parse(head)
        pairs = [(str(a.value), str(b.value))
                 for a, b in zip(docstrings(old), docstrings(new), strict=True)]  # fmt: skip
        if any(a != b and not _examples_alone(a, b) for a, b in pairs):
            return False
        return _code(base) == _code(head)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


_READS_DOCS = re.compile(
    rb"__doc__|getdoc|docopt|pydoc|\bhelp\("
    # Libraries that read the docstrings of what they are given: a command's help, a model's
    # schema, a grammar, an endpoint's description.
    rb"|^\s*(?:import|from)\s+(?:click|typer|pydantic|ply|fire|argh|plac|clize|fastapi|cmd|"
    rb"cmd2|invoke|tyro|jsonargparse|defopt|cyclopts|docstring_parser|flask_restx|flasgger|"
    rb"apispec|graphene|strawberry|marshmallow|sqlalchemy)\b",
    re.MULTILINE,
)
_MAX_READ = 20_000  # Python files looked through for a read of docstrings


_READS_TEXT = re.compile(rb"\b(?:getsource|getsourcelines|getcomments|findsource|linecache)\b")


def _code_reads(
    patterns: list[re.Pattern[bytes]], repo: pygit2.Repository, tree: pygit2.Tree
) -> bool:
    """Whether any Python file of the code (not named as a test module) reads what one of
    ``patterns`` finds (the tree walked once): docstrings as data (``__doc__``,
    ``inspect.getdoc``, docopt, ``help()``, a library that does), or its own source
    (``inspect.getcomments``, ``linecache``): then an edit to them may change what the code
    does (a route a decorator reads, a command's help, a priority written in a comment)."""
    for seen, (name, entry) in enumerate(blobs(repo, tree)):
        if seen > _MAX_READ:
            return True
        if not name.endswith(".py") or entry.filemode not in REGULAR_FILE_MODES:
            continue
        if _TEST_MODULE.fullmatch(PurePosixPath(name).name):
            continue
        data = blob_at(repo, entry.id).data
        if any(pattern.search(data) for pattern in patterns):
            return True
    return False


def _docstrings_read(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> bool:
    """Whether code may read ``path``'s docstrings as data (``__doc__``, ``inspect.getdoc``,
    docopt's usage, ``help()``): the module itself, or a Python file that names it, does. Then
    its docstrings are the code's too."""
    stem = PurePosixPath(path).stem.encode()
    for seen, (name, entry) in enumerate(blobs(repo, tree)):
        if seen > _MAX_READ:
            return True
        if not name.endswith(".py") or entry.filemode not in REGULAR_FILE_MODES:
            continue
        data = blob_at(repo, entry.id).data
        if (name == path or stem in data) and _READS_DOCS.search(data):
            return True
    return False


def code_unchanged(repo: pygit2.Repository, base: str, head: str, side: set[str]) -> str | None:
    """Why no failure the change causes can be about what its code does, or None: it edits none
    of the code (only files of ``side``, its tests and their configuration), or only the code's
    comments, docstrings and layout (each Python file it edits parses to the base's syntax,
    docstrings aside). A failure then is about how the code is written: its text, size, line
    numbers, docstrings."""
    touched = {p for d in _deltas(repo, base, head) for p in (d.old, d.new)}
    configured = {
        p for p in touched - side
        if _configures(p, read_text(repo, base, p), read_text(repo, head, p))
    }  # fmt: skip
    code = sorted(touched - side - configured)
    if not touched:
        return None
    if not code:
        return "the change edits none of the code, only its tests and their configuration"
    head_tree, base_tree = tree_at(repo, head), tree_at(repo, base)
    moved = _go_moved(repo, base, head)
    code = [p for p in code if p not in moved.values()]  # (each with the file it became)
    documented = False  # a docstring differs
    for path in code:
        was = moved.get(path, path)
        old, new = regular_file(repo, base, was), regular_file(repo, head, path)
        if not path.endswith((".py", ".go")) or old is None or new is None:
            return None
        if base_tree[was].filemode != head_tree[path].filemode:
            return None  # made executable, or not: what runs it sees that
        if path.endswith(".go"):
            # (helper-67: a comment of Go code; what the go tool reads in one stays)
            said = [gocode.without_comments(text) for text in (old, new)]
            if said[0] is None or said[0] != said[1] or _go_embeds(repo, head, path):
                return None
            if was != path and _go_embeds(repo, base, was):
                return None
            continue
        try:
            sides = ast.parse(old), ast.parse(new)
            as_written = [ast.dump(tree) for tree in sides]
            if _syntax(sides[0]) != _syntax(sides[1]):
                return None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        documented = documented or as_written[0] != as_written[1]
    # The code reads its own source (a comment, a line: its layout is code), or, where a
    # docstring differs, docstrings (a route, help text: they are code too).
    if _code_reads([_READS_TEXT, *([_READS_DOCS] if documented else [])], repo, head_tree):
        return None
    return (
        "the change edits only comments, docstrings and layout of the code (it parses to the "
        "base's syntax, docstrings aside; Go's, its tokens but comments)"
    )


_GOOS = frozenset({
    "aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js", "linux",
    "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos",
})  # fmt: skip
_GOARCH = frozenset({
    "386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips", "mipsle",
    "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le", "riscv",
    "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm",
})  # fmt: skip


def _go_moved(repo: pygit2.Repository, base: str, head: str) -> dict[str, str]:
    """Go files of the code the change renamed within their directory, by their new path:
    where neither name decides whether the go tool builds the file (`_test`, `_linux`,
    `_amd64`, a leading `_` or `.`), a file's name in its package is no behaviour, only what
    `runtime.Caller` and a log's `Lshortfile` say (helper-80)."""
    return {
        new: old
        for new, old in renamed_files(repo, base, head).items()
        if new.endswith(".go")
        and old.endswith(".go")
        and posixpath.dirname(new) == posixpath.dirname(old)
        and _plain_go_name(new)
        and _plain_go_name(old)
        and not _go_initializes(regular_file(repo, base, old))
    }


_GO_INITS = re.compile(rb"^(?:func\s+init\s*\(|var\b)", re.MULTILINE)


def _go_initializes(data: bytes | None) -> bool:
    """Whether a Go file has an ``init`` function or package-level variables: the go tool
    hands a package's files to the compiler sorted by name, and initialization follows that
    order, so renaming such a file may change what the program does (helper-81: registrations
    in ``init``)."""
    return data is None or _GO_INITS.search(data) is not None


def _plain_go_name(path: str) -> bool:
    name = PurePosixPath(path).name
    if name.startswith(("_", ".")) or name.endswith("_test.go"):
        return False
    parts = name[: -len(".go")].split("_")[1:]
    return not (parts[-1:] and (parts[-1] in _GOOS or parts[-1] in _GOARCH))


def _configures(path: str, base: str | None, head: str | None) -> bool:
    """Whether ``path`` differs only where pytest or developers' tools read it: the tests'
    configuration (eyeful/testconfig.py). Below the repository's root a file may be the code's
    data (a template it ships: helper-77, helper-81): there only an edit of its pytest section
    alone counts, never one added or removed, nor other tools' settings."""
    name = PurePosixPath(path).name
    if "/" in path and (base is None or head is None):
        return False
    return tools_alone_differ(name, base, head, tools="/" not in path)


def _go_embeds(repo: pygit2.Repository, tree: str, path: str) -> bool:
    """Whether the program may hold ``path``'s text as data: a Go file of its directory embeds
    files (`//go:embed`: helper-71), or one of a directory above it embeds a pattern that takes
    it in (`//go:embed examples`, `all:skeleton`, `*`: helper-72; not a `VERSION` beside it:
    helper-73)."""
    root = tree_at(repo, tree)
    for folder in PurePosixPath(path).parents:
        try:
            entries = root if str(folder) == "." else tree_at(repo, root[str(folder)].id)
        except KeyError:
            continue
        below = PurePosixPath(path).relative_to(folder)
        for entry in entries:
            if not (entry.name or "").endswith(".go") or entry.type_str != "blob":
                continue
            data = blob_at(repo, entry.id).data
            if b"//go:embed" not in data:
                continue
            if below.parent == PurePosixPath("."):
                return True  # (the package's own directory)
            for pattern in _GO_EMBED.findall(data.decode("utf-8", "replace")):
                if _embeds(pattern, below):
                    return True
    return False


_GO_EMBED = re.compile(r"^//go:embed[ \t]+(.+)$", re.MULTILINE)


def _embeds(patterns: str, below: PurePosixPath) -> bool:
    """Whether one of a `//go:embed` line's patterns takes in ``below`` (a path from the
    embedding file's directory): the file, or a directory above it, matching."""
    try:
        words = shlex.split(patterns.replace("`", '"'), comments=False)
    except ValueError:
        return True  # (not read: taken as taking it in)
    for pattern in words:
        pattern = pattern.removeprefix("all:").rstrip("/")
        whole = [below, *list(below.parents)[:-1]]  # the file, then its directories
        if any(fnmatch.fnmatchcase(str(part), pattern) for part in whole):
            return True
    return False


def _syntax(tree: ast.Module) -> str:
    """A module's syntax tree (taken apart) without its docstrings (a module's, a class's, a
    function's) or where anything is: what runs."""
    docs = {id(doc) for doc in docstrings(tree)}
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and id(first.value) in docs:
            node.body = body[1:]  # type: ignore[attr-defined,index]
    return ast.dump(tree)


def _code(source: bytes) -> str:
    tree = ast.parse(source)
    for doc in docstrings(tree):
        doc.value = ""
    return ast.dump(tree)


def _on_test_side(
    path: str, dirs: set[str], modules: set[str], dotted: set[str], named: list[str]
) -> bool:
    """A conftest.py or Go test file anywhere, and what a ``testdata`` directory holds (the go
    tool's rule); any file under a test directory; a file the change's runs collected tests from
    (``modules``: pytest's ids name it) named as a test module, by default or by the project's
    ``python_files`` (``named``: `check_*.py`), or not a Python file (a doctest's text); a Python
    file named as a test module that a dotted id (unittest's, from its start directory) may
    name (``dotted``), or, where the runs collected nothing, by its name alone. pytest also
    collects ``stats/t_test.py``, a module of code that holds no test, and a module of code
    named on its command line for the tests written in it; a dotted id's candidates include its
    package's ``calc.py``."""
    pure = PurePosixPath(path)
    name = pure.name
    if name in _TESTS_OWN or name.endswith("_test.go") or "testdata" in pure.parts[:-1]:
        return True
    if any(path.startswith(d + "/") for d in dirs):
        return True
    if path in modules and (
        not name.endswith(".py") or any(fnmatch.fnmatchcase(name, p) for p in named)
    ):
        return True
    if not _TEST_MODULE.fullmatch(name):
        return False
    if path in modules:
        return True
    if not modules and not dotted:
        return True
    return any(path == c or path.endswith("/" + c) for c in dotted)


def _test_modules(collected: list[str]) -> tuple[set[str], set[str]]:
    """The files the collected ids name: a path id's file (pytest's); and for a dotted id
    (unittest's ``pkg.test_mod.TestCase.test_x``, from its start directory) each module path it
    may be."""
    paths: set[str] = set()
    dotted: set[str] = set()
    for test in collected:
        path = id_path(test)
        if "/" not in path and not path.endswith(".py") and "::" not in test:
            parts = path.split(".")
            dotted |= {"/".join(parts[:n]) + ".py" for n in range(1, len(parts) + 1)}
        else:
            paths.add(path)
    return paths, dotted


def data_of_tests(
    repo: pygit2.Repository, base: str, head: str, side: list[str]
) -> dict[str, set[str]]:
    """The files the change edits that are neither Python nor on the tests' side (``side``) nor
    in a package of the code, whose name the tests' Python files hold and no other Python file
    does (a table of cases a test reads): each with the files of the tests that name it and
    import the code (a test of the file alone, an asset's checksum, is the data's). {}
    where the tree is too big to read (:data:`_MAX_WALKED` files)."""
    head_tree = tree_at(repo, head)
    data = {
        PurePosixPath(d.new).name.encode(): d.new
        for d in _deltas(repo, base, head)
        if not d.new.endswith(".py") and d.new not in side and d.status != "D"
        and not _in_a_package(head_tree, d.new)
    }  # fmt: skip
    if not data:
        return {}
    by_tests: dict[str, set[str]] = {}
    by_code: set[str] = set()
    for count, (path, entry) in enumerate(blobs(repo, tree_at(repo, head))):
        if count > _MAX_WALKED:
            return {}
        if not path.endswith(".py") or entry.filemode not in REGULAR_FILE_MODES:
            continue
        text = blob_at(repo, entry.id).data
        for name, changed in data.items():
            if name in text:
                if _of_the_tests(path):
                    by_tests.setdefault(changed, set()).add(path)
                else:
                    by_code.add(changed)
    # A test of the file alone (an asset's checksum) imports none of the code: the data's.
    running = {
        path for files in by_tests.values() for path in files
        if imports_the_code(repo, head, path)
    }  # fmt: skip
    return {
        path: files & running for path, files in by_tests.items()
        if path not in by_code and files & running
    }  # fmt: skip


def imports_the_code(repo: pygit2.Repository, tree: str, path: str) -> bool:
    """Whether the Python file ``path`` of ``tree`` imports a module of the repository's code
    (a top-level package or module, or one under ``src/``, that is not the tests'): a test that
    runs the code, not one that reads files alone (an asset's checksum)."""
    data = regular_file(repo, tree, path)
    try:
        parsed = ast.parse(data or b"")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True  # not known: as if it did
    names: set[str] = set()
    for node in ast.walk(parsed):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    root = tree_at(repo, tree)
    for name in names - {"tests", "test", "conftest"}:
        for at in (name, f"src/{name}"):
            for candidate in (f"{at}.py", f"{at}/__init__.py", at):
                if _entry(root, candidate) is not None and not _NAMED_DIR.fullmatch(name):
                    return True
    return False


def _in_a_package(tree: pygit2.Tree, path: str) -> bool:
    """Whether ``path`` lies in a package of the code (a directory with an ``__init__.py``, not
    named as tests): its data, which the code reads by names its callers give."""
    parents = PurePosixPath(path).parents
    return any(
        str(parent) != "." and not _NAMED_DIR.fullmatch(parent.name)
        and _entry(tree, f"{parent}/__init__.py") is not None
        for parent in parents
    )  # fmt: skip


def config_kept(repo: pygit2.Repository, base: str, head: str, side: list[str]) -> str | None:
    """A configuration file whose pytest section the change edits and the base side did not
    take (``side``: what it took, :func:`side_paths`): the base ran with its own options there
    (testpaths, plugins, warning filters alike). None: the sections are alike, or shared."""
    for delta in _deltas(repo, base, head):
        old, path = delta.old, delta.new
        name = PurePosixPath(path).name
        if (
            name in CONFIG_FILES
            and path not in side
            and section_differs(name, read_text(repo, base, old), read_text(repo, head, path))
        ):
            return path
    return None


def _config(repo: pygit2.Repository, base: str, head: str, path: str) -> str | None:
    """A shared configuration file's base text with the change's pytest section
    (eyeful/testconfig.py), or None."""
    name = PurePosixPath(path).name
    if name not in CONFIG_FILES:
        return None
    return overlaid(name, read_text(repo, base, path), read_text(repo, head, path))


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
    at = f"{rootdir}/" if rootdir else ""
    out = set()
    for path in _option(repo, tree, rootdir, "testpaths"):
        clean = str(PurePosixPath(path.strip().strip("/")))
        if clean not in ("", ".") and ".." not in PurePosixPath(clean).parts and "*" not in clean:
            out |= _tests_under(repo, tree, at + clean)
    return out


def _python_files(repo: pygit2.Repository, tree: pygit2.Tree, rootdir: str) -> list[str]:
    """pytest's ``python_files`` on the change, but for a pattern any module matches (``*.py``:
    it names no module as the tests')."""
    return [p for p in _option(repo, tree, rootdir, "python_files") if p.strip("*.") != "py"]


def _option(repo: pygit2.Repository, tree: pygit2.Tree, rootdir: str, key: str) -> list[str]:
    """A pytest option of the configuration at ``rootdir`` that lists words (pytest.ini,
    tox.ini, setup.cfg, pytest.toml, pyproject.toml)."""
    found: list[str] = []
    at = f"{rootdir}/" if rootdir else ""
    for name, section in (("pytest.ini", "pytest"), (".pytest.ini", "pytest"),
                          ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):  # fmt: skip
        text = _text(repo, tree, at + name)
        if text is None:
            continue
        import configparser  # off a passing review's path

        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        if parser.has_option(section, key):
            found += parser.get(section, key).split()
    for name in ("pytest.toml", ".pytest.toml", "pyproject.toml"):
        text = _text(repo, tree, at + name)
        if text is None:
            continue
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            data = {}
        if name != "pyproject.toml":
            options = data.get("pytest", {})
        else:
            tool = data.get("tool", {})
            pytest = tool.get("pytest", {}) if isinstance(tool, dict) else {}
            options = pytest.get("ini_options", pytest) if isinstance(pytest, dict) else {}
        listed = options.get(key, []) if isinstance(options, dict) else []
        if isinstance(listed, str):
            listed = listed.split()
        found += [p for p in listed if isinstance(p, str)] if isinstance(listed, list) else []
    return found


def _tests_under(repo: pygit2.Repository, tree: pygit2.Tree, directory: str) -> set[str]:
    """A ``testpaths`` directory as test directories: all of it where it is named as one, else
    only the directories under it named as test directories. pytest looks for tests there, which
    does not make it the tests': toolz's ``testpaths = ["toolz"]`` names the package, whose code
    sits above ``toolz/tests/``, and a folder holding tests may hold data the code reads."""
    if _test_dir(directory) == directory:
        return {directory}
    entry = _entry(tree, directory)
    if entry is None or entry.type_str != "tree":
        return set()
    named: set[str] = set()
    pending = [(directory, tree_at(repo, entry.id))]
    seen = 0
    while pending and seen <= _MAX_WALKED:
        folder, subtree = pending.pop()
        for item in subtree:
            seen += 1
            if item.type_str == "tree":
                path = f"{folder}/{item.name}"
                if _test_dir(path) == path:
                    named.add(path)
                else:
                    pending.append((path, tree_at(repo, item.id)))
    return named


def _test_dirs(collected: Iterable[str]) -> set[str]:
    """The test directories collected test files sit in (:func:`_test_dir`)."""
    out = set()
    for d in {str(PurePosixPath(id_path(t)).parent) for t in collected}:
        found = _test_dir(d)
        if found is not None:
            out.add(found)
    return out


def _test_dir(directory: str) -> str | None:
    """The test directory a path lies in: up to its first part named as tests (``tests``,
    ``test``, ``unit_tests``, ``test-data``, ``__tests__``, Go's ``testdata``), else a
    ``testing`` at the top (pytest's own layout), or None. ``ab_test/`` may be a package; a
    ``testing`` below the top may be a package's public helper (numpy's ``numpy/testing/``,
    whose tests are in ``numpy/testing/tests/``)."""
    parts = PurePosixPath(directory).parts
    for i, part in enumerate(parts):
        if _NAMED_DIR.fullmatch(part):
            return "/".join(parts[: i + 1])
    if parts[:1] == ("testing",):
        return "testing"
    return None
