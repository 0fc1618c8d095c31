"""A verdict holds where it was seen: each failing test is confirmed in the context its failure
needs (alone, in its file, in the suite), change and base paired in the same worktrees, and
nothing cached decides a verdict either way (issue 20, points 1 and 2)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.core import review
from tests.gitrepo import (
    PYTEST_INI,
    confirm,
    eyeful_config,
    git,
    make_repo,
    stage,
)


def _review(repo: Path, **options: object) -> tuple[int, dict]:
    done = review(repo, format="json", **options)
    return done.exit_code, done.json


def _kinds(report: dict) -> dict[str, str]:
    return {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}


def _project(tmp_path: Path, files: dict[str, str], extra: str = "reruns = 2") -> Path:
    config = eyeful_config(extra=extra)
    repo = make_repo(
        tmp_path / "repo", {"pyproject.toml": config, "pytest.ini": PYTEST_INI, **files}
    )
    confirm(repo)
    return repo


# The change makes settings() mutate a shared dict: the suite fails on the change every time and
# passes on the base, each test passes alone. The change introduced the order dependence.
SETTINGS = (
    'DEFAULTS = {"debug": False}\n\n\n'
    "def settings(**over):\n    out = dict(DEFAULTS)\n    out.update(over)\n    return out\n"
)
SETTINGS_SHARED = (
    'DEFAULTS = {"debug": False}\n\n\n'
    "def settings(**over):\n    DEFAULTS.update(over)\n    return DEFAULTS\n"
)
SETTINGS_TESTS = (
    "from config import settings\n\n\n"
    'def test_debug_on():\n    assert settings(debug=True)["debug"] is True\n\n\n'
    'def test_default_off():\n    assert settings()["debug"] is False\n'
)


def test_an_order_dependence_the_change_introduced_is_a_regression(tmp_path):
    repo = _project(tmp_path, {"config.py": SETTINGS, "tests/test_settings.py": SETTINGS_TESTS})
    stage(repo, {"config.py": SETTINGS_SHARED})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_settings.py::test_default_off": "regression"}, report
    (regression,) = report["regressions"]
    assert "in its file" in regression["confirmation"], regression
    assert code == 1


# test_total needs the state test_add leaves; the change really breaks total(). Alone, it fails
# on both sides (no state): the base's word must come from where the change's failure was seen.
CART = "ITEMS = []\n\n\ndef add(x):\n    ITEMS.append(x)\n\n\ndef total():\n    return sum(ITEMS)\n"
CART_TESTS = (
    "import cart\n\n\n"
    "def test_add():\n    cart.add(2)\n    assert cart.ITEMS == [2]\n\n\n"
    "def test_total():\n    assert cart.total() == 2\n"
)


def test_a_failure_that_needs_its_file_is_judged_in_its_file_on_the_base_too(tmp_path):
    repo = _project(tmp_path, {"cart.py": CART, "tests/test_cart.py": CART_TESTS})
    stage(repo, {"cart.py": CART.replace("return sum(ITEMS)", "return sum(ITEMS) + 1")})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_cart.py::test_total": "regression"}, report
    assert code == 1


# Fails the first time it ever runs (a counter in the common git dir): a flaky failure.
FLAKY_ONCE = """import subprocess
import json
from pathlib import Path

from calc import add


def test_add():
    common = subprocess.run(
        ["git", "rev-parse", "--git-common-dir"], capture_output=True, text=True, check=True
    ).stdout.strip()
    marker = Path(common) / "ran-once"
    first = not marker.exists()
    marker.write_text("x")
    assert not first, "first run ever"
    assert add(2, 3) == 5
"""
CALC = "def add(a, b):\n    return a + b\n"


def test_a_cached_failure_on_the_base_does_not_hide_a_regression(tmp_path):
    repo = _project(tmp_path, {"calc.py": CALC, "tests/test_add.py": FLAKY_ONCE})
    # Review 1: tree A (a harmless change) fails once, and that suite run is cached for tree A.
    stage(repo, {"README": "notes\n"})
    _review(repo)
    git(repo, "commit", "-qm", "A")
    # Review 2: A is the base; the change really breaks add().
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "regression"}, report
    assert code == 1


# A test that fails the first time it runs in a fresh checkout (an ignored marker file), on both
# sides: a pre-existing first-call bug, whichever worktrees the runs get.
FIRST_CALL = """from pathlib import Path

from calc import add


def test_add():
    marker = Path(".warm")
    first = not marker.exists()
    marker.write_text("x")
    assert not first, "cold start"
    assert add(2, 3) == 5
"""


def test_runs_of_both_sides_share_worktrees_so_warm_state_weighs_alike(tmp_path):
    repo = _project(
        tmp_path,
        {"calc.py": CALC, "tests/test_add.py": FIRST_CALL, ".gitignore": ".warm\n"},
        extra="reruns = 5",
    )
    stage(repo, {"calc.py": "# touched\n" + CALC})
    _review(repo, jobs=5)  # the change's suite run (it fails: a cold start) is cached
    for marker in (repo / ".git" / "eyeful" / "worktrees").glob("*/.warm"):
        marker.unlink()  # the worktrees as fresh ones would be
    code, report = _review(repo, jobs=5)
    assert report["runs"][0]["cached"], report["runs"][0]
    assert report["regressions"] == [], report
    assert code != 1


def test_a_real_regression_still_blocks_alone(tmp_path):
    repo = _project(tmp_path, {"calc.py": CALC, "tests/test_add.py": "from calc import add\n\n\n"
                                "def test_add():\n    assert add(2, 3) == 5\n"})  # fmt: skip
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "regression"}, report
    (regression,) = report["regressions"]
    assert regression["confirmation"] == (
        "on the change, alone: failed 2/2; on the base, alone: passed 2/2"
    )
    alone = [r for r in report["runs"] if r["name"] == "test_one"]
    assert len(alone) == 4  # only the test in question, live, reruns = 2 on each side
    assert code == 1


WHILE_FLAG = """from pathlib import Path

from calc import add


def test_sum():
    if Path({flag!r}).exists():
        assert add(2, 3) == 5, "add no longer returns the sum"
"""


def test_a_cached_finding_verdict_is_verified_again_live(tmp_path):
    # The reproduction fails only while a file outside the repository exists: outside every
    # cache key (as the README says), so only a live run can tell that it no longer fails.
    flag = tmp_path / "flag"
    finding = {
        "id": "f1", "expert": "correctness", "severity": "error", "evidence": "test",
        "path": "calc.py", "line": 2, "title": "add subtracts", "body": "add returns a - b.",
        "oracle": {"kind": "specified", "quote": "add returns the sum of its arguments",
                   "source": "README.md"},
        "repro": {"path": "tests/test_repro.py", "code": WHILE_FLAG.format(flag=str(flag)),
                  "fails": "add no longer returns the sum"},
    }  # fmt: skip
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([finding]), encoding="utf-8")
    repo = _project(
        tmp_path,
        {
            "calc.py": CALC,
            "README.md": "add returns the sum of its arguments\n",
            "tests/test_other.py": "def test_nothing():\n    pass\n",
        },
    )
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    flag.write_text("set")
    first, report = _review(repo, findings=findings)
    assert (first, report["findings"][0]["kind"]) == (1, "fail"), report["findings"]
    flag.unlink()
    again, report = _review(repo, findings=findings)
    assert report["findings"][0]["kind"] != "fail", report["findings"]
    assert again == 0
