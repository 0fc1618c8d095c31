"""A regression blocks on positive evidence confirmed live (issue 7, points 3, 4, 5, 7, 8).

Each test is a real repository and real reviews of it (tests/core.py); each was checked to fail
on the code before the change (a pass inferred from absence, one run per side, stale caches and
bytecode, a shallow clone compared with the empty tree).
"""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

import pytest

from eyeful import focus
from eyeful.cache import Cache
from eyeful.completeness import CompletenessScanner
from eyeful.config import load_config
from eyeful.gitutil import find_repo
from eyeful.runs import Runner
from eyeful.snapshot import open_repository
from eyeful.worktrees import WorktreePool
from tests.core import review
from tests.gitrepo import (
    BROKEN_ADD,
    CALC,
    PYTEST,
    PYTEST_INI,
    PYTHON,
    confirm,
    eyeful,
    eyeful_config,
    git,
    make_repo,
    python_project,
    run,
    stage,
    write,
)


def _kinds(report: dict) -> list[tuple[str, str]]:
    every = report["regressions"] + report["other_failures"]
    return sorted((f["test"], f["kind"]) for f in every)


# Point 3: positive evidence on both sides ------------------------------------------------------

# Both tests fail on the base; the change fixes the code the first tests. A base run that stops
# at its first failure never reaches the second, which must not make it "passed there". (The
# code, not the test: the base runs the change's tests, eyeful/testside.py.)
BOTH_FAIL = """from vals import FIRST


def test_first():
    assert FIRST == 1


def test_second():
    assert 'base' == 'fine'
"""
STOPS_EARLY = f"env -u EYEFUL_UNSET X=1 {PYTEST} -x"  # no test_one derived behind `env -u`


@pytest.mark.parametrize("test_one", [None, f"{STOPS_EARLY} {{test}}"])
def test_case3_a_base_run_that_stopped_at_its_first_failure_is_no_pass(tmp_path, test_one):
    commands = {} if test_one is None else {"test_one": test_one}
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(STOPS_EARLY, **commands),
            "pytest.ini": PYTEST_INI,
            "tests/test_two.py": BOTH_FAIL,
            "vals.py": "FIRST = 2\n",
        },
    )
    confirm(repo)
    stage(repo, {"vals.py": "FIRST = 1\n"})
    proc = review(repo, format="json")
    report = proc.json
    assert report["regressions"] == [], proc.stdout
    if test_one is None:
        # The base's run says nothing about test_second: exit 3, never 1.
        assert proc.exit_code == 3
        assert _kinds(report) == [("tests/test_two.py::test_second", "undetermined")]
        texts = " ".join(u["text"] for u in report["uncertainty"])
        # pytest's own record says which collected tests never ran.
        assert "1 of 2 collected tests did not run" in texts
        [base] = [r for r in report["runs"] if r["side"] == "base"]
        assert base["stopped"].startswith("1 of 2 collected tests did not run")
    else:
        # Run alone on the base, it fails there too: pre-existing.
        assert proc.exit_code == 0, proc.stdout
        assert _kinds(report) == [("tests/test_two.py::test_second", "pre_existing")]
        assert not [r for r in report["runs"] if r["side"] == "base" and r["name"] == "test"]


def _scan(lines: list[str]) -> CompletenessScanner:
    scanner = CompletenessScanner()
    for line in lines:
        scanner.feed(line)
    return scanner


@pytest.fixture(scope="module")
def pytest_outputs(tmp_path_factory) -> dict[str, list[str]]:
    """Real pytest output of runs that stop early, and of one that does not."""
    where = tmp_path_factory.mktemp("stops")
    write(
        where,
        {
            "test_a.py": "def test_1():\n    assert 0\n\n\ndef test_2():\n    assert 0\n",
            "test_b.py": "import no_such_module\n\n\ndef test_3():\n    pass\n",
        },
    )
    out = {}
    base = [PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "-q"]
    for name, args in {
        "x": ["-x", "test_a.py"],
        "maxfail": ["--maxfail=1", "test_a.py"],
        "collection": ["--continue-on-collection-errors", "test_a.py", "test_b.py"],
        "complete": ["test_a.py"],
    }.items():
        proc = run(*base, *args, cwd=where, check=False)
        out[name] = proc.stdout.splitlines()
    return out


