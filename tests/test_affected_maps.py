"""Where the map of what each test ran comes from (issue 32, points 3-5): recorded with a
coverage tool on (pytest-cov in `addopts`: coverage.py's tracer takes the place of eyeful's, so
the map is read from coverage.py's own per-test data), kept in repository paths whatever pytest's
rootdir, and served from any recorded tree (a staged change's, later committed otherwise), by
the files that differ between that tree and the change."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path

import pygit2
import pytest

from eyeful import affected
from tests.conftest import seal
from tests.core import Reviewed, record_map, review
from tests.gitrepo import (
    PYTEST,
    PYTEST_INI,
    PYTHON,
    confirm,
    eyeful_config,
    git,
    make_repo,
    stage,
)

AFFECTED = 'select = "affected"\naffected_max_age = 1'


def _tests(name: str, n: int) -> str:
    return (
        f"from pkg import {name}\n\n\n"
        f"def test_{name}_value():\n    assert {name}.value() == {n}\n\n\n"
        f"def test_{name}_twice():\n    assert {name}.value() * 2 == {2 * n}\n"
    )


def _project(under: str = "") -> dict[str, str | bytes]:
    """Three modules and their tests (two each), under ``under``."""
    files: dict[str, str | bytes] = {f"{under}pkg/__init__.py": ""}
    for n, name in enumerate("abc", 1):
        files[f"{under}pkg/{name}.py"] = f"def value():\n    return {n}\n"
        files[f"{under}tests/test_{name}.py"] = _tests(name, n)
    return files


def _ids(name: str, folder: str = "tests/") -> set[str]:
    return {f"{folder}test_{name}.py::test_{name}_{kind}" for kind in ("value", "twice")}


def _ran(done: Reviewed) -> set[str]:
    """The tests the change's test runs ran (their records' ids; a `test_one` that is not a
    plain pytest runs one command per test)."""
    runs = [r for r in done.json["runs"] if r["name"] == "test" and r["side"] == "change"]
    return {test for run in runs for test in run["collected"]}


def _maps(repo: Path) -> list[dict[str, object]]:
    folder = repo / ".git" / "eyeful" / "cache" / "maps"
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*/*.json"))]


def _reset(repo: Path) -> None:
    git(repo, "reset", "-q", "--hard")
    git(repo, "clean", "-qfd")


# Point 3: pytest-cov in addopts. A real pytest-cov, installed from PyPI into one virtualenv for
# this module, whose `python` finds this interpreter's pytest through a `.pth`.


BLIND = """import pytest

from pkg import a


@pytest.mark.no_cover
def test_blind():
    assert a.value() == 1
"""
BLINDED = "tests/test_blind.py::test_blind"  # coverage does not measure it: it depends on all
MONITORED = sys.version_info >= (3, 12)
"""From 3.12 the map beside coverage is eyeful's own ``sys.monitoring`` watch, not coverage's data
(eyeful_probe_cov.watch): it sees what a ``no_cover`` test ran (a.py only, not every file
coverage measured), and it switches no coverage contexts, so xdist's workers record it too."""
BLIND_TOO = set() if MONITORED else {BLINDED}  # selected for a change to any measured file


