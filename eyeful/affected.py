"""Which tests a change can affect (`select = "affected"`): the map of the repository files each
test could see, recorded by the probe in every full pytest run of a review that selects by it
(eyeful/data/probe; `Runner.maps`), its test ids made repository paths whatever pytest's
rootdir, and the selection made from the map of the nearest recorded tree: on the base's
first-parent line, or a recent change's (a staged change committed otherwise since).

A test could see: the files whose code ran while it ran, the files reached while each fixture it
uses was set up (whichever test set it up), the files it opened or loaded by name, and the import
closure of all these, of its test module and of the conftest and package ``__init__`` files
above it (the map's import graph). A test whose run cannot be traced (a child process, the
tracer removed) could see anything: it always runs. What one test leaves for another (a cache,
a global) is not followed.

The rule: a change runs the tests that could see any file that differs between the map's tree
and the change, the tests of changed or added test files, the tests that cannot be traced, and
the tests that failed when the map was recorded, given as the test command takes them. It runs
the whole suite when that cannot be trusted: a changed file that is not Python code the map
knows (data, ``conftest.py``, configuration, a setup input), a deleted module (a test may list
its directory), no map within
``affected_max_age`` commits, a runner other than pytest, a selected file the command cannot be
given.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pygit2
from pydantic import Field

from eyeful import focus
from eyeful.cache import Cache, cache_key
from eyeful.config import Config, setup_input
from eyeful.environment import environment_key
from eyeful.importtime import ANY_FUNCTION, at_import
from eyeful.model import Model
from eyeful.records import Invocation, MapPlace, Reached
from eyeful.results import is_pytest_command
from eyeful.snapshot import blob_at, tree_at

MAX_WALK = 1000
"""Commits looked back for a map: past ``affected_max_age`` only to say how old it is."""
ONE_PER_COMMAND = "`test_one` runs one test per command, not a plain pytest"
RECENT = 8
"""Maps of changes made on a commit (staged changes' trees) kept to serve later changes."""
MAP_VERSION = 4
"""Maps of an older probe (no import graph, no untraceable tests) are not used."""


class Map(Model):
    """One full run's map: for each test (its id a repository path, whatever pytest's rootdir),
    the repository files it could see (eyeful.records: ``Reached``)."""

    tree: str
    tests: dict[str, list[str]]
    failed: list[str] = Field(default_factory=list)
    imports: dict[str, list[str]] = Field(default_factory=dict)
    """The import graph (repository paths): the files whose namespace each file takes."""
    parents: dict[str, list[str]] = Field(default_factory=dict)
    """The packages each file's imports only pass through (their ``__init__.py`` runs)."""
    everything: dict[str, str] = Field(default_factory=dict)
    """The tests whose run cannot be traced (a child process, the tracer removed), and why."""
    at_import: dict[str, list[int]] | None = None
    """The functions that ran outside any test (an import), by file: their first lines (None:
    not recorded)."""
    rootdir: str = ""
    """pytest's rootdir, relative to the repository (``""``: its root)."""
    started: str | None = ""
    """The directory pytest started in, where the paths given to it start (None: outside)."""
    invocation: Invocation | None = None
    """pytest's parse of the test command in that run: the selected tests run by the
    ``test_one`` derived from it (eyeful/focus.py)."""


class Selection(Model):
    """What the change's run covers: the selected ids and test files, or the whole suite (and
    why). Carried in the report (JSON, SARIF) as it is."""

    mode: str = "affected"
    ids: list[str] | None = None
    """The test ids and test files run in place of the suite; None: the whole suite ran."""
    why_all: str | None = None
    map_tree: str | None = None
    """The tree whose full run recorded the map (the full suite last ran there)."""
    map_tests: int | None = None
    """How many tests the map knows: the suite's size when it was recorded."""
    invocation: Invocation | None = Field(default=None, exclude=True)
    """The map's run's parse of the test command, for the selected tests' run (not reported)."""
    rootdir: str = Field(default="", exclude=True)
    """The map's run's rootdir (a repository path), where the records' ids start (not
    reported)."""


def map_key(tree: str, command: str, environment: object) -> str:
    """A map's cache key: the tree, the command and the environment it ran in (the variables
    `env` names, ``PYTEST_*``, what is installed: a map recorded under `CALC_IMPL` unset, or
    `PYTEST_ADDOPTS="-m 'not slow'"`, says nothing of a run with it: helper-82), PATH without
    git's own directory, which git puts first for `git eyeful` (a tool a test looks for on PATH
    decides what it runs: helper-84)."""
    if isinstance(environment, Mapping) and isinstance(environment.get("PATH"), str):
        kept = [d for d in environment["PATH"].split(os.pathsep) if not _gits_own(d)]
        environment = {**environment, "PATH": os.pathsep.join(kept)}
    return cache_key(map=tree, test=command, environment=environment, version=MAP_VERSION)


def _gits_own(directory: str) -> bool:
    """Whether ``directory`` is git's exec-path (it holds git's own shell library)."""
    return bool(directory) and (Path(directory) / "git-sh-setup").is_file()


def _placed(rootdir: str, test: str) -> str | None:
    """A test id of pytest's (relative to its rootdir) as a repository path; None outside."""
    file, sep, rest = test.partition("::")
    path = posixpath.normpath(posixpath.join(rootdir, file)) if rootdir else file
    if path == ".." or path.startswith("../") or path.startswith("/"):
        return None
    return path + sep + rest


def recorded(
    tree: str,
    reached: Reached,
    failed: set[str],
    place: MapPlace | None,
    invocation: Invocation | None,
) -> dict[str, object] | None:
    """The cache entry of a full run's map (with that run's parse of the test command), its ids
    made repository paths; None when pytest's rootdir or a test is outside the repository (no
    map then)."""
    place = place or MapPlace()
    if place.rootdir is None:
        return None
    tests: dict[str, list[str]] = {}
    for test, files in reached.tests.items():
        where = _placed(place.rootdir, test)
        if where is None:
            return None
        tests[where] = files
    failing = [_placed(place.rootdir, test) for test in sorted(failed)]
    everything = {_placed(place.rootdir, test): why for test, why in reached.everything.items()}
    if any(test is None for test in [*failing, *everything]):
        return None
    return Map(
        tree=tree,
        tests=tests,
        failed=[t for t in failing if t is not None],
        imports=reached.imports,
        parents=reached.parents,
        everything={t: why for t, why in everything.items() if t is not None},
        at_import=reached.at_import,
        rootdir=place.rootdir,
        started=place.started,
        invocation=invocation,
    ).model_dump()


def arguments(tests: list[str], start: str | None) -> list[str] | str:
    """The selected ids and test files (repository paths) as the test command takes them:
    relative to ``start``, the directory its ids start from (a repository path); why not, when
    one is not below it."""
    if start is None:
        return "pytest's ids start outside the repository: the map's cannot be given to it"
    if not start:
        return list(tests)
    given = []
    for test in tests:
        file, sep, rest = test.partition("::")
        if not file.startswith(start + "/"):
            return f"`{file}` is outside `{start}`, where the test command's ids start"
        given.append(file[len(start) + 1 :] + sep + rest)
    return given


class _Recent(Model):
    """The maps recorded for changes made on a commit (a staged change's tree), newest first."""

    maps: list[tuple[str, str]] = Field(default_factory=list)
    """(tree, the commit the change was made on)."""


def _recent_key(command: str) -> str:
    return cache_key(recent_maps=command)


def remember(cache: Cache, command: str, tree: str, on: str, environment: object) -> None:
    """The change ``tree``, made on commit ``on``: where it has a map, kept among the recent
    ones, which serve after the change was committed otherwise."""
    if cache.get("maps", map_key(tree, command, environment), dict) is None:
        return
    known = cache.get("recent_maps", _recent_key(command), _Recent.model_validate) or _Recent()
    kept = [(t, c) for t, c in known.maps if t != tree][: RECENT - 1]
    cache.put("recent_maps", _recent_key(command), _Recent(maps=[(tree, on), *kept]).model_dump())


@dataclass(frozen=True)
class Found:
    map: Map
    age: int
    """Commits between the map's and the base (0: recorded on the base, or on a change made
    on it)."""


def _line(repo: pygit2.Repository, commit: str | None) -> list[pygit2.Commit]:
    """``commit`` and its first-parent ancestors, nearest first (at most MAX_WALK)."""
    found: list[pygit2.Commit] = []
    at = repo.get(commit) if commit else None
    while isinstance(at, pygit2.Commit) and len(found) < MAX_WALK:
        found.append(at)
        at = at.parents[0] if at.parents else None
    return found


def _steps(repo: pygit2.Repository, start: str, to: str, limit: int) -> int | None:
    """First-parent steps from ``start`` back to ``to`` (None: not within ``limit``)."""
    at = repo.get(start)
    for steps in range(limit + 1):
        if not isinstance(at, pygit2.Commit):
            return None
        if str(at.id) == to:
            return steps
        at = at.parents[0] if at.parents else None
    return None


def candidates(
    repo: pygit2.Repository, cache: Cache, command: str, commit: str | None, max_age: int,
    environment: object,
) -> list[Found]:  # fmt: skip
    """The maps that could serve a change made on ``commit``: the nearest recorded on its
    first-parent line, and the recent ones of changes made on it or on an ancestor within
    ``max_age`` commits (a staged change's tree, committed otherwise since)."""
    found: list[Found] = []
    line = _line(repo, commit)
    ages = {str(c.id): age for age, c in enumerate(line)}
    for age, at in enumerate(line):
        known = cache.get(
            "maps", map_key(str(at.tree_id), command, environment), Map.model_validate
        )
        if known is not None:
            found.append(Found(known, age))
            break
    recent = cache.get("recent_maps", _recent_key(command), _Recent.model_validate)
    if recent is None or commit is None:
        return found
    for tree, on in recent.maps:
        try:
            fork = repo.merge_base(on, commit)
        except (ValueError, KeyError, pygit2.GitError):
            continue
        below = ages.get(str(fork)) if fork is not None else None
        aside = _steps(repo, on, str(fork), max_age) if below is not None else None
        known = cache.get("maps", map_key(tree, command, environment), Map.model_validate)
        if known is not None and below is not None and aside is not None:
            found.append(Found(known, below + aside))
    return found


def _changes(repo: pygit2.Repository, old: str, new: str) -> tuple[list[str], set[str]]:
    """The paths that differ between two trees, and those present in the new one."""
    diff = repo.diff(old, new)
    diff.find_similar()
    changed: list[str] = []
    present: set[str] = set()
    for delta in diff.deltas:
        for path in {delta.old_file.path, delta.new_file.path}:
            changed.append(path)
        if delta.status != pygit2.enums.DeltaStatus.DELETED:
            present.add(delta.new_file.path)
    return sorted(set(changed)), present


def _is_test_file(path: str) -> bool:
    name = PurePosixPath(path).name
    return name.startswith("test_") or name.endswith("_test.py")


def _in_tree(repo: pygit2.Repository, tree: str, path: str) -> bool:
    found = repo.get(tree)
    try:
        return isinstance(found, pygit2.Tree) and found[path] is not None
    except KeyError:
        return False


def _above(test_file: str) -> list[str]:
    """The conftest.py files above a test file (they shape its tests), and the ``__init__.py``
    files of the packages it may live in (its import passes through them: ``pkg/test_x.py`` is
    ``pkg.test_x``, whichever module's collection ran ``pkg/__init__.py`` first)."""
    folders = PurePosixPath(test_file).parents
    return [
        str(folder / name) if str(folder) != "." else name
        for folder in folders
        for name in ("conftest.py", "__init__.py")
    ]


def _packages_above(test_file: str) -> list[str]:
    """The ``__init__.py`` files of the packages a test file may live in (:func:`_above`)."""
    return [f for f in _above(test_file) if PurePosixPath(f).name == "__init__.py"]


def _seeing(known: Map, changed: list[str], at_import: set[str]) -> tuple[set[str], set[str]]:
    """The changed files and every file whose import closure holds one of them: through the
    imports whose namespace a file takes, transitively; through a package its imports only pass
    (``a`` of ``from a.b import c``), only when what that package's ``__init__.py`` runs at its
    import changed: ``at_import`` holds the changed files whose import runs other code now
    (eyeful/importtime.py), the package's own file or one its import runs, in any way. And,
    apart, the files whose import runs changed code (a test module living in such a package
    passes through it)."""
    taken: dict[str, set[str]] = {}  # a file -> the files that take its namespace
    run: dict[str, set[str]] = {}  # a file -> the files whose import runs it
    for graph, importers in ((known.imports, taken), (known.imports, run), (known.parents, run)):
        for path, found in graph.items():
            for target in found:
                importers.setdefault(target, set()).add(path)
    imported = _closure(at_import, run)
    seen = set(changed)
    for path, found in known.parents.items():
        if not imported.isdisjoint(found):
            seen.add(path)
    return _closure(seen, taken), imported


def _called(known: Map) -> dict[str, list[int]] | None:
    """The first lines of the functions run at an import, by file, each file's also under
    every file it reads (a tracer that named a function's file by its module's globals recorded
    what a file runs by ``exec`` as the runner's); a file whose code ran unwatched
    (:data:`ANY_FUNCTION`: pytest's rewritten test modules among them) says nothing of the
    files it imports, which their own entries say."""
    if known.at_import is None:
        return None
    called = {path: list(lines) for path, lines in known.at_import.items()}
    for reader, found in known.imports.items():
        lines = [n for n in known.at_import.get(reader, ()) if n != ANY_FUNCTION]
        for path in found:
            called.setdefault(path, []).extend(lines)
    return called


def _closure(start: set[str], importers: Mapping[str, Iterable[str]]) -> set[str]:
    """``start`` and every file that imports one of them, transitively (or, given the graph the
    other way, every file one of them imports)."""
    seen = set(start)
    todo = list(seen)
    while todo:
        for path in importers.get(todo.pop(), ()):
            if path not in seen:
                seen.add(path)
                todo.append(path)
    return seen


def _python(changed: list[str], present: set[str]) -> list[str]:
    """The changed Python files the change kept."""
    return [p for p in changed if p.endswith(".py") and p in present]


def _reached(known: Map, test_files: set[str]) -> set[str]:
    """The files a test of the map could see: its entries, its test file and the conftest and
    package files above it, and all they import, transitively. Not every file of the import
    graph: it holds what was loaded before any test (a plugin's module-level code, what that
    imports), which no test's entry holds and no change to would select."""
    start = {f for files in known.tests.values() for f in files}
    start |= test_files | {f for t in test_files for f in _above(t)}
    forward = {
        path: set(known.imports.get(path, ())) | set(known.parents.get(path, ()))
        for path in known.imports.keys() | known.parents.keys()
    }
    return _closure(start, forward)


def _function_id(test: str) -> str:
    """A parametrized test's function (``t.py::test_x[1]`` -> ``t.py::test_x``): its
    parameters may come from the changed files, so they run all, under their ids of now."""
    first = test.find("::")  # names hold no "[", a parameter id may hold "::" (`[x::y]`)
    bracket = test.find("[", first) if first >= 0 else -1
    return test[:bracket] if bracket > 0 and test.endswith("]") else test


def why_all(path: str, config: Config, ran: set[str]) -> str | None:
    """Why a change to ``path`` needs the whole suite; None when the map can tell."""
    if not path.endswith(".py"):
        return f"`{path}` is not Python code: a test may read it"
    if PurePosixPath(path).name == "conftest.py":
        return f"`{path}` is a conftest.py: it shapes every test under it"
    if setup_input(path, config.setup_inputs):
        return f"`{path}` is a setup input"
    if path not in ran and not _is_test_file(path):
        return f"`{path}` ran in no test of the map (a script, a module new to it?)"
    return None


def select(
    repo: pygit2.Repository,
    cache: Cache,
    config: Config,
    base_commit: str | None,
    tree: str,
    *,
    cached: bool = False,
    mapped: bool = True,
    environment: object = None,
) -> Selection:
    """The tests ``tree`` (the change) can affect, from the map of the nearest tree recorded
    (:func:`candidates`) that differs from it in fewest files; ``cached``: the whole suite's run
    on ``tree`` is in the cache already. Hold the repository's lock around it (pygit2)."""
    command = config.commands.test or ""
    if not is_pytest_command(command):
        return Selection(why_all="the test command is not pytest: only pytest records a map")
    if cached and mapped:
        return Selection(why_all="the whole suite's run on this tree was cached")
    if cached:  # (helper-54: it said cached, and the run was live)
        return Selection(why_all="the whole suite runs again to record a map of what each test "
                                 "ran: its cached run on this tree recorded none")  # fmt: skip
    how = focus.of(command, config.commands.test_one)
    if how is None:
        return Selection(why_all="the test command cannot run chosen tests")
    if how.ready and not how.several:
        return Selection(why_all=ONE_PER_COMMAND)
    if environment is None:  # (a caller without a review's runner: a benchmark, a test)
        isolate = config.effective_isolate == "venv"
        environment = environment_key(config.env, Path(repo.workdir or "."), isolate=isolate)
    found = candidates(repo, cache, command, base_commit, config.affected_max_age, environment)
    if not found:
        return Selection(why_all="no map of what each test ran yet (a full run records one)")
    young = [f for f in found if f.age <= config.affected_max_age]
    if not young:
        nearest = min(found, key=lambda f: f.age)
        return Selection(
            map_tree=nearest.map.tree,
            map_tests=len(nearest.map.tests),
            invocation=nearest.map.invocation,
            why_all=(
                f"the last map is {nearest.age} commits old (affected_max_age = "
                f"{config.affected_max_age})"
            ),
        )
    diffs = {f.map.tree: _changes(repo, f.map.tree, tree) for f in young}
    best = min(young, key=lambda f: (len(diffs[f.map.tree][0]), f.age))
    return _by_map(repo, config, best.map, tree, *diffs[best.map.tree])


def _by_map(
    repo: pygit2.Repository,
    config: Config,
    known: Map,
    tree: str,
    changed: list[str],
    present: set[str],
) -> Selection:
    """The tests ``known`` says the files that differ between its tree and ``tree`` can
    affect, as the test command takes them."""
    base = Selection(map_tree=known.tree, map_tests=len(known.tests), invocation=known.invocation,
                     rootdir=known.rootdir)  # fmt: skip
    how = focus.of(config.commands.test, config.commands.test_one, known.invocation)
    if how is None or not how.ready:
        base.why_all = "the map's run recorded no pytest parse of the test command to run tests by"
        return base
    if not how.several:
        base.why_all = ONE_PER_COMMAND
        return base
    test_files = {t.split("::")[0] for t in known.tests}
    ran = _reached(known, test_files)
    linked = _linked(repo, tree, changed)
    if linked is not None:
        base.why_all = linked
        return base
    files: set[str] = set()
    for path in changed:
        why = why_all(path, config, ran | test_files)
        if why is None and path not in present and not _is_test_file(path):
            why = f"`{path}` was deleted: a test may list its directory"  # the map holds none
        if why is not None:
            base.why_all = why
            return base
        if path in present and (path in test_files or _is_test_file(path)):
            if path not in test_files and not _under(path, known.rootdir):
                base.why_all = f"`{path}` is a test file outside pytest's rootdir `{known.rootdir}`"
                return base
            files.add(path)
    ran_at_import = at_import(repo, known.tree, tree, _python(changed, present), _called(known))
    seeing, imported = _seeing(known, changed, ran_at_import)
    chosen = set()
    for test, used in known.tests.items():
        file = test.split("::")[0]
        shaping = [file, *(f for f in _above(file) if f.endswith("conftest.py"))]
        if (
            not seeing.isdisjoint(used)
            or not seeing.isdisjoint(shaping)
            or not imported.isdisjoint(_packages_above(file))
        ):
            chosen.add(test)
    chosen.update(known.everything)
    chosen.update(known.failed)
    kept = {_function_id(t) for t in chosen if t.split("::")[0] not in files}
    kept = {t for t in kept if _in_tree(repo, tree, t.split("::")[0])}
    if not kept and not files:
        base.why_all = "the map names no test the change can affect"
        return base
    # A derived `test_one` takes paths from where pytest started; a configured one, pytest's
    # ids (relative to its rootdir), as in every confirmation.
    start = known.started if how.from_test else known.rootdir
    given = arguments(sorted(files) + sorted(kept), start)
    if isinstance(given, str):
        base.why_all = given
        return base
    base.ids = given
    return base


def _linked(repo: pygit2.Repository, tree: str, changed: list[str]) -> str | None:
    """Why the map cannot tell for a changed file that a symbolic link of the tree leads to (or
    into): the map names a file by the path a test imported it by (`calc.py -> impl/core.py`:
    `calc.py`), so the change to `impl/core.py` would select none of its tests (helper-53)."""
    wanted = set(changed)
    for path, target in _links(repo, tree_at(repo, tree), ""):
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if target.startswith("/") or joined == ".." or joined.startswith("../"):
            continue  # out of the tree: what it leads to is not the change's
        hit = next(
            (
                c
                for c in sorted(wanted - {path})
                if joined == "." or c == joined or c.startswith(joined + "/")
            ),
            None,
        )  # (a link to the root, `mypkg -> .`, leads to every file: helper-55)
        if hit is not None:
            return f"`{hit}` is reached through the link `{path}`: the map names the link"
    return None


def _links(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> Iterator[tuple[str, str]]:
    """Every symbolic link of a tree, with its path and target."""
    for entry in tree:
        kind = entry.type_str
        if kind == "tree":
            yield from _links(repo, tree_at(repo, entry.id), f"{prefix}{entry.name}/")
        elif kind == "blob" and entry.filemode == pygit2.enums.FileMode.LINK:
            target = blob_at(repo, entry.id).data.decode("utf-8", "surrogateescape")
            yield f"{prefix}{entry.name}", target


def _under(path: str, folder: str) -> bool:
    return not folder or path.startswith(folder + "/")
