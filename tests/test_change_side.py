"""A block names what the change's code did (issue 33): the base runs the change's tests, and a
reproduction blocks only on the changed code's behaviour. Each shape here blocked before."""

from __future__ import annotations

from pathlib import Path

from tests.core import review
from tests.gitrepo import PYTEST_INI, confirm, eyeful_config, make_repo, stage

CALC = "def add(a, b):\n    return abs(a) + b\n"  # a bug for negatives, on both sides
ADD_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _review(repo: Path, **options: object) -> tuple[int, dict]:
    done = review(repo, format="json", **options)
    return done.exit_code, done.json


def _kinds(report: dict) -> dict[str, str]:
    return {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}


def _calc_repo(tmp_path: Path, files: dict[str, str] | None = None, extra: str = "") -> Path:
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(extra=extra), "pytest.ini": PYTEST_INI, "calc.py": CALC,
         "README.md": "add returns the sum of its arguments\n",
         "tests/test_add.py": ADD_TEST, **(files or {})},
    )  # fmt: skip
    confirm(repo)
    return repo


def test_a_stricter_test_whose_message_holds_a_timestamp_is_pre_existing(tmp_path):
    # The change only makes the test stricter; the old code fails it too, by the same cause,
    # though the message's number differs on every run.
    repo = _calc_repo(tmp_path, extra="reruns = 2")
    stage(repo, {"tests/test_add.py": (
        "import time\n\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
        "    assert add(-1, 1) == 0, f'add(-1, 1) is not 0 at {time.perf_counter()}'\n"
    )})  # fmt: skip
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "pre_existing"}, report
    # Alone, two pairs: one context is enough (not the file's and the suite's too).
    assert sum(1 for r in report["runs"] if r["name"] == "test_one") <= 6, report["runs"]
    assert code == 0
