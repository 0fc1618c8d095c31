"""A review end to end on real repositories: confirmation, regressions, feedback, exit codes.

Reviews run through the core in the test's process (tests/core.py); `git eyeful confirm` is
started as a user starts it.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from tests.core import review
from tests.gitrepo import (
    BROKEN_ADD,
    CALC,
    CALC_TESTS,
    PYTEST,
    PYTEST_INI,
    PYTHON,
    confirm,
    eyeful,
    eyeful_config,
    git,
    make_repo,
    python_project,
    stage,
    user_state,
)


def test_unconfirmed_commands_run_nothing_and_exit_3(tmp_path):
    marker = tmp_path / "ran"
    repo = python_project(tmp_path / "repo", eyeful_config(f"touch {marker}"))
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo)
    assert proc.exit_code == 3, proc.stderr
    assert not marker.exists()
    assert "not confirmed" in proc.stdout
    assert "git eyeful confirm" in proc.stdout


def test_confirm_is_recorded_outside_the_repository_and_changes_ask_again(tmp_path, hermetic):
    marker = tmp_path / "ran"
    repo = python_project(tmp_path / "repo", eyeful_config(f"touch {marker}"))
    before = user_state(repo)
    proc = eyeful("confirm", "--yes", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert f"touch {marker}" in proc.stderr
    assert user_state(repo) == before
    record = hermetic / ".config" / "eyeful" / "confirmed"
    assert record.is_file()
    stage(repo, {"calc.py": BROKEN_ADD})
    assert review(repo).exit_code == 0
    assert marker.exists()
    marker.unlink()
    # A changed command is a new command set: not confirmed any more.
    (repo / "pyproject.toml").write_text(eyeful_config(f"touch {marker} && true"))
    proc = review(repo)
    assert proc.exit_code == 3
    assert not marker.exists()


def test_the_confirm_helper_records_what_the_command_records(tmp_path, hermetic):
    # Most tests confirm through tests/gitrepo.py's in-process `confirm`: it must leave the
    # very record `git eyeful confirm --yes` leaves, or those tests test something else.
    record = hermetic / ".config" / "eyeful" / "confirmed"
    repo = python_project(tmp_path / "repo", eyeful_config(extra='env = ["CALC_MODE"]'))
    assert eyeful("confirm", "--yes", cwd=repo).returncode == 0
    by_command = record.read_text(encoding="ascii")
    record.unlink()
    confirm(repo)
    assert record.read_text(encoding="ascii") == by_command
    assert len(by_command.split()) == 1
    proc = eyeful("confirm", "--yes", cwd=repo)  # the command reads the helper's record
    assert proc.returncode == 0 and "Already confirmed." in proc.stderr, proc.stderr


def test_confirm_without_terminal_needs_yes(tmp_path):
    repo = python_project(tmp_path / "repo")
    proc = eyeful("confirm", cwd=repo)
    assert proc.returncode == 2
    assert "--yes" in proc.stderr


def test_a_confirmation_for_another_path_does_not_count(tmp_path):
    one = python_project(tmp_path / "one")
    two = python_project(tmp_path / "two")
    assert eyeful("confirm", "--yes", cwd=one).returncode == 0
    stage(two, {"calc.py": BROKEN_ADD})
    assert review(two).exit_code == 3


def _confirmed_project(tmp_path: Path, config: str | None = None) -> Path:
    repo = python_project(tmp_path / "repo", config)
    confirm(repo)
    return repo


def test_passing_change_exits_0_and_runs_only_the_change(tmp_path):
    repo = _confirmed_project(tmp_path)
    stage(
        repo,
        {"calc.py": "def add(a, b):\n    return b + a\n\n\ndef mul(a, b):\n    return a * b\n"},
    )
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.stdout + proc.stderr
    report = proc.json
    assert report["outcome"] == "clean"
    assert [(r["side"], r["name"], r["status"]) for r in report["runs"]] == [
        ("change", "test", "PASSED")
    ]
    assert report["regressions"] == []


def test_regression_blocks_with_exit_1_and_markdown_feedback(tmp_path):
    repo = _confirmed_project(
        tmp_path, eyeful_config(test_one=f"{PYTEST} {{test}}", extra="reruns = 3")
    )
    head = git(repo, "rev-parse", "--short=7", "HEAD").strip()
    stage(repo, {"calc.py": BROKEN_ADD})
    before = user_state(repo)
    proc = review(repo)
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    out = proc.stdout
    first = out.splitlines()[0]
    # The outcome in words first; a staged review names no snapshot id nobody can resolve.
    assert first.startswith("**eyeful: blocking** · staged changes against `HEAD` "), first
    assert f"({head})" in first and first.endswith(": 1 blocking issue"), first
    blocking = out.split("### Blocking issues")[1]
    assert "`tests/test_calc.py::test_add` fails on the change and passes on the base" in blocking
    assert "test_mul" not in blocking
    assert "assert -1 == 5" in blocking  # the last lines of its failure
    # No noise: no empty sections, and no agent is a fact of the footer, not a checklist box.
    assert "No questions." in out
    assert "Disputed" not in out and "### Uncertainty" not in out and "[ ]" not in out
    assert out.rstrip().splitlines()[-1] == (
        "<sub>No experts ran: no agent is configured ([tool.eyeful.agent]).</sub>"
    )
    # The Ran: line counts the tests; the rerun command, pasted into a shell, reproduces it.
    assert "Ran: tests on the change: FAILED, 1 passed, 1 failed (" in out
    assert "6 runs of a failing test alone (3 on the change, 3 on the base)." in out
    [rerun] = [line.strip() for line in blocking.splitlines() if line.strip().startswith("Rerun:")]
    command = rerun.removeprefix("Rerun: `").removesuffix("`")
    assert command == f"{PYTEST} tests/test_calc.py::test_add"
    assert user_state(repo) == before  # (the pasted command below writes bytecode there)
    pasted = subprocess.run(command, shell=True, cwd=repo, capture_output=True, text=True)
    assert pasted.returncode == 1 and "1 failed" in pasted.stdout


def test_json_report_fields(tmp_path):
    repo = _confirmed_project(tmp_path, eyeful_config(extra="reruns = 3"))  # the default
    stage(repo, {"calc.py": BROKEN_ADD})
    report = review(repo, format="json").json
    for field in ("base", "head", "runs", "regressions", "findings", "blocking", "uncertainty"):
        assert field in report
    assert report["blocking"] == 1
    assert report["exit_code"] == 1
    assert report["base"]["commit"] == git(repo, "rev-parse", "HEAD").strip()
    assert report["head"]["label"] == "staged"
    [regression] = report["regressions"]
    assert regression["test"] == "tests/test_calc.py::test_add"
    assert regression["kind"] == "regression"
    assert regression["oracle"] == "derived"
    assert (regression["on_change"], regression["on_base"]) == ("failed", "passed")
    sides = [(r["side"], r["name"], r["status"]) for r in report["runs"]]
    # The suite on the change; then the failing test alone, 3 times on each side (no base suite).
    assert sides[0] == ("change", "test", "FAILED")
    assert (
        sorted(sides[1:])
        == [("base", "test_one", "PASSED")] * 3 + [("change", "test_one", "FAILED")] * 3
    )
    assert report["runs"][0]["tests_from"] == "probe"  # the runner's own record
    assert regression["confirmation"] == (
        "on the change, alone: failed 3/3; on the base, alone: passed 3/3"
    )


def test_pre_existing_and_new_failures_do_not_block(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a + b\n",
            "tests/test_calc.py": CALC_TESTS,
        },
    )
    confirm(repo)
    stage(repo, {"tests/test_new.py": "def test_new():\n    assert 1 == 2\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.stdout
    report = proc.json
    kinds = {f["test"]: f["kind"] for f in report["other_failures"]}
    assert kinds == {
        "tests/test_calc.py::test_mul": "pre_existing",
        "tests/test_new.py::test_new": "new_test",
    }
    assert report["regressions"] == []
    md = review(repo).stdout
    assert "### Not blocking" in md
    assert (
        "`tests/test_calc.py::test_mul` fails with the base's code too, under the change's "
        "tests (pre-existing)" in md
    )


def test_output_parsing_without_junit_still_finds_the_regression(tmp_path):
    # A runner eyeful keeps no record of (here pytest with the probe unloaded): the labelled
    # fallback reads pytest's FAILED lines. (Both routes that name the probe are unset.)
    bare = f"env -u PYTEST_PLUGINS -u PYTEST_ADDOPTS {PYTEST}"
    config = eyeful_config(bare, test_one=f"{bare} {{test}}")
    repo = _confirmed_project(tmp_path, config)
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert proc.exit_code == 1, proc.stdout
    report = proc.json
    assert report["runs"][0]["tests_from"] == "output"
    assert [r["test"] for r in report["regressions"]] == ["tests/test_calc.py::test_add"]


def test_a_failing_test_the_output_names_is_a_failure_whatever_the_exit_code(tmp_path):
    # The command swallows pytest's exit status (`|| echo`), and eyeful keeps no record of it
    # (the probe is unset): the output still names the failing test, and that decides.
    bare = f"env -u PYTEST_PLUGINS -u PYTEST_ADDOPTS {PYTEST}"
    config = eyeful_config(f"{bare} || echo tolerated", test_one=f"{bare} {{test}}")
    repo = _confirmed_project(tmp_path, config)
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert proc.exit_code == 1, proc.stdout
    assert [r["test"] for r in proc.json["regressions"]] == ["tests/test_calc.py::test_add"]


def test_a_suite_without_test_names_is_compared_as_a_whole(tmp_path):
    check = f"{shlex.quote(PYTHON)} check.py"
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(check),
            "check.py": "import calc\nassert calc.add(2, 3) == 5, 'add is broken'\n",
            "calc.py": "def add(a, b):\n    return a + b\n",
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": "def add(a, b):\n    return a - b\n"})
    proc = review(repo)
    assert proc.exit_code == 1
    assert "the test suite fails on the change and passes on the base" in proc.stdout
    assert "AssertionError: add is broken" in proc.stdout
    assert "names no failing tests: the suite was compared as a whole" in proc.stdout


def test_suite_failing_on_both_sides_without_names_does_not_block_nor_pass(tmp_path):
    # Failing on both sides, a suite that names no test may hide what the change broke: it is
    # no evidence either way (exit 3), never "pre-existing" and clean.
    check = f"{shlex.quote(PYTHON)} check.py"
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(check), "check.py": "raise SystemExit(1)\n"},
    )
    confirm(repo)
    stage(repo, {"other.txt": "x\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.stdout
    assert proc.json["regressions"] == []
    [suite] = proc.json["other_failures"]
    assert (suite["test"], suite["kind"], suite["on_base"]) == ("the test suite", "undetermined",
                                                                "failed")  # fmt: skip
    assert any("whether the change broke more than the base already did could not be told"
               in u["text"] for u in proc.json["uncertainty"])  # fmt: skip


def test_a_wrapper_whose_first_step_fails_on_both_sides_hides_no_broken_test(tmp_path):
    # The project's CI script stops at a header check that already fails on HEAD, so pytest
    # never starts on either side: the change's broken `add` went untested (helper-44's case).
    script = f"set -e\n{shlex.quote(PYTHON)} tools/check_headers.py\n{PYTEST}\n"
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config("sh ci.sh", test_one=f"{PYTEST} {{test}}"),
            "pytest.ini": PYTEST_INI,
            "calc.py": CALC,
            "tests/test_calc.py": CALC_TESTS,
            "ci.sh": script,
            "tools/check_headers.py": "import sys\nprint('missing SPDX header: calc.py')\n"
            "sys.exit(1)\n",
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo)
    assert proc.exit_code == 3, proc.stdout
    assert "fails on the change and on the base, naming no test on either" in proc.stdout
    assert "pre-existing" not in proc.stdout


def test_empty_change_says_nothing_to_review(tmp_path):
    marker = tmp_path / "ran"
    repo = python_project(tmp_path / "repo", eyeful_config(f"touch {marker}"))
    (repo / "untracked.txt").write_text("not staged\n")
    proc = review(repo)
    assert proc.exit_code == 0
    assert "nothing to review" in proc.stdout
    assert not marker.exists()


def test_no_test_command_is_exit_3(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    stage(repo, {"a.txt": "b\n"})
    proc = review(repo)
    assert proc.exit_code == 3
    assert "no test command is configured" in proc.stdout
