"""Running the project's setup and test commands on a tree, in a pooled worktree, with caching.

A run's result depends on the tree, the commands and what `setup` installed, so that is its cache
key. `setup` runs in a worktree before its first test and again only when its command or one of
its input files (manifests, lock files) changed.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import posixpath
import re
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Protocol

import pygit2
from pydantic import Field

from eyeful import affected, evidence, focus, imports, isolation, records, sandbox, testrun
from eyeful import failures as failures_
from eyeful.cache import Cache, cache_key
from eyeful.config import Config, setup_input
from eyeful.confine import Refused, inside
from eyeful.environment import EnvironmentKey, go_flags
from eyeful.extra import Extra
from eyeful.hunks import ChangedLines
from eyeful.metadata import metadata_sources
from eyeful.model import Model
from eyeful.records import Invocation, MapPlace
from eyeful.results import is_pytest_command
from eyeful.sandbox import Jail
from eyeful.shell import CommandResult, Status, project_env, repointed, run_command
from eyeful.shellwords import simple_commands
from eyeful.snapshot import blob_at, blobs, tree_at
from eyeful.testids import IdCommand, id_path
from eyeful.worktrees import Worktree, WorktreePool, remove_tree

RunName = Literal["setup", "test", "test_one"]


class Progress(Protocol):
    """How the core tells a front end what it is doing. The core never prints; the CLI listens."""

    def phase(self, text: str) -> None:
        """A new step of the run starts (snapshot, setup, tests on the change, ...)."""

    def started(self, label: str, command: str) -> None:
        """A project command starts; ``label`` says which and where."""

    def finished(self, run: Run) -> None:
        """A project command ended, or its result came from the cache."""


class Silent:
    """The default listener: hears everything, says nothing."""

    def phase(self, text: str) -> None:
        return None

    def started(self, label: str, command: str) -> None:
        return None

    def finished(self, run: Run) -> None:
        return None


class Run(Model):
    """One command run on one tree; what the report and the cache keep of it."""

    side: str
    name: RunName
    command: str
    tree: str
    status: Status
    exit_code: int | None
    duration: float
    reason: str | None = None
    tail: str = ""
    tests: dict[str, evidence.Outcome] | None = None
    tests_from: evidence.Source | None = None
    """Where the outcomes were read: the runner's record (``probe``, ``go-json``, ``unittest``),
    or its text (``junit``, ``output``: the fallback for a runner eyeful has no record of)."""
    read_from_text: str | None = None
    """Why a pytest run was read from its text (an old pytest, a probe its command hid)."""
    sandboxed: bool = False
    """Run in the sandbox (eyeful/sandbox.py): code nobody confirmed, or `sandbox = "all"`."""
    executed: dict[str, list[int]] | None = None
    """For a run asked to trace the change's lines (a reproduction on the change): those that ran,
    by file; None when not traced (eyeful/hunks.py)."""
    executed_at_import: dict[str, list[int]] | None = None
    """Of the lines the change touched, those that ran when the modules were imported for
    collection: they count only for a test whose failure was its module's import."""
    executed_in_module: dict[str, dict[str, list[int]]] | None = None
    """Of those, by test module: the ones run in a function or class body while that module was
    collected (a decorator it applied): they count for that module's tests."""
    entered: list[str] | None = None
    """The changed files whose code ran while the tests ran (so their import-time lines count)."""
    ran: dict[str, dict[str, list[int]]] | None = Field(default=None, exclude=True)
    """For a traced run: the changed lines each test ran, by test id and file; None when not
    traced (kept in each regression's ``ran``, not here: eyeful/causes.py)."""
    read_as_text: list[str] | None = None
    """The changed files a test's code looked at otherwise than by running them (read, stat,
    a function's ``__code__``, a child process naming them): then its failure does not count."""
    looked: dict[str, str] | None = None
    """What it did to each of them."""
    looked_by_tests: list[str] | None = Field(default=None, exclude=True)
    """Of ``read_as_text``, the ones the tests' own files looked at (not other code they handed
    a path): what a regression's representation rests on (eyeful/confirmation.py)."""
    edited_entered: bool = Field(default=False, exclude=True)
    """A traced run entered a function the change edited (how it compiles may differ, whichever
    of its lines ran): its tests ran the change."""
    beyond_trace: bool = Field(default=False, exclude=True)
    """What a traced run's code did may rest on more than the lines traced: its tests started a
    child process, a changed module was imported before tracing began, or the changed code read
    a changed file (that they ran none of the change's lines tells nothing then)."""
    outcome_hooks: list[str] | None = Field(default=None, exclude=True)
    """pytest: the repository's files (paths in it) whose functions implement a hook that
    decides a test's outcome in this run: one the change edits makes its passes no evidence
    (eyeful/review.py)."""
    left_out: list[str] | None = Field(default=None, exclude=True)
    """pytest: the directories and Python files (paths in the repository, or outside it) its
    collection left out by a conftest's or a hook's word (eyeful/unreached.py)."""
    hidden: list[str] | None = Field(default=None, exclude=True)
    """pytest: the tests that failed and were reported passed, a hook of the project passing
    them (eyeful/review.py)."""
    kinds: dict[str, str] | None = None
    """pytest's item class of each collected test that is not a plain test function
    (``DoctestItem``...), from its record (None: read from text, not known)."""
    collected: list[str] | None = None
    """Every test the runner collected, from its record (None: read from text, not known)."""
    stopped: str | None = None
    """Why the run did not cover all its tests (-x, interrupted, ...): its silence says nothing."""
    none_ran: bool = False
    """The run said it ran no test at all (a test id the tree does not have, say)."""
    cached: bool = False
    started: str | None = None
    """When the command started (ISO 8601, UTC); a cached run keeps its original time."""
    counts: dict[str, int] | None = None
    """Outcomes counted over every test, set when `tests` keeps only the failing ones."""
    failures: dict[str, failures_.Failure] | None = None
    """Each failing test's own failure, by test id (from JUnit or its section of the output)."""
    skips: dict[str, str] | None = None
    """Each skipped test's reason, from the runner's record (eyeful/claims.py: a test the change
    made skip is a question)."""
    failure: failures_.Failure | None = None
    """For a reproduction's run: what its own test's failure was (see eyeful.failures)."""
    fails_seen: bool | None = None
    """For a reproduction's run: whether its ``fails`` text is in that failure."""
    selected: list[str] | None = None
    """A run of the tests a change can affect (`select = "affected"`): the ids and test files
    it was given in place of the test command's own paths (eyeful/affected.py)."""
    reached: records.Reached | None = Field(default=None, exclude=True)
    """A full run's map of the files each test ran (kept in the cache's ``maps``, not here)."""
    reached_from: MapPlace | None = Field(default=None, exclude=True)
    """Where pytest ran when it recorded that map."""
    mapped: bool = Field(default=False, exclude=True)
    """The run recorded the map (eyeful's marks in the code, its watch of the import functions):
    a failure seen only there may be what the test saw of them (eyeful/regressions.py). Kept in
    the cache, not in the report."""
    invocation: Invocation | None = Field(default=None, exclude=True)
    """pytest's parse of the command (from the probe's record): which words it took as paths,
    whence a derived ``test_one`` (eyeful/focus.py). Kept in the cache, not in the report."""
    rootdir: str | None = Field(default=None, exclude=True)
    """pytest's rootdir as a repository path ("": the root), where the record's ids start; kept
    in the cache, not in the report."""
    narrowed: str | None = Field(default=None, exclude=True)
    """What took collected tests out of the run (records.RunRecord.narrowed)."""

    def cache_entry(self) -> dict[str, Any]:
        """The cache's entry of this run."""
        entry = self.model_dump(exclude={"side", "cached"})
        entry["invocation"] = None if self.invocation is None else self.invocation.model_dump()
        entry["rootdir"] = self.rootdir
        entry["narrowed"] = self.narrowed
        entry["mapped"] = self.mapped
        entry["outcome_hooks"] = self.outcome_hooks  # a clean from the cache needs it too
        entry["left_out"] = self.left_out
        entry["hidden"] = self.hidden  # a clean from the cache needs it too
        return entry

    def test_files(self) -> list[str]:
        """The repository paths of the test files the run collected (or named): its ids start
        at pytest's rootdir, which may be below the repository's root. A Python module's doctests
        (``DoctestItem``) do not make it a test file: its file is the code (a text file of them
        is the tests')."""
        prefix = f"{self.rootdir}/" if self.rootdir else ""
        kinds = self.kinds or {}
        return sorted({
            prefix + id_path(t)
            for t in self.collected or self.tests or ()
            if kinds.get(t) != "DoctestItem" or not id_path(t).endswith(".py")
        })  # fmt: skip

    def doctest_files(self) -> list[str]:
        """The repository paths of the Python modules the run collected doctests from: their
        docstrings are tests, their code is the code (eyeful/testside.py)."""
        prefix = f"{self.rootdir}/" if self.rootdir else ""
        kinds = self.kinds or {}
        return sorted({
            prefix + id_path(t)
            for t, kind in kinds.items()
            if kind == "DoctestItem" and id_path(t).endswith(".py")
        })  # fmt: skip

    @property
    def failing(self) -> set[str]:
        return {t for t, o in (self.tests or {}).items() if o in evidence.FAILING}

    @property
    def names_known(self) -> bool:
        """Whether the run said which tests failed (a failed run naming none did not)."""
        return self.tests is not None