@pytest.fixture(scope="module")
def covered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        where = tmp_path_factory.mktemp("covered")
        venv = where / "venv"
        subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
        (site,) = (venv / "lib").glob("python*/site-packages")
        (site / "zz_eyeful_tests.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        subprocess.run(
            [PYTHON, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
             "--disable-pip-version-check", "pytest-cov"],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
        pytest_ = f"{venv / 'bin' / 'python'} -m pytest -q -p no:cacheprovider"
        ini = "[pytest]\npythonpath = .\naddopts = -p pytest_cov.plugin --cov=pkg --cov-report=\n"
        repo = make_repo(
            where / "repo",
            {
                "pyproject.toml": eyeful_config(pytest_, test_one=f"{pytest_} {{test}}",
                                                extra=AFFECTED),
                "pytest.ini": ini,
                ".gitignore": ".coverage*\n",
                "tests/test_blind.py": BLIND,
                **_project(),
            },
        )  # fmt: skip
        record_map(repo)
        yield repo


@pytest.fixture
def cov_repo(covered: Path) -> Iterator[Path]:
    confirm(covered)
    yield covered
    _reset(covered)


def test_with_pytest_cov_in_addopts_a_full_run_records_the_map(cov_repo: Path) -> None:
    head = git(cov_repo, "rev-parse", "HEAD^{tree}").strip()
    (found,) = [m for m in _maps(cov_repo) if m["tree"] == head]
    tests = found["tests"]
    assert isinstance(tests, dict) and len(tests) == 7
    assert "pkg/a.py" in tests["tests/test_a.py::test_a_value"]
    assert "pkg/b.py" not in tests["tests/test_a.py::test_a_value"]
    if MONITORED:
        assert "pkg/a.py" in tests[BLINDED] and "pkg/b.py" not in tests[BLINDED]
    else:
        assert {"pkg/a.py", "pkg/b.py", "pkg/c.py"} <= set(tests[BLINDED])


def test_with_pytest_cov_a_one_module_change_runs_its_tests(cov_repo: Path) -> None:
    stage(cov_repo, {"pkg/b.py": "def value():\n    return 2  # the same\n"})
    done = review(cov_repo, format="json", all_tests=True)
    assert done.exit_code == 0, done
    assert _ran(done) == _ids("b") | BLIND_TOO, done.json["selection"]


def test_with_pytest_cov_a_break_in_a_selected_test_blocks(cov_repo: Path) -> None:
    stage(cov_repo, {"pkg/c.py": "def value():\n    return 4\n"})
    done = review(cov_repo, format="json", all_tests=True)
    assert done.exit_code == 1, done
    assert _ran(done) == _ids("c") | BLIND_TOO
    assert {r["test"] for r in done.json["regressions"]} == _ids("c")


def test_with_pytest_cov_and_xdist_the_run_goes_on_mapped_only_by_eyefuls_own_watch(
    cov_repo: Path, tmp_path: Path
) -> None:
    """Under xdist, coverage measures in each worker, where switching contexts would write a
    worker's data file early for another worker's pytest-cov to erase as it starts: no map
    there (the whole suite runs, saying why), and the run itself is left as it would be. From
    3.12 no context is switched (eyeful's own watch): each worker's map is recorded."""
    import os

    from eyeful.pytest_records import MAP_VAR, plugin_env, read_pytest

    python = cov_repo.parent / "venv" / "bin" / "python"
    env = {**os.environ, **plugin_env(tmp_path, os.environ), MAP_VAR: str(cov_repo)}
    proc = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "xdist.plugin",
         "-n", "2"],
        cwd=cov_repo, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = read_pytest(tmp_path)
    assert record is not None, proc.stdout + proc.stderr
    if MONITORED:
        assert record.reached is not None, record.notes
        tests = record.reached.tests
        assert len(tests) == 7 and "pkg/b.py" not in tests[BLINDED], tests
        assert "pkg/a.py" in tests["tests/test_a.py::test_a_value"], tests
        return
    assert record.reached is None, record
    assert any("pytest-xdist's workers" in note for note in record.notes), record.notes


# Point 4: pytest's rootdir below the repository (`sub/pytest.ini`, `pytest sub`): its ids are
# relative to `sub`, the map's are repository paths, and the `test_one` derived from `test`
# (started at the root) takes paths from the root.


@pytest.fixture(scope="module")
def rooted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        repo = make_repo(
            tmp_path_factory.mktemp("rooted") / "repo",
            {
                "pyproject.toml": eyeful_config(f"{PYTEST} sub", extra=AFFECTED),
                "sub/pytest.ini": "[pytest]\npythonpath = .\n",
                **_project("sub/"),
                # The root's own tests of the same names, outside the suite (they pass).
                "tests/test_a.py": "def test_a_value():\n    pass\n",
            },
        )
        record_map(repo)
        yield repo


@pytest.fixture
def sub_repo(rooted: Path) -> Iterator[Path]:
    confirm(rooted)
    yield rooted
    _reset(rooted)