def test_runs_that_stop_early_are_recognised(pytest_outputs):
    assert _scan(pytest_outputs["x"]).stopped == (
        "it stopped after its first failures (-x or --maxfail)"
    )
    assert _scan(pytest_outputs["maxfail"]).stopped is not None
    assert _scan(pytest_outputs["collection"]).stopped == "test_b.py could not be collected"
    assert _scan(pytest_outputs["complete"]).stopped is None
    # go test: a package that did not build, or panicked, ran none of its later tests.
    go_build = [
        "# example.com/m/calc",
        "calc/calc.go:3:1: syntax error",
        "FAIL\texample.com/m/calc [build failed]",
        "ok  \texample.com/m/other\t0.002s",
    ]
    assert _scan(go_build).stopped == "Go package example.com/m/calc did not build"
    assert _scan(["=== RUN   TestA", "panic: boom [recovered]"]).stopped is not None
    assert _scan(["ok  \texample.com/m\t0.01s [no tests to run]"]).none_ran


def test_several_ids_go_in_one_pytest_command_and_one_each_otherwise():
    ids = ["tests/t.py::test_a", "tests/t.py::test_b[x y]"]
    (both,) = focus.Focus(template=f"{PYTEST} {{test}}").commands(ids)
    assert both.args == tuple(ids)  # arguments, never shell text
    assert both.shown == f"{PYTEST} tests/t.py::test_a 'tests/t.py::test_b[x y]'"
    go = focus.Focus(template="go test -run {test} ./...").commands(["TestA", "TestB"])
    assert [c.args for c in go] == [("TestA",), ("TestB",)]
    assert [c.shown for c in go] == ["go test -run TestA ./...", "go test -run TestB ./..."]


# Point 4: confirmed live -----------------------------------------------------------------------

# A shared counter (in the common git dir, so every worktree sees it) stands in for what makes
# real tests flaky. The test fails on its 1st and 3rd runs: the suite on the change (run 1) fails,
# and exactly one of the six runs on its own that follow fails.
FLAKY = """import fcntl
import subprocess
from pathlib import Path


def _run_number():
    common = subprocess.run(
        ["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True, check=True
    ).stdout.strip()
    with open(Path(common) / "flaky-counter", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        number = len(handle.read())
        handle.write("x")
    return number


def test_sometimes():
    assert _run_number() not in (0, 2)
"""


def _flaky_project(tmp_path, flaky: str):
    """A committed project with ``flaky`` as tests/test_flaky.py, confirmed, with a harmless
    change staged; `reruns` at its default (3)."""
    repo = python_project(tmp_path / "repo", eyeful_config(extra="reruns = 3"))
    write(repo, {"tests/test_flaky.py": flaky})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "flaky test")
    confirm(repo)
    stage(repo, {"calc.py": "# touched\n" + (repo / "calc.py").read_text()})
    return repo


def test_a_flaky_test_is_a_question_with_its_outcomes_not_a_block(tmp_path):
    repo = _flaky_project(tmp_path, FLAKY)
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 0, proc.stdout
    assert report["regressions"] == []
    [flaky] = report["other_failures"]
    assert (flaky["test"], flaky["kind"], flaky["blocking"]) == (
        "tests/test_flaky.py::test_sometimes",
        "flaky",
        False,
    )
    # Six runs on its own, one of them failed: which side it fell on depends on the scheduling.
    assert flaky["confirmation"] in (
        "on the change, alone: failed 1/3, passed 2/3; on the base, alone: passed 3/3",
        "on the change, alone: passed 2/3, failed 1/3; on the base, alone: passed 3/3",
        "on the change, alone: passed 3/3; on the base, alone: failed 1/3, passed 2/3",
        "on the change, alone: passed 3/3; on the base, alone: passed 2/3, failed 1/3",
    )
    assert report["questions"] == 1
    assert len((repo / ".git" / "flaky-counter").read_text()) == 7
    md = review(repo).stdout  # cached suite, live reruns: still a question
    questions = md.split("### Questions")[1].split("###")[0]
    # Every live run passes now: the cached suite's failure did not come back on the change.
    assert "`tests/test_flaky.py::test_sometimes` fails on the change" in questions
    assert "flaky on the change (every run on the base passed)" in questions, questions