def _ids_in_your_tree(run: Run, worktree: Path, root: Path) -> None:
    """A run's ids with the worktree's path in them (parameters made of absolute paths) as your
    tree's: the same test in every worktree, and its rerun line one you can paste."""
    here, yours = str(worktree), str(root)
    if not any(here in t for t in run.collected or run.tests or ()):
        return

    def mapped(test: str) -> str:
        return test.replace(here, yours)

    run.collected = None if run.collected is None else [mapped(t) for t in run.collected]
    for name in ("tests", "failures", "skips", "kinds", "ran"):
        found = getattr(run, name)
        if found is not None:
            setattr(run, name, {mapped(t): value for t, value in found.items()})


def _in_worktree(command: str | IdCommand, pool: WorktreePool, worktree: Path) -> str | IdCommand:
    """A command's ids read from a run (in your tree's terms: :func:`_ids_in_your_tree`) as the
    worktree it runs in names them: your tree's path where a path of the checkout follows it (a
    route `/app/users` that only starts like your tree's path is left as it is, and so is an id
    naming one of eyeful's worktrees)."""
    yours, ours = str(pool.paths.root), str(pool.root)
    if not isinstance(command, IdCommand) or not any(yours in a for a in command.args):
        return command
    at = re.compile(re.escape(yours) + r"(?=/|$|[\]\-,])(/[^\[\],\s]*)?")

    def local(found: re.Match[str]) -> str:
        rest = found[1] or ""
        if rest and not (worktree / rest.lstrip("/")).exists():
            return found[0]
        return str(worktree) + rest

    args = tuple(a if ours in a else at.sub(local, a) for a in command.args)
    return dataclasses.replace(command, args=args)


def suite_run(runs: list[Run]) -> Run | None:
    """The test command's run among what :meth:`Runner.suite` returned (it comes last; setup
    alone where setup failed)."""
    return runs[-1] if runs and runs[-1].name == "test" else None


def _cached_run(side: str) -> Callable[[dict[str, Any]], Run]:
    """Reads a cached run record as a run on ``side``."""
    return lambda entry: Run.model_validate({**entry, "side": side, "cached": True})