def test_map_ids_are_repository_paths_whatever_the_rootdir(sub_repo: Path) -> None:
    head = git(sub_repo, "rev-parse", "HEAD^{tree}").strip()
    (found,) = [m for m in _maps(sub_repo) if m["tree"] == head]
    tests = found["tests"]
    assert isinstance(tests, dict)
    assert set(tests) == {t for n in "abc" for t in _ids(n, "sub/tests/")}
    assert "sub/pkg/a.py" in tests["sub/tests/test_a.py::test_a_value"]


def test_a_break_below_a_rootdir_in_the_repository_is_selected_and_blocks(sub_repo: Path) -> None:
    """A changed module and a touched test file: the module's tests run too (the map's ids,
    relative to `sub`, were dropped as naming no file, and the test file alone ran: clean)."""
    stage(sub_repo, {
        "sub/pkg/a.py": "def value():\n    return 5\n",
        "sub/tests/test_b.py": _tests("b", 2) + "# touched\n",
    })  # fmt: skip
    done = review(sub_repo, format="json", all_tests=True)
    assert done.exit_code == 1, done
    assert _ran(done) == _ids("a") | _ids("b")
    assert {r["test"] for r in done.json["regressions"]} == _ids("a"), done.markdown
    # Alone, and to rerun: `sub`'s tests, never the root's test of the same path and name.
    ones = {r["command"] for r in done.json["runs"] if r["name"] == "test_one"}
    assert ones == {f"{PYTEST} {' '.join(sorted(_ids('a', 'sub/tests/')))}"}, ones
    reruns = {r["rerun"] for r in done.json["regressions"]}
    assert reruns == {f"{PYTEST} {test}" for test in _ids("a", "sub/tests/")}


def test_a_break_below_a_rootdir_blocks_again_from_the_cache(sub_repo: Path) -> None:
    """The second review of a change, its suites cached: the rootdir comes from the cache
    with pytest's parse (it was learned from live runs only: ids from the root, exit 3)."""
    stage(sub_repo, {"sub/pkg/c.py": "def value():\n    return 7\n"})
    assert review(sub_repo, format="json", select="all").exit_code == 1
    done = review(sub_repo, format="json", select="all")
    assert all(r["cached"] for r in done.json["runs"] if r["name"] == "test"), done.markdown
    assert done.exit_code == 1, done.markdown
    reruns = {r["rerun"] for r in done.json["regressions"]}
    assert reruns == {f"{PYTEST} {test}" for test in _ids("c", "sub/tests/")}


def test_a_stricter_test_below_a_rootdir_still_blocks_by_its_old_version(sub_repo: Path) -> None:
    """A test the change made stricter, failing on both sides alike: its base version, passing
    on the base's code, fails on the change's. Its file was looked for under the id's path
    (relative to `sub`), which the change did not edit: pre-existing, clean."""
    first = "def test_a_value():\n"
    stricter = _tests("a", 1).replace(first, f"{first}    assert a.value() * 0 == 1\n")
    stage(sub_repo, {"sub/pkg/a.py": "def value():\n    return 5\n",
                     "sub/tests/test_a.py": stricter})  # fmt: skip
    done = review(sub_repo, format="json", select="all")
    kinds = {r["test"]: (r["kind"], r["confirmation"]) for r in done.json["regressions"]}
    kind, confirmation = kinds["tests/test_a.py::test_a_value"]
    assert kind == "regression" and "the base's version of the test passed" in confirmation


def test_a_break_with_a_new_rootdir_below_the_root_blocks(tmp_path: Path) -> None:
    """The change adds `sub/pytest.ini`: its runs' ids start at `sub`, the base's at the root.
    The base's run of the test alone named it `sub/tests/...`: absent, a new test, clean."""
    calc = "def add(a, b):\n    return a + b\n"
    test = "from calc import add\n\n\ndef test_x():\n    assert add(2, 3) == 5\n"
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(f"{PYTEST} sub"),
        "sub/conftest.py": "import os, sys\n\nsys.path.insert(0, os.path.dirname(__file__))\n",
        "sub/calc.py": calc,
        "sub/tests/test_a.py": test,
    })  # fmt: skip
    confirm(repo)
    stage(repo, {"sub/calc.py": calc.replace("+", "-"), "sub/pytest.ini": "[pytest]\n"})
    done = review(repo, format="json")
    assert [(r["test"], r["kind"]) for r in done.json["regressions"]] == [
        ("tests/test_a.py::test_x", "regression")
    ], done.markdown
    assert done.exit_code == 1