# Fails only in the first run of all (the change's suite run: the base's runs only after it).
FIRST_RUN_ONLY = FLAKY.replace("not in (0, 2)", "!= 0")


def test_a_failure_that_does_not_come_back_costs_one_suite_run_more_and_says_where_it_was_flaky(
    tmp_path,
):
    # Issue 35, point 6: sqlparse's timing test failed in the change's suite run and passed on
    # its own, in its file and in the suite again; the suite ran six more times (three pairs).
    # Once the failure does not come back on the change it is flaky: one suite run of the
    # change more, none of the base (2x the suite in all), and the question says on which side.
    repo = _flaky_project(tmp_path, FIRST_RUN_ONLY)
    result = review(repo, format="json")
    report = result.json
    assert result.exit_code == 0, result
    [flaky] = report["other_failures"]
    assert (flaky["test"], flaky["kind"]) == ("tests/test_flaky.py::test_sometimes", "flaky")
    suites = [(r["side"], r["status"]) for r in report["runs"] if r["name"] == "test"]
    # The change's suite, then once more where alone and in its file it passed: no base suite.
    assert suites == [("change", "FAILED"), ("change", "PASSED")], suites
    assert "in the suite: passed 1/1" in flaky["confirmation"], flaky["confirmation"]
    assert "flaky on the change" in result.markdown, result.markdown


# The change makes test_later depend on test_earlier having run first in the same process.
ORDER_BASE = {
    "state.py": "SEEN = []\n\n\ndef remember(x):\n    return [x]\n",
    "tests/test_order.py": "from state import remember\n\n\n"
    "def test_earlier():\n    assert remember(1) == [1]\n\n\n"
    "def test_later():\n    assert remember(2) == [2]\n",
}
ORDER_LEAKS = "SEEN = []\n\n\ndef remember(x):\n    SEEN.append(x)\n    return SEEN\n"


def test_failing_in_the_suite_but_passing_alone_is_judged_in_its_file(tmp_path):
    # The change made test_later depend on test_earlier: that dependence is the change's, so
    # failing with its file on the change, passing there on the base, it is a regression.
    config = eyeful_config(extra="reruns = 2")
    repo = make_repo(
        tmp_path / "repo", {"pyproject.toml": config, "pytest.ini": PYTEST_INI, **ORDER_BASE}
    )
    confirm(repo)
    stage(repo, {"state.py": ORDER_LEAKS})
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 1, proc.stdout
    assert _kinds(report) == [("tests/test_order.py::test_later", "regression")]
    [failure] = report["regressions"]
    assert failure["confirmation"] == (
        "on the change, alone: passed 2/2; on the base, alone: passed 2/2; then "
        "on the change, in its file: failed 2/2; on the base, in its file: passed 2/2"
    )
    alone = [r["command"].split()[-1] for r in report["runs"] if r["name"] == "test_one"]
    # reruns = 2 on each side: alone (it passed), then with its file
    assert sorted(alone) == ["tests/test_order.py"] * 4 + ["tests/test_order.py::test_later"] * 4


PARAMS = """import pytest

from calc import add


@pytest.mark.parametrize("n", [1, 2])
def test_p(n):
    assert add(n, n) == 2 * n
"""


def test_a_new_parameter_does_not_spoil_the_focused_base_run_of_the_others(tmp_path):
    repo = python_project(tmp_path / "repo", eyeful_config(extra="reruns = 1"))
    stage(repo, {"tests/test_p.py": PARAMS})
    git(repo, "commit", "-qm", "params")
    confirm(repo)
    # The change breaks add and adds a case the base does not have. The base side runs the
    # change's tests (issue 33): the new case is there and passes on the base's code, so it is a
    # regression too, where it was a new test before (pytest refused the base's command naming
    # an id it could not find, and the others ran again without it).
    stage(repo, {"calc.py": BROKEN_ADD, "tests/test_p.py": PARAMS.replace("[1, 2]", "[1, 2, 3]")})
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 1, proc.stdout
    assert _kinds(report) == [
        ("tests/test_calc.py::test_add", "regression"),
        ("tests/test_p.py::test_p[1]", "regression"),
        ("tests/test_p.py::test_p[2]", "regression"),
        ("tests/test_p.py::test_p[3]", "regression"),
    ]