def _project_report(worktree: Worktree, junit: str) -> Path:
    """The configured JUnit report in ``worktree``, confined like every path eyeful touches."""
    return inside(worktree.path, junit)


def _shown(command: str | IdCommand) -> str:
    return command.shown if isinstance(command, IdCommand) else command


def setup_key(repo: pygit2.Repository, tree_id: str, config: Config) -> str | None:
    """What setup depends on: its command and the blobs of its input files in ``tree_id``, and
    what the project's metadata reads its version from (eyeful/metadata.py)."""
    setup = config.commands.setup
    venv = config.effective_isolate == "venv"
    if not setup:
        # An empty virtualenv is not the user's environment: results differ, so keys do too.
        return cache_key(setup=None, isolate="venv") if venv else None
    tree = tree_at(repo, tree_id)
    inputs = _setup_inputs(repo, tree, config.setup_inputs) | metadata_sources(repo, tree)
    inputs |= _named_by_setup(repo, tree, setup, config.setup_inputs)
    if venv:
        return cache_key(setup=setup, inputs=inputs, isolate="venv")
    return cache_key(setup=setup, inputs=inputs)


def _setup_inputs(
    repo: pygit2.Repository, tree: pygit2.Tree, patterns: tuple[str, ...]
) -> dict[str, str]:
    """The blobs of ``tree`` that are setup inputs, by path: a pattern's directory is read
    alone; a ``**/`` pattern needs the whole tree walked."""
    if any(PurePosixPath(p).parent == PurePosixPath("**") for p in patterns):
        return {path: str(entry.id) for path, entry in blobs(repo, tree)
                if setup_input(path, patterns)}  # fmt: skip
    inputs: dict[str, str] = {}
    for directory in {"" if (d := str(PurePosixPath(p).parent)) == "." else d for p in patterns}:
        try:
            sub = tree[directory] if directory else tree
        except KeyError:
            continue
        if sub.type_str != "tree":
            continue
        for entry in tree_at(repo, sub.id):
            path = f"{directory}/{entry.name}" if directory else entry.name or ""
            if entry.type_str == "blob" and setup_input(path, patterns):
                inputs[path] = str(entry.id)
    return inputs


def _named_by_setup(
    repo: pygit2.Repository, tree: pygit2.Tree, setup: str, patterns: tuple[str, ...]
) -> dict[str, str]:
    """What of the tree setup installs, as its inputs: the files the setup command names
    (`-r ci/requirements.txt`, a script) and those such a file names in turn (helper-55,
    helper-57, helper-60); in each directory named after `-e` (an editable install: its code is
    the worktree's own) or `cd`, its manifests (those the top-level patterns name there, and the
    default ones: helper-53, helper-57); a directory an install copies (`pip install
    ./packages/calc`, a requirements file's `./packages/calc` line) all of it."""
    top = {PurePosixPath(p).name for p in (*patterns, *_MANIFESTS)
           if PurePosixPath(p).parent == PurePosixPath(".")}  # fmt: skip
    inputs: dict[str, str] = {}
    waiting = _paths_in(repo, tree, setup, "", top, inputs, listed=False)
    seen: set[str] = set()
    while waiting and len(seen) < _MAX_NAMING_FILES:
        path, listed = waiting.pop(0)
        if path in seen:
            continue
        seen.add(path)
        data = blob_at(repo, inputs[path]).data
        if len(data) <= _MAX_NAMING and b"\0" not in data:
            text = data.decode("utf-8", "replace")
            here = posixpath.dirname(path)
            waiting += _paths_in(repo, tree, text, here, top, inputs, listed=listed)
            parsed = _parsed(text) if path.endswith(".py") else None
            if parsed is not None:
                waiting += _literals_named(repo, tree, parsed, here, inputs)
                if PurePosixPath(path).name != "setup.py":  # (its package, for a version)
                    waiting += _imports_named(repo, tree, parsed, here, inputs)
    return inputs


_PROSE = ("README", "CHANGE", "HISTORY", "NEWS", "AUTHORS", "CONTRIBUT", "LICEN", "COPYING",
          "NOTICE")  # fmt: skip
"""Files a script reads for prose (a package's long description, its notices), named so and
of no data's kind (`history.csv` is data: helper-70): no setup input."""


def _prose(path: str) -> bool:
    file = PurePosixPath(path)
    text = file.suffix.lower() in ("", ".md", ".rst", ".txt", ".markdown")
    return text and file.name.upper().startswith(_PROSE)


def _path_literals(parsed: ast.AST) -> Iterator[str]:
    """The strings of a Python file, and the paths its joins spell out of them: the string
    parts at the end of `ROOT / "data" / "rates.csv"` or `os.path.join(ROOT, "data", "x")`."""
    for node in ast.walk(parsed):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
        parts: list[ast.expr] = []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                parts.insert(0, node.right)
                node = node.left
            parts.insert(0, node)
        elif isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == "join")
            or (isinstance(node.func, ast.Name) and node.func.id == "join")
        ):
            parts = list(node.args)
        tail: list[str] = []
        for part in reversed(parts):
            if not (isinstance(part, ast.Constant) and isinstance(part.value, str)):
                break
            tail.insert(0, part.value)
        if len(tail) > 1:
            yield "/".join(tail)