def test_a_test_file_outside_the_rootdir_runs_the_whole_suite(sub_repo: Path) -> None:
    stage(sub_repo, {"other/test_elsewhere.py": "def test_elsewhere():\n    pass\n"})
    done = review(sub_repo, format="json", all_tests=True)
    assert done.json["selection"]["ids"] is None
    why = done.json["selection"]["why_all"]
    assert why == "`other/test_elsewhere.py` is a test file outside pytest's rootdir `sub`"
    assert len(_ran(done)) == 6


@pytest.mark.parametrize(
    ("tests", "started", "args"),
    [
        (["sub/tests/test_a.py::t", "sub/tests/test_b.py"], "",
         ["sub/tests/test_a.py::t", "sub/tests/test_b.py"]),
        (["sub/tests/test_a.py::t[x/y]", "sub/t.py"], "sub", ["tests/test_a.py::t[x/y]", "t.py"]),
        (["sub/tests/test_a.py::t", "top/test_c.py"], "sub", "`top/test_c.py`"),
        (["tests/test_a.py::t"], None, "outside the repository"),
    ],
)  # fmt: skip
def test_selected_ids_become_the_commands_arguments(
    tests: list[str], started: str | None, args: list[str] | str
) -> None:
    """Map ids are repository paths; the command takes them from where its ids start (where
    pytest started, for a `test_one` derived from `test`; else pytest's rootdir)."""
    given = affected.arguments(tests, started)
    if isinstance(args, list):
        assert given == args
    else:
        assert isinstance(given, str) and args in given, given


# Point 5: a map recorded for a staged tree that was then committed otherwise still serves.


def test_a_staged_trees_map_serves_after_it_was_committed_otherwise(tmp_path: Path) -> None:
    ini = "[pytest]\npythonpath = .\n"
    config = eyeful_config(extra=AFFECTED)
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, "pytest.ini": ini, **_project()})
    confirm(repo)
    stage(repo, {"pkg/a.py": "def value():\n    return 1  # staged\n"})
    first = review(repo, format="json", all_tests=True)  # no map yet: the whole suite, mapped
    assert first.exit_code == 0, first
    assert "no map" in first.json["selection"]["why_all"]
    staged = git(repo, "write-tree").strip()
    # Committed otherwise: b changed too before the commit, so the commit's tree has no map.
    stage(repo, {"pkg/b.py": "def value():\n    return 2  # committed\n"})
    git(repo, "commit", "-q", "-m", "a and b")
    stage(repo, {"pkg/c.py": "def value():\n    return 3  # the next change\n"})
    done = review(repo, format="json", all_tests=True)
    assert done.exit_code == 0, done
    assert done.json["selection"]["map_tree"] == staged
    # What differs from the mapped tree: b (in the commit) and c (staged); not a.
    assert _ran(done) == _ids("b") | _ids("c")


def test_a_test_one_that_runs_one_test_per_command_runs_the_whole_suite(tmp_path: Path) -> None:
    """A selection is one run: a `test_one` that is not a plain pytest (one command per id)
    would make it several, of which the review reads the last."""
    from eyeful.cache import Cache
    from eyeful.config import load_config

    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(
        PYTEST, test_one=f"cd . && {PYTEST} {{test}}", extra=AFFECTED)})  # fmt: skip
    config = load_config(repo)
    chosen = affected.select(
        pygit2.Repository(str(repo)), Cache(tmp_path / "cache"), config, None, "0" * 40
    )
    assert chosen.ids is None
    assert chosen.why_all == "`test_one` runs one test per command, not a plain pytest"


