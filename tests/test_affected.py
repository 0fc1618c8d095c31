"""`select = "affected"` (issue 23): a full run records which repository files each test ran; a
change then runs only the tests that ran a changed file, the tests of changed or new test files
and the tests that failed then, and the whole suite when the map cannot tell (a data file, a
conftest.py, a setup input, no map, a map too old)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import seal
from tests.core import Reviewed, review
from tests.gitrepo import (
    PYTEST,
    PYTEST_INI,
    confirm,
    eyeful,
    eyeful_config,
    git,
    make_repo,
    stage,
    write,
)

MODULES = {name: f"def value():\n    return {n}\n" for n, name in enumerate("abc", 1)}


def _tests(name: str, n: int) -> str:
    return (
        f"from pkg import {name}\n\n\n"
        f"def test_{name}_value():\n    assert {name}.value() == {n}\n\n\n"
        f"def test_{name}_twice():\n    assert {name}.value() * 2 == {2 * n}\n"
    )


READS_DATA = """from pathlib import Path


def test_data():
    assert Path("data.txt").read_text() == "ok\\n"
"""

FILES: dict[str, str | bytes] = {
    # No test_one: the selected tests run by the one derived from pytest's parse of the test
    # command, as the run that recorded the map recorded it (the ids in place of `tests`).
    "pyproject.toml": eyeful_config(
        f"{PYTEST} tests", extra='select = "affected"\naffected_max_age = 1'
    ),
    "pytest.ini": PYTEST_INI,
    "conftest.py": "",
    "setup.py": "",
    "data.txt": "ok\n",
    "pkg/__init__.py": "",
    **{f"pkg/{name}.py": code for name, code in MODULES.items()},
    **{f"tests/test_{name}.py": _tests(name, n) for n, name in enumerate("abc", 1)},
    "tests/test_data.py": READS_DATA,
}
ALL = 7


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A project whose HEAD's tree has a map: a full review of its last commit recorded it."""
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        repo = make_repo(tmp_path_factory.mktemp("affected") / "repo", FILES)
        stage(repo, {"README.md": "a project\n"})
        git(repo, "commit", "-q", "-m", "readme")
        confirm(repo)
        done = review(repo, format="json", base="HEAD~1", head="HEAD")  # no map yet: full
        assert done.exit_code == 0, done
        yield repo


@pytest.fixture
def repo(mapped: Path) -> Iterator[Path]:
    confirm(mapped)  # each test has its own HOME, and so its own record of confirmed commands
    yield mapped
    git(mapped, "reset", "-q", "--hard")
    git(mapped, "clean", "-qfd")


def _ran(done: Reviewed) -> set[str]:
    """The tests the change's test run ran (its record's ids)."""
    run = next(r for r in done.json["runs"] if r["name"] == "test" and r["side"] == "change")
    return set(run["collected"])


def test_a_change_to_one_module_runs_only_its_tests(repo: Path, tmp_path: Path) -> None:
    stage(repo, {"pkg/b.py": "def value():\n    return 2  # the same\n"})
    sarif = tmp_path / "review.sarif"
    done = review(repo, format="json", all_tests=True, sarif=sarif)
    assert done.exit_code == 0, done
    assert _ran(done) == {"tests/test_b.py::test_b_value", "tests/test_b.py::test_b_twice"}
    assert [r["side"] for r in done.json["runs"]] == ["change"]  # all pass: nothing on the base
    selection = done.json["selection"]
    assert selection["ids"] == sorted(_ran(done)) and selection["map_tests"] == ALL
    head = git(repo, "rev-parse", "HEAD^{tree}").strip()
    assert selection["map_tree"] == head
    said = f"ran 2 of {ALL} tests (affected by the change; the full suite last ran on {head[:7]})"
    first, *_ = done.markdown.splitlines()
    assert first.endswith(said), done.markdown
    ran_line = next(line for line in done.markdown.splitlines() if line.startswith("Ran:"))
    assert ran_line.endswith(
        f". Selection: {said}. Not followed: state one test leaves for another (a cache it filled,"
        " a global it set); affected_max_age bounds how old the map may be."
    )
    properties = json.loads(sarif.read_text())["runs"][0]["properties"]
    assert properties["selection"] == selection and properties["selected"] == said


def test_a_regression_in_a_selected_run_is_confirmed_as_today(repo: Path) -> None:
    stage(repo, {"pkg/c.py": "def value():\n    return 4\n"})
    done = review(repo, format="json", all_tests=True)
    assert done.exit_code == 1, done
    assert _ran(done) == {"tests/test_c.py::test_c_value", "tests/test_c.py::test_c_twice"}
    assert {r["test"] for r in done.json["regressions"]} == _ran(done)
    assert any(r["name"] == "test_one" and r["side"] == "base" for r in done.json["runs"])
    change = next(r for r in done.json["runs"] if r["name"] == "test" and r["side"] == "change")
    assert change["command"].startswith(f"{PYTEST} tests/test_c.py")  # the derived test_one


def test_a_new_test_file_runs(repo: Path) -> None:
    stage(repo, {"tests/test_new.py": "def test_new():\n    assert True\n"})
    done = review(repo, format="json", all_tests=True)
    assert done.exit_code == 0, done
    assert _ran(done) == {"tests/test_new.py::test_new"}


def test_a_changed_test_file_runs_all_its_tests(repo: Path) -> None:
    stage(repo, {"tests/test_a.py": _tests("a", 1) + "\n\ndef test_a_more():\n    pass\n"})
    done = review(repo, format="json", all_tests=True)
    assert _ran(done) == {f"tests/test_a.py::test_a_{n}" for n in ("value", "twice", "more")}