def test_a_test_the_change_makes_stricter_is_no_regression_when_the_base_fails_it_too(tmp_path):
    """The change only adds an assertion to an existing test, and the unchanged code fails it:
    the base's own (older) version of the test passes, but the change's version fails on the
    base's code the same way. A change that edits a test and also breaks the code still blocks:
    there the change's version of the test passes on the base."""
    repo = python_project(tmp_path / "repo")
    confirm(repo)
    tests = (repo / "tests/test_calc.py").read_text()
    stricter = tests.replace(
        "assert add(2, 3) == 5", "assert add(2, 3) == 5\n    assert add(0.1, 0.2) == 0.3"
    )
    assert stricter != tests
    stage(repo, {"tests/test_calc.py": stricter})
    report = review(repo, format="json").json
    assert report["exit_code"] == 0, report["regressions"]
    assert _kinds(report) == [("tests/test_calc.py::test_add", "pre_existing")]

    renamed = tests.replace("def test_mul", "def test_mul_renamed")
    stage(repo, {"calc.py": BROKEN_ADD, "tests/test_calc.py": renamed})
    report = review(repo, format="json").json
    assert report["exit_code"] == 1, report["other_failures"]
    assert _kinds(report) == [("tests/test_calc.py::test_add", "regression")]

    # The change breaks add and puts a stricter assertion first, one the old code fails too,
    # with the same message on both sides: the old assertion, which the change's code now
    # fails, must still count.
    masked = stricter.replace(
        "    assert add(2, 3) == 5\n    assert add(0.1, 0.2) == 0.3",
        "    assert add(0.1, 0.2) == 0.3, 'inexact'\n    assert add(2, 3) == 5",
    )
    assert masked != stricter
    stage(repo, {"calc.py": BROKEN_ADD, "tests/test_calc.py": masked})
    report = review(repo, format="json").json
    assert report["exit_code"] == 1, report["other_failures"]
    assert _kinds(report) == [("tests/test_calc.py::test_add", "regression")]

    # The change breaks mul, adds sub, and test_add now checks both: on the old code the new
    # test_add fails too, but elsewhere (no sub there), not the way it fails on the change.
    broken_mul = (
        CALC.replace("return a * b", "return a * b + 1") + "\n\ndef sub(a, b):\n    return a - b\n"
    )
    checks_more = tests.replace(
        "from calc import add, mul", "import calc\nfrom calc import add, mul"
    )
    checks_more = checks_more.replace(
        "    assert add(2, 3) == 5",
        "    assert add(2, 3) == 5\n    assert calc.mul(2, 3) == 6\n    assert calc.sub(3, 1) == 2",
    )
    stage(repo, {"calc.py": broken_mul, "tests/test_calc.py": checks_more})
    report = review(repo, format="json").json
    assert report["exit_code"] == 1, report["other_failures"]
    assert _kinds(report) == [
        ("tests/test_calc.py::test_add", "regression"),
        ("tests/test_calc.py::test_mul", "regression"),
    ]