# The import graph's parsed sources are kept between runs (a cache: it only saves the parse).


def _imports_cache(repo: Path) -> Path:
    return repo / ".git" / "eyeful" / "cache" / "imports.json"


def _graph(repo: Path) -> dict[str, object]:
    (entry,) = _maps(repo)
    graph = entry["imports"]
    assert isinstance(graph, dict), entry
    return graph


def _mapped_repo(where: Path, cache: str | Callable[[Path], None] | None = None) -> Path:
    """The project, with ``cache`` at imports.json's place (its text, or what puts something
    there), and a map recorded."""
    repo = make_repo(where, {"pyproject.toml": eyeful_config(extra=AFFECTED),
                             "pytest.ini": "[pytest]\npythonpath = .\n", **_project()})  # fmt: skip
    if cache is not None:
        _imports_cache(repo).parent.mkdir(parents=True)
        if callable(cache):
            cache(_imports_cache(repo))
        else:
            _imports_cache(repo).write_text(cache)
    record_map(repo)
    return repo


def test_the_parsed_sources_are_kept_and_a_damaged_cache_changes_no_map(tmp_path: Path) -> None:
    import hashlib
    import sys

    cold = _mapped_repo(tmp_path / "cold")
    kept = json.loads(_imports_cache(cold).read_text())
    source = (cold / "tests" / "test_b.py").read_bytes()
    major, minor = sys.version_info[:2]
    key = f"2:{major}.{minor}:" + hashlib.sha256(source).hexdigest()
    assert kept[key] == [["from", "pkg", 0, ["b"]]]
    assert "pkg/b.py" in _graph(cold)["tests/test_b.py"]  # type: ignore[operator]
    # Warm (the cache of another repository: by content), damaged, or of other shapes: the same.
    bad = {key: [["from", "pkg", "0", ["b"]]], "x": [["import"]], "y": "pkg"}
    for name, cache in (("warm", json.dumps(kept)), ("damaged", "{not json"),
                        ("shapes", json.dumps(bad))):  # fmt: skip
        repo = _mapped_repo(tmp_path / name, cache)
        assert _graph(repo) == _graph(cold), name
        assert json.loads(_imports_cache(repo).read_text()) == kept, name
    # What the cache holds is what the graph uses: the parse is not done again.
    forged = {**kept, key: [["from", "pkg", 0, ["a", "b"]]]}
    repo = _mapped_repo(tmp_path / "forged", json.dumps(forged))
    assert "pkg/a.py" in _graph(repo)["tests/test_b.py"]  # type: ignore[operator]


# Attacks on the statements-only walk and the kept parse (an adversarial pass).


def _consts_project(where: Path, files: dict[str, str | bytes], extra: str = "") -> Path:
    """A package whose `pkg/consts.py` holds VALUE = 1, and ``files`` (its users and tests)."""
    return make_repo(where, {
        "pyproject.toml": eyeful_config(extra=AFFECTED + extra),
        "pytest.ini": "[pytest]\npythonpath = .\n",
        "pkg/__init__.py": "",
        "pkg/consts.py": "VALUE = 1\n",
        **files,
    })  # fmt: skip


def _blocks_when_value_changes(repo: Path) -> None:
    """VALUE staged as 2: the review runs and blocks on `tests/test_a.py::test_value`."""
    stage(repo, {"pkg/consts.py": "VALUE = 2\n"})
    done = review(repo, format="json")
    assert {r["test"] for r in done.json["regressions"]} == {"tests/test_a.py::test_value"}, (
        done.markdown
    )
    assert done.exit_code == 1


HELPERS = {
    # The plain spelling: the loader's name is in the source's bytes.
    "plain": 'def value():\n    return __import__("pkg.consts", None, None, ["VALUE"]).VALUE\n',
    # The same code, its source in an ASCII-only encoding that spells the name otherwise.
    "escaped": (
        "# coding: unicode_escape\n"
        'def value():\n    return \\x5f_import__("pkg.consts", None, None, ["VALUE"]).VALUE\n'
    ),
}


