"""Which tests a change can affect (`select = "affected"`): the map of the repository files each
test ran, recorded by the probe in every full pytest run of a review that selects by it
(eyeful/data/probe; `Runner.maps`), and the selection made from the most recent map of an
ancestor.

The rule: a change runs the tests that ran any changed file, the tests of changed or added test
files, and the tests that failed when the map was recorded. It runs the whole suite when that
cannot be trusted: a changed file that is not Python code a test ran (data, ``conftest.py``,
configuration, a setup input), no map within ``affected_max_age`` commits, a runner other than
pytest.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

import pygit2
from pydantic import BaseModel, Field

from eyeful import focus
from eyeful.cache import Cache, cache_key
from eyeful.config import Config
from eyeful.records import Invocation
from eyeful.results import is_pytest_command

MAX_WALK = 1000
"""Commits looked back for a map: past ``affected_max_age`` only to say how old it is."""


class Map(BaseModel):
    """One full run's map: for each test, the repository files whose code it ran."""

    tree: str
    tests: dict[str, list[str]]
    failed: list[str] = []
    invocation: Invocation | None = None
    """pytest's parse of the test command in that run: the selected tests run by the
    ``test_one`` derived from it (eyeful/focus.py)."""


class Selection(BaseModel):
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


def map_key(tree: str, command: str) -> str:
    return cache_key(map=tree, test=command)


def recorded(
    tree: str, reached: dict[str, list[str]], failed: set[str], invocation: Invocation | None
) -> dict[str, object]:
    """The cache entry of a full run's map (with that run's parse of the test command)."""
    return Map(tree=tree, tests=reached, failed=sorted(failed), invocation=invocation).model_dump()


@dataclass(frozen=True)
class Found:
    map: Map | None
    age: int | None
    """Commits between the map's and the base (0: recorded on the base)."""


def latest(repo: pygit2.Repository, cache: Cache, command: str, commit: str | None) -> Found:
    """The most recent map on ``commit`` or its first-parent ancestors."""
    age = 0
    at = repo.get(commit) if commit else None
    while isinstance(at, pygit2.Commit) and age < MAX_WALK:
        found = cache.get("maps", map_key(str(at.tree_id), command), Map.model_validate)
        if found is not None:
            return Found(found, age)
        at = at.parents[0] if at.parents else None
        age += 1
    return Found(None, None)


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


def _setup_input(path: str, patterns: tuple[str, ...]) -> bool:
    pure = PurePosixPath(path)
    for pattern in patterns:
        wanted = PurePosixPath(pattern)
        if wanted.parent == pure.parent and fnmatchcase(pure.name, wanted.name):
            return True
    return False


def _in_tree(repo: pygit2.Repository, tree: str, path: str) -> bool:
    found = repo.get(tree)
    try:
        return isinstance(found, pygit2.Tree) and found[path] is not None
    except KeyError:
        return False


def why_all(path: str, config: Config, ran: set[str]) -> str | None:
    """Why a change to ``path`` needs the whole suite; None when the map can tell."""
    if not path.endswith(".py"):
        return f"`{path}` is not Python code: a test may read it"
    if PurePosixPath(path).name == "conftest.py":
        return f"`{path}` is a conftest.py: it shapes every test under it"
    if _setup_input(path, config.setup_inputs):
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
) -> Selection:
    """The tests ``tree`` (the change) can affect, from the latest map on ``base_commit``'s
    line; ``cached``: the whole suite's run on ``tree`` is in the cache already. Hold the
    repository's lock around it (pygit2)."""
    command = config.commands.test or ""
    if not is_pytest_command(command):
        return Selection(why_all="the test command is not pytest: only pytest records a map")
    if cached:
        return Selection(why_all="the whole suite's run on this tree was cached")
    if focus.of(command, config.commands.test_one) is None:
        return Selection(why_all="the test command cannot run chosen tests")
    found = latest(repo, cache, command, base_commit)
    if found.map is None or found.age is None:
        return Selection(why_all="no map of what each test ran yet (a full run records one)")
    known = found.map
    base = Selection(map_tree=known.tree, map_tests=len(known.tests), invocation=known.invocation)
    how = focus.of(command, config.commands.test_one, known.invocation)
    if how is None or not how.ready:
        base.why_all = "the map's run recorded no pytest parse of the test command to run tests by"
        return base
    if found.age > config.affected_max_age:
        base.why_all = (
            f"the last map is {found.age} commits old (affected_max_age = "
            f"{config.affected_max_age})"
        )
        return base
    changed, present = _changes(repo, known.tree, tree)
    ran = {f for files in known.tests.values() for f in files}
    test_files = {t.split("::")[0] for t in known.tests}
    chosen: set[str] = set()
    files: set[str] = set()
    for path in changed:
        why = why_all(path, config, ran | test_files)
        if why is not None:
            base.why_all = why
            return base
        if path in present and (path in test_files or _is_test_file(path)):
            files.add(path)
        chosen.update(t for t, used in known.tests.items() if path in used)
    chosen.update(known.failed)
    kept = {t for t in chosen if t.split("::")[0] not in files}
    kept = {t for t in kept if _in_tree(repo, tree, t.split("::")[0])}
    if not kept and not files:
        base.why_all = "the map names no test the change can affect"
        return base
    base.ids = sorted(files) + sorted(kept)
    return base