def test_a_symlinked_test_file_and_a_parameter_with_colons_are_judged_on_the_base(tmp_path):
    """Neither is new: the base has both. Read wrongly (the link's target path for its text, the
    id split at the parameter's `::`), they were judged absent there and never blocked."""
    repo = python_project(tmp_path / "repo")
    params = (
        "import pytest\nfrom calc import add\n\n\n"
        "@pytest.mark.parametrize('s', ['a::b'])\ndef test_colons(s):\n    assert add(2, 3) == 5\n"
    )
    stage(repo, {"real/linked.py": "from calc import add\n\n\ndef test_linked():\n"
                                   "    assert add(1, 1) == 2\n",
                 "tests/test_params.py": params})  # fmt: skip
    (repo / "tests" / "test_linked.py").symlink_to("../real/linked.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "more tests")
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    report = review(repo, format="json").json
    assert report["exit_code"] == 1, report["other_failures"]
    assert _kinds(report) == [
        ("tests/test_calc.py::test_add", "regression"),
        ("tests/test_linked.py::test_linked", "regression"),
        ("tests/test_params.py::test_colons[a::b]", "regression"),
    ]


def test_confirmation_runs_are_live_even_when_the_suites_are_cached(tmp_path):
    repo = python_project(tmp_path / "repo", eyeful_config(extra="reruns = 1"))
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    first = review(repo, format="json").json
    again = review(repo, format="json").json
    for report in (first, again):
        assert report["exit_code"] == 1
        assert [r["test"] for r in report["regressions"]] == ["tests/test_calc.py::test_add"]
    assert [(r["name"], r["cached"]) for r in again["runs"]] == [
        ("test", True),  # the change's suite
        ("test_one", False),
        ("test_one", False),
    ]
    # --no-cache runs the suite again too.
    fresh = review(repo, format="json", no_cache=True).json
    assert not any(r["cached"] for r in fresh["runs"])
    assert fresh["exit_code"] == 1


def test_without_test_one_a_regression_is_unconfirmed_never_silently_blocking(tmp_path):
    # `env` before pytest: eyeful derives no test_one from it (tests/test_first_run.py)
    repo = python_project(tmp_path / "repo", eyeful_config(f"env {PYTEST} -v"))
    text = (repo / "pyproject.toml").read_text()
    assert "test_one" not in text
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 3, proc.stdout
    assert _kinds(report) == [("tests/test_calc.py::test_add", "unconfirmed")]
    assert report["questions"] == 1
    # Without test_one the whole suite ran on the base (the fallback of the focused run).
    assert [(r["side"], r["name"]) for r in report["runs"]] == [
        ("change", "test"),
        ("base", "test"),
    ]
    texts = [u["text"] for u in report["uncertainty"] if u["unverified"]]
    assert any("configure commands.test_one" in t for t in texts)


def test_a_suite_that_names_no_tests_is_confirmed_by_live_runs(tmp_path):
    check = f"{shlex.quote(PYTHON)} check.py"
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(check, extra="reruns = 2"),
            "check.py": "import calc\nassert calc.add(2, 3) == 5, 'add is broken'\n",
            "calc.py": "def add(a, b):\n    return a + b\n",
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": "def add(a, b):\n    return a - b\n"})
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 1, proc.stdout
    [failure] = report["regressions"]
    assert failure["test"] == "the test suite"
    assert failure["confirmation"] == (
        "on the change (live runs): failed 2/2; on the base (live runs): passed 2/2"
    )
    assert sorted((r["side"], r["status"]) for r in report["runs"]) == [
        ("base", "PASSED"), ("base", "PASSED"), ("change", "FAILED"), ("change", "FAILED")
    ]  # fmt: skip


# Point 7: nothing left by another tree changes a run -------------------------------------------

MODE_TEST = "import os\n\n\ndef test_mode():\n    assert os.environ.get('MODE', 'good') == 'good'\n"


@pytest.mark.parametrize("listed", [True, False])
def test_a_result_cached_under_another_environment_never_blocks(tmp_path, listed):
    extra = 'reruns = 1\nenv = ["MODE"]' if listed else "reruns = 1"
    repo = python_project(tmp_path / "repo", eyeful_config(extra=extra))
    stage(repo, {"tests/test_mode.py": MODE_TEST})
    git(repo, "commit", "-qm", "mode")
    confirm(repo)
    stage(repo, {"calc.py": "# touched\n" + (repo / "calc.py").read_text()})
    bad = {**os.environ, "MODE": "bad"}
    # With MODE=bad the test fails on both sides: pre-existing.
    proc = review(repo, env=bad, format="json")
    assert _kinds(proc.json) == [("tests/test_mode.py::test_mode", "pre_existing")]
    # MODE put back: nothing fails, whatever was cached.
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 0, proc.stdout
    assert report["regressions"] == []
    if listed:
        # MODE is part of the key: the suite ran again and passed.
        assert [(r["name"], r["cached"], r["status"]) for r in report["runs"]] == [
            ("test", False, "PASSED")
        ]
    else:
        # The stale cached failure is contradicted by the live runs: a question at most.
        assert _kinds(report) == [("tests/test_mode.py::test_mode", "flaky")]


def _runner(repo: Path, size: int = 1) -> Runner:
    paths = find_repo(repo)
    state = paths.state_dir
    git_repo = open_repository(paths)
    pool = WorktreePool(paths, git_repo, size=size)
    return Runner(git_repo, load_config(repo), pool, Cache(state / "cache"), state / "tmp")


def _same_second(fn, attempts: int = 5):
    """Run fn within one wall-clock second (starting right after a second begins)."""
    for _ in range(attempts):
        now = time.time()
        if now % 1 > 0.05:
            time.sleep(1 - now % 1 + 0.01)
        start = int(time.time())
        result = fn()
        if int(time.time()) == start:
            return result
    raise AssertionError("could not run within one second")


def _trees(repo: Path, base: dict[str, str], change: dict[str, str]) -> tuple[str, str]:
    write(repo, base)
    git(repo, "add", "-A")
    one = git(repo, "write-tree").strip()
    write(repo, change)
    git(repo, "add", "-A")
    two = git(repo, "write-tree").strip()
    return one, two


def test_stale_bytecode_of_a_same_size_same_second_edit_is_not_run(tmp_path, monkeypatch):
    config = eyeful_config(
        f"{shlex.quote(PYTHON)} -c 'import mod; raise SystemExit(mod.VALUE)'",
    )
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, ".gitignore": "__pycache__/\n"})
    one, two = _trees(repo, {"mod.py": "VALUE = 1\n"}, {"mod.py": "VALUE = 2\n"})
    runner = _runner(repo)
    # Bytecode next to the source, as Python writes it by default (whatever the shell says).
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    first, second = _same_second(lambda: (runner.suite(one, "base"), runner.suite(two, "change")))
    assert first[-1].exit_code == 1
    # Same size, same second: Python's bytecode check cannot tell; the stamped mtime can.
    assert second[-1].exit_code == 2
    wt = runner.pool.root / "wt-0"
    assert list((wt / "__pycache__").glob("mod.*.pyc"))  # bytecode was written and kept