@pytest.mark.parametrize("spelling", sorted(HELPERS))
def test_a_module_loaded_by_a_literal_name_is_in_the_graph_however_its_source_is_encoded(
    tmp_path: Path, spelling: str
) -> None:
    """`pkg.helper` reads `pkg.consts` through `__import__("pkg.consts")` when its test runs;
    `pkg.consts` was imported already (by another test module's collection), so none of its
    code runs in that test: only the import graph's edge helper -> consts selects it."""
    repo = _consts_project(tmp_path / "repo", {
        "pkg/helper.py": HELPERS[spelling],
        "tests/test_a.py": (
            "from pkg import helper\n\n\ndef test_value():\n    assert helper.value() == 1\n"
        ),
        "tests/test_b.py": "import pkg.consts\n\n\ndef test_loaded():\n    assert pkg.consts\n",
    })  # fmt: skip
    record_map(repo)
    _blocks_when_value_changes(repo)


def test_under_sandbox_all_a_mapped_runs_own_cache_write_is_not_the_codes(tmp_path: Path) -> None:
    """`sandbox = "all"`: the probe writes the parsed sources' cache (imports.json) at the
    mapped run's end, outside the places the sandbox lets code write. A real regression must
    still block, not become an ERROR the sandbox is blamed for."""
    repo = _consts_project(tmp_path / "repo", {
        "tests/test_a.py": (
            "from pkg import consts\n\n\ndef test_value():\n    assert consts.VALUE == 1\n"
        ),
    }, extra='\nsandbox = "all"')  # fmt: skip
    confirm(repo)  # no map yet: the full suite runs, and records it
    _blocks_when_value_changes(repo)


BIG = (
    "from pkg.consts import VALUE\n\nTABLE = "
    + "+".join(["1"] * 1500)
    + "\n\n\ndef value():\n    return VALUE\n"
)
LOWERS = "import sys\n\n\ndef test_lowers():\n    sys.setrecursionlimit(420)\n"
RESTORES = (
    "import sys\n\n\ndef test_lowers():\n    old = sys.getrecursionlimit()\n"
    "    sys.setrecursionlimit(420)\n    sys.setrecursionlimit(old)\n"
)


def test_a_parse_that_failed_for_want_of_stack_is_not_kept_as_importing_nothing(
    tmp_path: Path,
) -> None:
    """A map recorded while a test had left the recursion limit low: `pkg/big.py` (a long
    expression) could not be parsed then. The next map, of a tree whose test puts the limit
    back, must see big -> consts again (before the cache: parsed again each run)."""
    repo = _consts_project(tmp_path / "repo", {
        "pkg/big.py": BIG,
        "tests/test_0.py": "import pkg.consts\n\n\ndef test_loaded():\n    assert pkg.consts\n",
        "tests/test_a.py": (
            "from pkg import big\n\n\ndef test_value():\n    assert big.value() == 1\n"
        ),
        "tests/test_z.py": LOWERS,
    })  # fmt: skip
    record_map(repo)
    stage(repo, {"tests/test_z.py": RESTORES})
    git(repo, "commit", "-q", "-m", "put the limit back")
    record_map(repo, "a project, again\n")
    _blocks_when_value_changes(repo)


def test_a_cache_file_that_is_a_fifo_or_a_device_is_not_read(tmp_path: Path) -> None:
    """What is at imports.json's place is read only when it is a regular file of a bounded
    size: never waited on (a FIFO), never read without end (a device)."""
    import os

    cold = _mapped_repo(tmp_path / "cold")
    for name, place in (("fifo", os.mkfifo),
                        ("device", lambda path: path.symlink_to("/dev/zero"))):  # fmt: skip
        repo = _mapped_repo(tmp_path / name, place)
        assert _graph(repo) == _graph(cold), name