@pytest.mark.parametrize(
    ("path", "content", "why"),
    [
        ("data.txt", "ok\n\n", "`data.txt` is not Python code"),
        ("conftest.py", "# shapes every test\n", "`conftest.py` is a conftest.py"),
        ("setup.py", "# installs\n", "`setup.py` is a setup input"),
    ],
)
def test_a_change_the_map_cannot_follow_runs_the_whole_suite(
    repo: Path, path: str, content: str, why: str
) -> None:
    stage(repo, {path: content})
    done = review(repo, format="json", all_tests=True)
    assert len(_ran(done)) == ALL, done
    assert done.json["selection"]["ids"] is None
    assert why in done.json["selection"]["why_all"]
    assert f"ran the whole suite: {why}" in done.markdown.splitlines()[0]


@pytest.mark.parametrize("target", ["pkg", "."])
def test_a_change_to_a_file_a_link_leads_to_runs_the_whole_suite(repo: Path, target: str) -> None:
    """helper-53: `calc.py -> impl/core.py`, a test imports `calc`: the map names the link, so a
    change to impl/core.py selected none of that test's tests, and the one it broke went
    unrun: clean. A changed file a link leads to (or into: a link to the root, helper-55)
    runs the whole suite."""
    (repo / "alias").symlink_to(target)
    stage(repo, {"pkg/b.py": f"def value():\n    return 2  # the same ({target})\n"})
    done = review(repo, format="json", all_tests=True)
    assert len(_ran(done)) == ALL, done
    why = "`pkg/b.py` is reached through the link `alias`: the map names the link"
    assert done.json["selection"]["why_all"] == why, done.json["selection"]


def test_a_missing_or_stale_map_runs_the_whole_suite(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {**FILES, "data.txt": "not ok\n"})  # test_data fails
    confirm(repo)
    stage(repo, {"pkg/a.py": "def value():\n    return 1  # same\n"})
    first = review(repo, format="json", all_tests=True)
    assert len(_ran(first)) == ALL
    assert "no map" in first.json["selection"]["why_all"]
    git(repo, "commit", "-q", "-m", "the reviewed change")  # its tree has the map now
    stage(repo, {"pkg/b.py": "def value():\n    return 2  # same\n"})
    assert _ran(review(repo, format="json", all_tests=True)) == {
        "tests/test_b.py::test_b_value",
        "tests/test_b.py::test_b_twice",
        "tests/test_data.py::test_data",  # it failed when the map was recorded
    }
    for n in range(2):  # the map falls two commits behind (affected_max_age = 1)
        stage(repo, {"README.md": f"{n}\n"})
        git(repo, "commit", "-q", "-m", f"readme {n}")
    stage(repo, {"pkg/c.py": "def value():\n    return 3  # same\n"})
    stale = review(repo, format="json", all_tests=True)
    assert len(_ran(stale)) == ALL
    assert (
        "the last map is 2 commits old (affected_max_age = 1)" in stale.json["selection"]["why_all"]
    )


def _maps(repo: Path) -> list[dict[str, object]]:
    """The maps the reviews recorded (eyeful/affected.py), as they are in the cache."""
    folder = repo / ".git" / "eyeful" / "cache" / "maps"
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*/*.json"))]


def test_only_a_review_that_selects_by_the_map_records_it(tmp_path: Path) -> None:
    """The map's tracer costs a suite run most of its speed: a plain review does not pay it. One
    that selects by the map records it, even where a plain review's run is cached."""
    repo = make_repo(tmp_path / "repo", {**FILES, "pyproject.toml": eyeful_config()})
    stage(repo, {"README.md": "a project\n"})
    git(repo, "commit", "-q", "-m", "readme")
    confirm(repo)
    plain = review(repo, format="json", base="HEAD~1", head="HEAD")  # select = "all"
    assert plain.exit_code == 0, plain
    assert _maps(repo) == []
    selecting = review(repo, format="json", base="HEAD~1", head="HEAD", select="affected")
    assert selecting.exit_code == 0, selecting
    # It says so, not that the run was cached (helper-54): it ran live.
    assert [r["cached"] for r in selecting.json["runs"]] == [False], selecting.json["runs"]
    assert selecting.json["selection"]["why_all"] == (
        "the whole suite runs again to record a map of what each test ran: its cached run on "
        "this tree recorded none"
    )
    head = git(repo, "rev-parse", "HEAD^{tree}").strip()
    assert head in {m["tree"] for m in _maps(repo)}
    assert {len(m["tests"]) for m in _maps(repo) if m["tree"] == head} == {ALL}


def test_select_takes_all_or_affected(repo: Path) -> None:
    done = eyeful("--select", "some", cwd=repo)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == "eyeful: error: --select 'some': use all or affected"


def test_the_eval_condition_selected_finds_the_regression_execution_finds(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", FILES)
    base = git(repo, "rev-parse", "HEAD").strip()
    stage(repo, {"pkg/a.py": "def value():\n    return 5\n"})
    git(repo, "commit", "-q", "-m", "breaks a")
    change = git(repo, "rev-parse", "HEAD").strip()
    cases = tmp_path / "cases"
    write(cases, {"breaks-a/case.toml": (
        f'repository = "{repo}"\nbase = "{base}"\nchange = "{change}"\n'
        'regressions = ["tests/test_a.py::test_a_value"]\n'
    )})  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "eyeful", "eval", str(cases), "--yes", "--format", "json",
         "--condition", "execution", "--condition", "selected"],
        cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = {r["condition"]: r for r in json.loads(done.stdout)["results"]}
    assert results["selected"]["status"] == results["execution"]["status"] == "pass", results