def _parsed(text: str) -> ast.Module | None:
    """A Python file's syntax tree, read once for its strings and its imports."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _imports_named(
    repo: pygit2.Repository, tree: pygit2.Tree, parsed: ast.Module, here: str,
    inputs: dict[str, str],
) -> list[tuple[str, bool]]:  # fmt: skip
    """The tree's modules a Python script setup runs imports (`from tools.rates import RATE`,
    from the root or beside it), into ``inputs`` (helper-69: a generator's table in a module
    of its own)."""
    stems: list[str] = []  # module paths, from the root (or `src/`), or from ``here``
    for node in ast.walk(parsed):
        if isinstance(node, ast.Import):
            stems += [alias.name.replace(".", "/") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            # (relative: `from .rates import RATE`, `from . import rates`: helper-70)
            up = PurePosixPath(here, *[".."] * max(node.level - 1, 0)).as_posix()
            where = posixpath.normpath(up) if node.level else ""
            module = (node.module or "").replace(".", "/")
            start = posixpath.join(where, module) if where not in ("", ".") else module
            stems += [start, *(posixpath.join(start, a.name) for a in node.names)]
    files: list[tuple[str, bool]] = []
    for stem in dict.fromkeys(s.strip("/") for s in stems if s.strip("/")):
        candidates = [f"{stem}.py", f"{stem}/__init__.py"]
        candidates += [f"src/{c}" for c in candidates]  # (a src layout)
        for candidate in candidates:
            for found, entry in _entries_named(repo, tree, candidate, here):
                if entry.type_str == "blob" and found not in inputs:
                    inputs[found] = str(entry.id)
                    files.append((found, False))
    return files


def _literals_named(
    repo: pygit2.Repository, tree: pygit2.Tree, parsed: ast.Module, here: str,
    inputs: dict[str, str],
) -> list[tuple[str, bool]]:  # fmt: skip
    """The tree's files a Python file setup runs names by a string written in it (`open(
    'data/rates.csv')`, `glob('data/*.csv')`, a name beside the script), into ``inputs``
    (helper-66: a script generating a module from data kept the last setup's module). A
    directory so named is none (`package_dir={"": "src"}` in a `setup.py` would make every
    change of the code install again), nor a Python module (a version read from a package's
    `__init__.py` is `metadata.py`'s: its other edits install nothing), a file of prose (a
    README, a changelog: a long description), the root (`.`) or an option."""
    files: list[tuple[str, bool]] = []
    by_name: dict[str, list[tuple[str, pygit2.Object]]] | None = None
    for word in _path_literals(parsed):
        if not word.strip("./") or len(word) > 200 or word.startswith("-"):
            continue
        if "\n" in word or " " in word or any(c in word.split("/", 1)[0] for c in "*?["):
            continue  # (not a path; a pattern at the top: every file there)
        named = _entries_named(repo, tree, word, here)
        if "/" not in word and "." in word.strip("."):
            # A file's name alone, joined elsewhere to its directory (`DATA = ROOT / "data"`,
            # then `DATA / "rates.csv"`: helper-71): the tree's files of that name, wherever
            # (one beside the script may be another: helper-72).
            if by_name is None:
                by_name = {}
                for path, entry in blobs(repo, tree):
                    by_name.setdefault(PurePosixPath(path).name, []).append((path, entry))
            named = [*named, *by_name.get(word, [])]
        for found, entry in named:
            if _prose(found):
                continue  # (a setup.py's long description: a changelog edited every change)
            if entry.type_str == "blob" and found not in inputs and not found.endswith(".py"):
                inputs[found] = str(entry.id)
                files.append((found, False))
    return files


_MANIFESTS = ("pyproject.toml", "setup.py", "setup.cfg")
"""What an editable install of a directory reads besides its code, whatever `setup_inputs` says."""
_MAX_NAMING = 64 * 1024  # bytes of a file setup names read for the paths it names in turn
_MAX_NAMING_FILES = 32  # files read for the paths they name
_EDITABLE = ("-e", "--editable")
_LISTS = ("-r", "--requirement", "-c", "--constraint", "-f", "--file")
"""What names a list of things to install (pip's requirements, conda's environment file)."""


def _paths_in(
    repo: pygit2.Repository, tree: pygit2.Tree, text: str, here: str, top: set[str],
    inputs: dict[str, str], *, listed: bool,
) -> list[tuple[str, bool]]:  # fmt: skip
    """The words of ``text`` that name a file of ``tree`` (from the root, or from ``here``: a
    requirements file's `-r` is its own directory's) into ``inputs``, returned with whether
    each is a list of things to install (`-r`). ``listed``: ``text`` is such a list, each line
    a thing to install. A directory installed as itself, not after `-e` (`pip install
    ./packages/calc`, `.`, a list's `./packages/calc`), is copied whole: its whole tree; any
    other directory (after `-e`, `cd`), its files the ``top`` patterns name."""
    files: list[tuple[str, bool]] = []
    cwd = ""  # where a `cd` of the text went (a path of the tree), for what follows it
    for words in simple_commands(text):
        installing = listed
        if len(words) == 2 and words[0].lstrip("(") in ("cd", "pushd"):
            found = _entries_named(repo, tree, words[1], cwd or here)
            cwd = found[0][0] if len(found) == 1 and found[0][1].type_str == "tree" else cwd
        editable = list_next = False
        module = words[words.index("-m") + 1] if "-m" in words[:-1] else ""
        if re.fullmatch(r"[A-Za-z_][\w.]*", module) and not installing:
            # `python -m tools.gen`: the module's file, read for what it names in turn
            stem = module.replace(".", "/")
            for name in (f"{stem}.py", f"{stem}/__main__.py"):
                for path, entry in _entries_named(repo, tree, name, cwd or here, cwd):
                    if entry.type_str == "blob":
                        inputs[path] = str(entry.id)
                        files.append((path, False))
        for word in words:
            flag = word.split("=", 1)[0]
            value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
            if word in _EDITABLE or word in _LISTS:
                editable, list_next = word in _EDITABLE, word in _LISTS
                continue
            if flag in _EDITABLE:
                editable = True
            elif word.startswith("-e") and len(word) > 2:  # `-e./pkg`
                editable, value = True, word[2:]
            elif word.startswith(("-r", "-c")) and len(word) > 2 and "=" not in word:
                list_next, value = True, word[2:]  # `-rci/reqs.txt`
            elif word.startswith("-") and "=" not in word:
                continue  # an option: `-e` still holds for the next word (`-e --no-deps pkg`)
            copied, as_list = installing and not editable, list_next or flag in _LISTS
            editable = list_next = False
            installing = installing or word == "install"
            for path, entry in _entries_named(repo, tree, value, cwd or here, cwd):
                if entry.type_str == "blob":
                    inputs[path] = str(entry.id)
                    files.append((path, as_list))
                elif entry.type_str == "tree" and copied:
                    inputs[path + "/"] = str(entry.id)  # copied whole: any file of it
                elif entry.type_str == "tree":
                    for item in tree_at(repo, entry.id):
                        name = item.name or ""
                        if item.type_str == "blob" and any(fnmatchcase(name, p) for p in top):
                            inputs[f"{path}/{name}" if path else name] = str(item.id)
    return files


def _entries_named(
    repo: pygit2.Repository, tree: pygit2.Tree, word: str, here: str, cwd: str = ""
) -> list[tuple[str, pygit2.Object]]:
    """The tree's entries a word names, from ``cwd`` (where a `cd` went), the root, or else
    ``here``, with their paths (the root itself as ""); a word whose last part is a shell
    pattern (`packages/*`) names those it matches there."""
    word = word.rsplit("=", 1)[-1].split("[", 1)[0].rstrip(";&|)")
    if not word:
        return []  # (`>=`, a marker's `;`: no path)
    if word.rstrip("/") in (".", "./"):
        # (pip reads a list's `.` from where it runs: the root, or where a `cd` went)
        return [(cwd, tree_at(repo, tree[cwd].id) if cwd else tree)]
    word = word.rstrip("/")
    for start in dict.fromkeys([cwd, "", here]):
        path = posixpath.normpath(posixpath.join(start, word))
        if path in (".", "") or path.startswith(("/", "..", "-")):
            continue
        folder, last = posixpath.split(path)
        if any(c in last for c in "*?"):
            try:
                holder = tree_at(repo, tree[folder].id) if folder else tree
            except (KeyError, AssertionError):
                continue
            names = [(e.name or "", e) for e in holder]
            found = [(posixpath.join(folder, name), e) for name, e in names
                     if fnmatchcase(name, last) and not name.startswith(".")]  # fmt: skip
            if found:
                return found
            continue
        try:
            return [(path, tree[path])]
        except KeyError:
            continue
    return []


_RECENT = 4
"""Whole suite runs remembered on distinct trees (:meth:`Runner.recent_suites`)."""


class Runner:
    """Runs setup and tests on trees for one review."""

    def __init__(
        self,
        repo: pygit2.Repository,
        config: Config,
        pool: WorktreePool,
        cache: Cache,
        tmp_dir: Path,
        progress: Progress | None = None,
        *,
        maps: bool | None = None,
        environment: EnvironmentKey | None = None,
    ) -> None:
        self.repo = repo
        self.maps = config.select == "affected" if maps is None else maps
        """Whether a full suite run records the map (eyeful/affected.py): only for a review that
        selects by it. The map's tracer costs a suite run most of its speed (on Python 3.11 a call
        event for every function), so a plain review does not pay for it."""
        self.config = config
        self.pool = pool
        self.cache = cache
        self.tmp_dir = tmp_dir
        self.progress: Progress = progress or Silent()
        self._repo_lock = threading.Lock()  # pygit2 objects are not for concurrent use
        self._jail: Jail | None = None
        self._private: Path | None = None
        self.unsandboxed: str | None = None
        """Why code nobody confirmed ran (or, required, could not run) without a sandbox."""
        self.alone = focus.Alone(config.commands.test, config.commands.test_one)
        """How tests run on their own: a derived ``test_one`` learns pytest's parse of the test
        command from its first full run here (or from the run that recorded a selection's map)."""

        # Asked now, read when a key is first needed: one review, one look at the interpreters
        # (``environment``: the one the caller already asked, when it is the same question).
        isolate = config.effective_isolate == "venv"
        if environment is not None and environment.fits(
            config.env, pool.paths.root, isolate=isolate
        ):
            self._environment_key = environment
        else:
            self._environment_key = EnvironmentKey(config.env, pool.paths.root, isolate=isolate)

    def _learn(self, run: Run) -> None:
        """pytest's parse of the test command from a full run of it (or why it had none)."""
        if run.name == "test":
            self.alone.learn(run.invocation, run.read_from_text or (
                "its run ended before pytest's session started" if run.status == "ERROR"
                else "its run left no record of it"
            ), run.rootdir)  # fmt: skip

    def environment_key(self) -> dict[str, object]:
        """What a run's results depend on besides the tree and the commands (the interpreters
        and what is installed on them, PYTHONPATH, PATH, `env`: eyeful/environment.py)."""
        return self._environment_key.value()

    def jail(self, untrusted: bool) -> Jail | Literal[False] | None:
        """The review's sandbox for a run of untrusted code (a reproduction, a fix) or, with
        ``sandbox = "all"``, of any command; None: run it as it is; False: it must not run."""
        mode = self.config.sandbox
        if not untrusted and mode != "all":
            return None
        why = sandbox.unavailable()
        if why is not None:
            self.unsandboxed = why
            return None if mode == "auto" else False
        if self._jail is None:
            self._jail = Jail(self.private(), frozenset(self.config.env))
        return self._jail

    def private(self) -> Path:
        """The review's private directory for code nobody confirmed: ``tmp/`` is its TMPDIR
        (sandboxed or not), ``home/`` its HOME in the sandbox; removed when the review ends."""
        with self._repo_lock:
            if self._private is None:
                self.tmp_dir.mkdir(parents=True, exist_ok=True)
                self._private = Path(tempfile.mkdtemp(prefix="private-", dir=self.tmp_dir))
                (self._private / "tmp").mkdir()
                (self._private / "home").mkdir()
        return self._private

    def close(self) -> None:
        """Remove what the review's untrusted runs left in their private directory."""
        if self._private is not None:
            remove_tree(self._private)

    def _record(
        self, side: str, name: RunName, command: str, tree: str, result: CommandResult
    ) -> Run:
        return Run(
            side=side,
            name=name,
            command=command,
            tree=tree,
            status=result.status,
            exit_code=result.exit_code,
            duration=round(result.duration, 3),
            reason=result.reason,
            tail=result.tail,
            started=(datetime.now(timezone.utc) - timedelta(seconds=result.duration)).isoformat(
                timespec="seconds"
            ),
        )

    def _environment(
        self, worktree: Worktree, side: str, tree: str
    ) -> tuple[dict[str, str] | None, Run | None]:
        """The variables project commands get in ``worktree``; a failed run when there are none.

        With ``isolate = "venv"`` that is the worktree's own virtualenv, made on first use; a new
        one has nothing installed, so setup runs again.
        """
        if self.config.effective_isolate == "none":
            return None, None
        try:
            made = isolation.prepare(
                self.pool.paths.state_dir, worktree.name, self.config.timeout,
                self.config.commands.setup,
            )  # fmt: skip
        except isolation.VenvError as err:
            failed = CommandResult("ERROR", None, 0.0, "", reason=str(err))
            return None, self._record(side, "setup", err.command, tree, failed)
        if made.fresh:
            worktree.write_setup_key(None)
        return made.env, None

    def _setup(
        self,
        worktree: Worktree,
        side: str,
        tree: str,
        key: str | None,
        env: dict[str, str] | None = None,
    ) -> Run | None:
        setup = self.config.commands.setup
        if setup is None or key is None or worktree.read_setup_key() == key:
            return None
        self.progress.started(f"setup on the {side}", setup)
        worktree.write_setup_key(None)
        result = run_command(setup, worktree.path, timeout=self.config.timeout, env=env)
        run = self._record(side, "setup", setup, tree, result)
        self.progress.finished(run)
        if run.status == "PASSED":
            worktree.write_setup_key(key)
        return run

    def lock_repo(self) -> threading.Lock:
        """Held around pygit2 calls: its objects are not for concurrent use."""
        return self._repo_lock

    def prepare(self, worktree: Worktree, tree: str) -> None:
        # After files nobody confirmed ran here, nothing of theirs may weigh on a later run: an
        # ignored conftest.py a reproduction wrote would change every later review's verdicts.
        with self._repo_lock:
            whole = worktree.checkout(
                self.repo, tree, clean_ignored=self.config.clean_ignored,
                parent=self.pool.parent_of(tree),
            )  # fmt: skip
        if not whole:
            worktree.write_setup_key(None)  # what setup installed among ignored files is gone

    @staticmethod
    def put(worktree: Worktree, extra: Extra | None) -> None:
        """Files nobody confirmed (a reproduction, a fix) onto a checked-out worktree: after its
        setup ran, so that the confirmed setup runs only on the tree it was confirmed for (a
        reproduction named GNUmakefile or setup.py would otherwise run unsandboxed in it)."""
        if extra is not None:
            worktree.taint()
            worktree.stamp(extra.apply(worktree.path))

    def suite_key(self, tree: str, extra: Extra | None = None) -> str:
        """The cache key of the test command's run on ``tree`` (with ``extra``)."""
        with self._repo_lock:
            skey = setup_key(self.repo, tree, self.config)
        return cache_key(
            tree=tree,
            test=self.config.commands.test,
            setup=skey,
            junit=self.config.junit,
            timeout=self.config.timeout,
            extra=None if extra is None else extra.key(),
            environment=self.environment_key(),
        )

    def cached_suite(self, tree: str, side: str) -> Run | None:
        """The test command's cached run on ``tree``, without running anything."""
        return self.cache.get("runs", self.suite_key(tree), _cached_run(side))

    def hold(self) -> contextlib.AbstractContextManager[Worktree]:
        """One worktree for several runs in a row (a context's paired runs: eyeful/confirmation.py);
        waits when all are busy."""
        return self.pool.acquire()

    def suite(
        self,
        tree: str,
        side: str,
        extra: Extra | None = None,
        *,
        live: bool = False,
        worktree: Worktree | None = None,
        only: list[str] | None = None,
    ) -> list[Run]:
        """Setup (when needed) and the test command on ``tree``; the test run comes last.

        Cached by tree, commands, setup inputs, environment and ``extra``; an ERROR is never
        cached; ``live`` runs it even when cached (a confirmation). ``only``: the test ids and
        files to run in place of the command's own (`select = "affected"`); else the whole
        suite, whose run records the map of what each test ran (eyeful/affected.py) when the
        review selects by it (``maps``).
        Raises :class:`Refused` when ``extra`` cannot be put on the tree.
        """
        command = self.config.commands.test
        assert command is not None, "callers check that a test command is configured"
        with self._repo_lock:
            skey = setup_key(self.repo, tree, self.config)
        key = self.suite_key(tree, extra)
        commands: list[str | IdCommand] = [command]
        if only is not None:
            how = self.alone.how()
            assert how is not None, "callers check that tests can run on their own"
            commands = list(how.commands(only))
            key = cache_key(suite=key, only=only)
        # the map is recorded by a suite's first run on a tree, never by a confirmation's
        reach = (
            self.maps and not live and only is None and extra is None and is_pytest_command(command)
        )
        hit = None if live else self.cache.get("runs", key, _cached_run(side))
        if hit is not None and reach and not self._mapped(tree, command):
            hit = None  # cached by a review that recorded no map: this one runs it for the map
        whole = only is None and extra is None
        if hit is not None:
            if whole:
                self._learn(hit)
            self.progress.finished(hit)
            return [hit]
        runs = self._execute(tree, side, "test", commands, extra, skey, worktree, reach=reach)
        last = runs[-1]
        if last.name == "test":
            last.selected = only
            if whole:
                self._learn(last)
            if last.reached is not None and last.status != "ERROR" and not last.stopped:
                mapped = affected.recorded(tree, last.reached, last.failing, last.reached_from,
                                           last.invocation)  # fmt: skip
                if mapped is not None:
                    where = affected.map_key(tree, command, self.environment_key())
                    self.cache.put("maps", where, mapped)
            if last.status != "ERROR":
                self.cache.put("runs", key, last.cache_entry())
                if whole:
                    self._remember_latest(tree, key)
        return runs

    def _latest_key(self) -> str:
        return cache_key(test=self.config.commands.test, environment=self.environment_key())

    def _remember_latest(self, tree: str, key: str) -> None:
        """The whole suite's latest cached runs, one per tree, the most recent first."""
        runs = self._recent()
        runs = [{"run": key, "tree": tree}] + [r for r in runs if r["tree"] != tree]
        self.cache.put("latest", self._latest_key(), {"runs": runs[:_RECENT]})

    def _recent(self) -> list[dict[str, str]]:
        entry = self.cache.get("latest", self._latest_key(), dict) or {}
        found = entry.get("runs")
        return [
            {"run": r["run"], "tree": r["tree"]}
            for r in (found if isinstance(found, list) else [])
            if isinstance(r, dict) and isinstance(r.get("run"), str)
            and isinstance(r.get("tree"), str)
        ]  # fmt: skip

    def recent_suites(self, side: str, other_than: str) -> list[Run]:
        """The test command's recent cached whole runs on trees other than ``other_than``
        (other commits', earlier changes', another branch's), the most recent first: which
        tests the suite had there, pointers to where to look, never evidence."""
        out = []
        for entry in self._recent():
            if entry["tree"] != other_than:
                run = self.cache.get("runs", entry["run"], _cached_run(side))
                out += [run] if run is not None else []
        return out

    def _mapped(self, tree: str, command: str) -> bool:
        key = affected.map_key(tree, command, self.environment_key())
        return self.cache.get("maps", key, dict) is not None

    def mapped(self, tree: str) -> bool:
        """Whether a map of what each test ran on ``tree`` is cached."""
        return self._mapped(tree, self.config.commands.test or "")

    def one(
        self,
        tree: str,
        side: str,
        test: str | Sequence[str],
        extra: Extra | None = None,
        *,
        each: bool = False,
        worktree: Worktree | None = None,
        trace: ChangedLines | None = None,
        from_root: bool = False,
        grouped: bool = False,
    ) -> list[Run]:
        """Setup (when needed) and `test_one` for ``test`` (an id, or several: one command where
        the runner takes several, else, or with ``each``, one each, in one checkout); never
        cached: flakiness needs reruns, and a confirmation must be live. ``from_root``: the ids
        are repository paths (a finding's), not the test command's records' (:meth:`given`).
        ``grouped``: Go's tests one command per package (focus.Focus.commands)."""
        how = self.alone.how()
        assert how is not None, "callers check that tests can run on their own"
        tests = [test] if isinstance(test, str) else list(test)
        if how.from_test and self.alone.rootdir and not from_root:
            tests = self.given(tests, tree, extra)
        commands = how.commands(tests, each=each, grouped=grouped)
        with self._repo_lock:
            skey = setup_key(self.repo, tree, self.config)
        runs = self._execute(tree, side, "test_one", commands, extra, skey, worktree, trace)
        for run in runs:  # its ids as the test command's records name them
            self.alone.reframe(run)
            focus.as_asked(run, tests)
        return runs

    def given(self, tests: list[str], tree: str, extra: Extra | None = None) -> list[str]:
        """``tests`` as a derived ``test_one`` takes them on ``tree`` (focus.Alone.from_root)."""
        with self._repo_lock:
            found = tree_at(self.repo, tree)
            written = set(extra.files) if extra is not None else set()
            return self.alone.from_root(tests, lambda path: path in found, written)

    def _execute(
        self,
        tree: str,
        side: str,
        name: RunName,
        commands: Sequence[str | IdCommand],
        extra: Extra | None,
        skey: str | None,
        held: Worktree | None = None,
        trace: ChangedLines | None = None,
        *,
        reach: bool = False,
    ) -> list[Run]:
        """Setup (when needed) and ``commands`` in ``held``, else in a worktree of the pool's."""
        out: list[Run] = []
        untrusted = extra is not None and bool(extra.files or extra.patch)
        jail = self.jail(untrusted)
        if jail is False:
            return [self._not_run(side, name, _shown(commands[0]), tree,
                                  f"no sandbox for code nobody confirmed: {self.unsandboxed} "
                                  '(sandbox = "require")')]  # fmt: skip
        with contextlib.nullcontext(held) if held is not None else self.pool.acquire() as worktree:
            self.progress.phase(f"checking out the {side} ({tree[:7]})")
            self.prepare(worktree, tree)
            env, failed = self._environment(worktree, side, tree)
            if failed is not None:
                self.progress.finished(failed)
                return [failed]
            env = repointed(project_env() if env is None else env, self.pool.paths.root,
                            worktree.path)  # fmt: skip
            setup_run = self._setup(worktree, side, tree, skey, env)
            if setup_run is not None:
                out.append(setup_run)
                if setup_run.status != "PASSED":
                    return out
            self.put(worktree, extra)
            if jail is not None:  # (`sandbox = "all"`: what its code writes goes too, helper-58)
                worktree.taint()
            commands = [_in_worktree(c, self.pool, worktree.path) for c in commands]
            for command in commands:
                for test_id in command.args if isinstance(command, IdCommand) else ():
                    inside(worktree.path, id_path(test_id))
            if untrusted:  # its temporary files are the review's, sandboxed or not
                env["TMPDIR"] = str(self.private() / "tmp")
            for command in commands:
                out.append(
                    self._run_tests(worktree, side, tree, command, name, env, trace, jail, reach)
                )
        return out

    def _not_run(self, side: str, name: RunName, command: str, tree: str, reason: str) -> Run:
        run = self._record(side, name, command, tree, CommandResult("ERROR", None, 0.0, "", reason))
        self.progress.finished(run)
        return run

    def _leaked(self, attempt: testrun.Attempt, worktree: Worktree) -> str | None:
        """Why a pytest run took its configuration from the user's working tree, or None."""
        if attempt.record is None or attempt.record.runner != "pytest":
            return None
        return imports.config_from_user_tree(
            attempt.record.rootdir, attempt.record.inifile, worktree.path, self.pool.paths.root
        )

    def _run_tests(
        self,
        worktree: Worktree,
        side: str,
        tree: str,
        given: str | IdCommand,
        name: RunName,
        env: dict[str, str] | None = None,
        trace: ChangedLines | None = None,
        jail: Jail | None = None,
        reach: bool = False,
    ) -> Run:
        """One test command in ``worktree``, read from its runner's record (eyeful/testrun.py);
        run again with the worktree's import roots first when it imported the user's tree."""
        report: Path | None = None
        command = given.shown if isinstance(given, IdCommand) else given
        if name == "test" and self.config.junit:
            try:
                report = _project_report(worktree, self.config.junit)
            except Refused as err:  # never remove a file outside the worktree
                return self._not_run(side, name, command, tree, f"junit {err}")
            if not report.is_dir():
                report.unlink(missing_ok=True)
        label = "tests" if name == "test" else "one test"
        self.progress.started(f"{label} on the {side}", command)
        env = project_env() if env is None else env
        attempt = self._attempt(worktree, given, env, report, trace, jail, reach)
        with contextlib.ExitStack() as stop:
            if self._leaked(attempt, worktree) is not None:
                # The tree has no pytest configuration where pytest looks, and pytest went up to
                # the user's (eyeful's worktrees lie inside it): once more, stopped at the
                # worktree's root, as in a clone of the tree, where there is nothing above.
                stop.enter_context(imports.config_stop(worktree.path))
                attempt = self._attempt(worktree, given, env, report, trace, jail, reach)
            wrong = attempt.imported_from(self.pool.paths.root)
            if wrong:
                roots = imports.worktree_roots(wrong, self.pool.paths.root, worktree.path)
                attempt = self._attempt(
                    worktree, given, imports.with_roots_first(env, roots), report, trace, jail,
                    reach,
                )  # fmt: skip
                wrong = attempt.imported_from(self.pool.paths.root)
            leaked = self._leaked(attempt, worktree)
        run = self._record(side, name, command, tree, attempt.result)
        stale = imports.stale_copies(attempt.record.shadowed, worktree.path) if (
            attempt.record is not None
        ) else []  # fmt: skip
        if wrong:
            run.status, run.reason = "ERROR", imports.wrong_code(wrong, self.pool.paths.root)
        elif stale:
            run.status, run.reason = "ERROR", imports.stale_code(stale)
        elif leaked is not None:
            run.status, run.reason = "ERROR", leaked
        else:
            context = testrun.Context(
                command, side, name, self.config, worktree.path, report, jail is not None,
                go_flags(env),
            )  # fmt: skip
            said = testrun.read(attempt, context)
            run.status, run.reason, run.tests, run.tests_from = (
                said.status,
                said.reason,
                said.tests,
                said.tests_from,
            )
            run.collected, run.stopped, run.none_ran = said.collected, said.stopped, said.none_ran
            run.read_from_text = attempt.why_text
            run.kinds, run.executed = said.kinds, said.executed
            run.executed_at_import = said.executed_at_import or None
            run.executed_in_module = said.executed_in_module or None
            run.entered, run.read_as_text = said.entered or None, said.read_as_text or None
            run.looked_by_tests = said.looked_by_tests or None
            run.beyond_trace = said.beyond_trace
            run.edited_entered = said.edited_entered
            run.outcome_hooks = said.outcome_hooks or None
            run.left_out = said.left_out or None
            run.hidden = said.hidden or None
            run.ran = said.ran
            run.looked = said.looked or None
            run.failures = said.failures or None
            run.skips = said.skips or None
            run.reached, run.reached_from = said.reached, said.reached_from
            run.mapped = reach
            run.rootdir = focus.rootdir_in(worktree.path, said.rootdir)
            run.narrowed = said.narrowed
            _ids_in_your_tree(run, worktree.path, self.pool.paths.root)
            run.invocation = attempt.record.invocation if attempt.record is not None else None
        run.sandboxed = jail is not None
        self.progress.finished(run)
        return run

    def _attempt(
        self,
        worktree: Worktree,
        given: str | IdCommand,
        env: dict[str, str],
        report: Path | None,
        trace: ChangedLines | None = None,
        jail: Jail | None = None,
        reach: bool = False,
    ) -> testrun.Attempt:
        return testrun.attempt(
            given, worktree.path, env, self.tmp_dir, self.config.timeout,
            sections=report is None, trace=trace, jail=jail, reach=reach,
            imports=self.cache.shared_file("imports") if reach else None,
        )  # fmt: skip