IMPLS = {
    "fast.py": 'NAME = "fast"\n\n\ndef add(a, b):\n    return a + b\n',
    "slow.py": 'NAME = "slow"\n\n\ndef add(a, b):\n    return sum([a, b])\n',
    "calc.py": "import importlib\nimport os\n\n\ndef add(a, b):\n"
    "    impl = importlib.import_module(os.environ.get('CALC_IMPL', 'slow'))\n"
    "    return impl.add(a, b)\n",
    "tests/test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n",
    "tests/test_names.py": "import fast\nimport slow\n\n\ndef test_names():\n"
    "    assert (fast.NAME, slow.NAME) == ('fast', 'slow')\n",
    "tests/test_slow.py": "import pytest\n\nimport fast\n\n\n@pytest.mark.slow\n"
    "def test_fast_add():\n    assert fast.add(2, 2) == 4\n",
    "pytest.ini": "[pytest]\npythonpath = .\nmarkers =\n    slow\n",
}


@pytest.mark.parametrize(
    ("recorded", "now", "broken"),
    [
        ({}, {"CALC_IMPL": "fast"}, "tests/test_calc.py::test_add"),
        ({"PYTEST_ADDOPTS": "-m 'not slow'"}, {}, "tests/test_slow.py::test_fast_add"),
    ],
    ids=["env-named", "pytest-addopts"],
)
def test_a_map_recorded_in_another_environment_selects_nothing(
    tmp_path: Path, recorded: dict[str, str], now: dict[str, str], broken: str
) -> None:
    """helper-82: the map was recorded with `CALC_IMPL` (named in `env`) unset, so `test_add`
    ran `slow.py` alone; now `CALC_IMPL=fast` and the change breaks `fast.py`: `test_add` was not
    selected, clean. Likewise a map recorded under `PYTEST_ADDOPTS="-m 'not slow'"` holds no
    slow test. A map is of the environment it ran in, as a cached run is."""
    config = eyeful_config(extra=f'{AFFECTED}\nenv = ["CALC_IMPL"]')
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, **IMPLS})
    base = {k: v for k, v in os.environ.items() if k != "CALC_IMPL"}
    stage(repo, {"README.md": "a project\n"})
    git(repo, "commit", "-q", "-m", "readme")
    confirm(repo)
    first = review(repo, format="json", base="HEAD~1", head="HEAD", env={**base, **recorded})
    assert first.exit_code == 0, first
    stage(repo, {"fast.py": IMPLS["fast.py"].replace("a + b", "a - b")})
    done = review(repo, format="json", env={**base, **now})
    assert broken in {f["test"] for f in done.json["regressions"]}, done
    assert done.exit_code == 1, done


TOOL = (
    "import importlib\nimport shutil\n\nimport pytest\n\n\n"
    "@pytest.mark.skipif(shutil.which('mytool') is None, reason='needs mytool')\n"
    "def test_tool():\n    calc = importlib.import_module('pkg.' + 'calc')\n"
    "    assert calc.add('a', 'b') == 'ab'\n"
)


def test_a_map_recorded_without_a_tool_on_path_selects_nothing_with_it(tmp_path: Path) -> None:
    """helper-84: the map's key left PATH out (git puts its own directory first for `git
    eyeful`): recorded while `mytool` was not on PATH, a test that skips without it reached
    nothing, and a review with it there did not select the test: clean. Only git's own
    directory is left out now."""
    files = {
        "pkg/__init__.py": "",
        "pkg/calc.py": "def add(a, b):\n    return a + b\n",
        "tests/test_calc.py": "from pkg.calc import add\n\n\ndef test_add():\n"
        "    assert add(1, 2) == 3\n",
        "tests/test_tool.py": TOOL,
        "pytest.ini": PYTEST_INI,
    }
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(extra=AFFECTED), **files})
    confirm(repo)
    stage(repo, {"pkg/__init__.py": "# a note\n"})
    assert review(repo, format="json").exit_code == 0  # a full run: it records the map
    git(repo, "commit", "-q", "-m", "a note")
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "mytool").write_text("#!/bin/sh\n")
    (tools / "mytool").chmod(0o755)
    stage(repo, {"pkg/calc.py": "def add(a, b):\n    return int(a) + int(b)\n"})
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    done = review(repo, format="json", env=env)
    assert "tests/test_tool.py::test_tool" in {f["test"] for f in done.json["regressions"]}, done
    assert done.exit_code == 1, done