MAKEFILE = """.LOW_RESOLUTION_TIME: out.txt
out.txt: src.txt
\tcp src.txt out.txt
"""


def test_a_make_rule_rebuilds_what_an_earlier_tree_built_in_the_same_second(tmp_path):
    config = eyeful_config("make -s out.txt && cat out.txt && grep -q good out.txt")
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": config, ".gitignore": "out.txt\n", "Makefile": MAKEFILE},
    )
    one, two = _trees(repo, {"src.txt": "good\n"}, {"src.txt": "bad!\n"})
    runner = _runner(repo)
    first, second = _same_second(lambda: (runner.suite(one, "base"), runner.suite(two, "change")))
    assert first[-1].status == "PASSED"
    assert second[-1].status == "FAILED", second[-1].tail
    assert "bad!" in second[-1].tail


GOLDEN_TEST = """from pathlib import Path

from calc import add


def test_matches_golden():
    golden = Path(__file__).parent / "golden.txt"
    if not golden.exists():
        golden.write_text(str(add(2, 3)))
    assert golden.read_text() == str(add(2, 3))
"""


def test_clean_ignored_gives_a_pristine_tree(tmp_path):
    files = {"pytest.ini": PYTEST_INI, ".gitignore": "golden.txt\n__pycache__/\n",
             "tests/test_golden.py": GOLDEN_TEST}  # fmt: skip
    for clean, expected in ((False, "FAILED"), (True, "PASSED")):
        extra = "clean_ignored = true" if clean else ""
        config = eyeful_config(extra=extra)
        repo = make_repo(tmp_path / f"repo-{clean}", {"pyproject.toml": config, **files})
        one, two = _trees(
            repo, {"calc.py": "def add(a, b):\n    return a + b\n"},
            {"calc.py": "def add(a, b):\n    return b + a + 1\n"},
        )  # fmt: skip
        runner = _runner(repo)
        assert runner.suite(two, "change")[-1].status == "PASSED"  # writes golden.txt: "6"
        # The base reads the golden file the change left, unless ignored files are removed.
        assert runner.suite(one, "base")[-1].status == expected


# Point 8: shallow clones and missing bases -----------------------------------------------------


@pytest.fixture
def shallow(tmp_path_factory) -> tuple[Path, str]:
    """A `git clone --depth 1` of a repository whose last commit breaks add."""
    home = tmp_path_factory.mktemp("shallow")
    origin = python_project(home / "origin")
    write(origin, {"calc.py": BROKEN_ADD})
    git(origin, "commit", "-qam", "break add")
    clone = home / "clone"
    run("git", "clone", "-q", "--depth", "1", f"file://{origin}", str(clone), cwd=home)
    missing = git(origin, "rev-parse", "HEAD^").strip()
    return clone, missing


def test_a_shallow_clone_head_is_exit_3_with_the_fetch_to_run(shallow):
    clone, missing = shallow
    confirm(clone)
    proc = review(clone, head="HEAD")
    assert proc.exit_code == 3, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert "not in this shallow clone" in proc.stderr
    assert "git fetch --deepen=1" in proc.stderr
    assert "--unshallow" in proc.stderr
    proc = review(clone, base=missing, head="HEAD")
    assert proc.exit_code == 3, proc.stdout + proc.stderr
    assert "git fetch --deepen=1" in proc.stderr
    # The plain pre-push hook, pushing the clone's only commit where nothing is yet.
    assert eyeful("install-hook", cwd=clone).returncode == 0
    bare = clone.parent / "elsewhere.git"
    run("git", "init", "-q", "--bare", str(bare), cwd=clone.parent)
    git(clone, "remote", "add", "elsewhere", str(bare))
    push = run("git", "push", "elsewhere", "HEAD:refs/heads/main", cwd=clone, check=False)
    assert push.returncode != 0, push.stdout + push.stderr
    assert "not in this shallow clone" in push.stderr, push.stderr
    # Once fetched, the real regression blocks.
    run("git", "fetch", "-q", "--deepen=1", cwd=clone)
    proc = review(clone, head="HEAD", format="json")
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    assert [r["test"] for r in proc.json["regressions"]] == ["tests/test_calc.py::test_add"]


def test_an_unfetched_base_commit_is_exit_3_with_git_fetch(tmp_path):
    repo = python_project(tmp_path / "repo")
    confirm(repo)
    proc = review(repo, base="1" * 40, head="HEAD")
    assert proc.exit_code == 3, proc.stdout + proc.stderr
    assert "not in this repository" in proc.stderr
    assert "`git fetch`" in proc.stderr
    # A typo stays a usage error.
    assert review(repo, base="no-such-branch").exit_code == 2


def test_a_configured_junit_report_in_pytests_default_format_still_blocks(tmp_path):
    """pytest's default JUnit family (xunit2) gives no `file`: `tests.test_calc` is a classname,
    and the regression must still be matched with the node id the base's focused run reports."""
    config = eyeful_config(
        f"{PYTEST} --junitxml=build/junit.xml",
        extra='junit = "build/junit.xml"\nreruns = 1',
        test_one=f"{PYTEST} {{test}}",
    )
    repo = python_project(tmp_path / "repo", config)
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    report = proc.json
    assert _kinds(report) == [("tests/test_calc.py::test_add", "regression")], report
    assert proc.exit_code == 1


def test_a_known_failure_in_an_edited_test_file_stays_pre_existing_when_its_line_moves(tmp_path):
    """A test that fails on HEAD, in a file the change edits (it adds another test), fails
    alike on both sides: the same exception from the same code, one line lower on the change
    because the change put a comment above it, and a message naming a temporary directory made
    with a prefix of its own. Neither is another cause: pre-existing, not a block."""
    mean = "def mean(xs):\n    return sum(xs) / len(xs)\n"
    tests = (
        "import tempfile\n\nfrom calc import mean\n\n\ndef test_mean_of_two():\n"
        "    where = tempfile.mkdtemp(prefix='mean-')\n"
        "    assert mean([1, 1]) == 2, f'no mean, see {where}'\n\n\n"
        "def test_mean_of_none():\n    assert mean([]) is None, 'no mean'\n"
    )
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "calc.py": mean,
         "tests/test_calc.py": tests},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {
        "calc.py": "# Statistics.\n" + mean,
        "tests/test_calc.py": tests.replace("'no mean, see", "'none, see")
        + "\n\ndef test_mean():\n    assert mean([1, 3]) == 2\n",
    })  # fmt: skip
    report = review(repo, format="json").json
    assert _kinds(report) == [
        ("tests/test_calc.py::test_mean_of_none", "pre_existing"),
        ("tests/test_calc.py::test_mean_of_two", "pre_existing"),
    ], report["regressions"]
    assert report["exit_code"] == 0
