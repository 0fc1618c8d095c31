"""Words a reviewer can paste (issue 22, point 4): each heading says what happened, each line says
only what is true, nothing said twice. One real review of a small project carries most of them:
a regression in a test method (its excerpt), a finding reproduced with a fix that leaves that
regression failing, and another expert's finding on the same line whose test passes."""

from __future__ import annotations

import json
import re

import pytest

from eyeful.failures import Failure
from eyeful.regressions import TestFailure as Regression
from eyeful.regressions import excerpt
from eyeful.regressions import notes as regression_notes
from eyeful.report import Report, SideInfo, to_markdown
from eyeful.runs import Run
from tests.conftest import seal
from tests.core import review
from tests.gitrepo import PYTEST_INI, confirm, eyeful_config, git, make_repo, write

CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
CHANGED = (
    "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b if a != 3 else 0\n"
)
TESTS = (
    "from calc import add\n\n\nclass TestCalc:\n    def test_add(self):\n"
    "        assert add(2, 3) == 5, 'add does not add'\n"
)
FIX = (
    "--- a/calc.py\n+++ b/calc.py\n@@ -3,4 +3,4 @@\n \n \n def mul(a, b):\n"
    "-    return a * b if a != 3 else 0\n+    return a * b\n"
)


def _finding(id_: str, expert: str, test: str, fails: str, **more: object) -> dict:
    return {
        "id": id_, "expert": expert, "severity": "warning", "evidence": "test",
        "path": "calc.py", "line": 6, "title": f"{id_}: mul is wrong for some inputs",
        "body": "mul returns 0 when a is 3.", "oracle": {"kind": "human"},
        "repro": {"path": f"tests/test_{id_}.py", "fails": fails,
                  "code": f"from calc import mul\n\n\ndef test_it():\n    {test}\n"},
        **more,
    }  # fmt: skip


FINDINGS = [
    _finding("three", "correctness", "assert mul(3, 4) == 12, 'mul(3, 4) is wrong'",
             "mul(3, 4) is wrong", fix={"diff": FIX}),
    _finding("two", "skeptic", "assert mul(2, 2) == 4, 'mul(2, 2) is wrong'",
             "mul(2, 2) is wrong"),
]  # fmt: skip


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    """One real review (markdown and JSON); sealed as conftest seals a test."""
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        root = tmp_path_factory.mktemp("wording")
        repo = make_repo(
            root / "repo",
            {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "calc.py": CALC,
             "tests/test_calc.py": TESTS},
        )  # fmt: skip
        confirm(repo)
        write(repo, {"calc.py": CHANGED})
        git(repo, "add", "-A")
        findings = root / "findings.json"
        findings.write_text(json.dumps(FINDINGS), encoding="utf-8")
        markdown = review(repo, findings=findings)
        assert markdown.exit_code == 1, markdown
        return markdown.stdout, markdown.json


def _item(text: str, start: str) -> str:
    """The list item that starts with ``start`` (up to the next item or section)."""
    after = text.split(start, 1)[1]
    return start + re.split(r"\n- |\n### |\n<details", after)[0]


def test_a_claim_whose_test_passed_is_not_headed_failing_test(reviewed):
    text, _ = reviewed
    item = _item(text, "- **question:** `calc.py:6` two:")
    assert "Failing test `tests/test_two.py`" not in item
    assert "(fails with" not in item
    assert "Test `tests/test_two.py`, claimed to fail with “mul(2, 2) is wrong”, passed on " \
           "the change (2 of 2 runs); its code is in the JSON report" in item, item  # fmt: skip
    reproduced = _item(text, "- **question:** `calc.py:6` three:")
    said = "Failing test `tests/test_three.py` (fails with “mul(3, 4) is wrong”); rerun:"
    assert said in reproduced


def test_findings_that_merely_share_a_line_are_not_reported_by_one_another(reviewed):
    text, report = reviewed
    assert "also reported by" not in text
    item = _item(text, "- **question:** `calc.py:6` three:")
    assert "another finding near it, not merged with it: `two` (skeptic, same line)" in item
    assert {f["id"]: f["merged"] for f in report["findings"]} == {"three": [], "two": []}


def test_the_checklist_points_at_what_is_given_above_instead_of_repeating_it(reviewed):
    text, _ = reviewed
    said = "passed on the change (2 of 2 runs)"
    above, checklist = text.split("### Uncertainty")
    assert "Not verified: Test `tests/test_two.py`, claimed to fail with" in above
    assert said in above and said not in checklist
    assert "the test passes on the change" not in text  # said once, in the words above
    assert "- [ ] finding `two` (two: mul is wrong for some inputs) could not be verified " \
           "(why: above, under Questions)" in checklist  # fmt: skip


def test_a_verified_fix_says_which_tests_still_fail_with_it(reviewed):
    text, report = reviewed
    three = next(f for f in report["findings"] if f["id"] == "three")
    assert three["fix_verified"] is True
    item = _item(text, "- **question:** `calc.py:6` three:")
    assert "the suite with the fix: FAILED (still failing, as on the change without it: " \
           "`tests/test_calc.py::TestCalc::test_add`)" in item, item  # fmt: skip


def test_excerpts_leave_out_object_reprs_with_addresses(reviewed):
    text, report = reviewed
    [regression] = report["regressions"]
    assert "add does not add" in regression["excerpt"]
    assert " object at 0x" not in regression["excerpt"] and " object at 0x" not in text
    raw = "    def test_add(self):\nself = <tests.test_calc.TestCalc object at 0x7faad647f010>\n" \
          "E   AssertionError: add does not add"  # fmt: skip
    shown = excerpt("", "t.py::TestCalc::test_add", Failure(text=raw))
    assert shown == "    def test_add(self):\nE   AssertionError: add does not add"


# -- the lines that need many runs: made up, as the review records them ----------------------

SIDE = SideInfo(tree="a" * 40, commit=None, label="staged", short="aaaaaaa")


def _run(side: str, name: str, status: str, duration: float = 0.1, **kw) -> Run:
    return Run(side=side, name=name, command="python -m unittest", tree="t",  # type: ignore[arg-type]
               status=status, exit_code=0 if status == "PASSED" else 1,  # type: ignore[arg-type]
               duration=duration, **kw)  # fmt: skip


def test_the_ran_line_counts_repeated_suite_runs_per_side():
    tests = {"t.T.test_a": "failed", "t.T.test_b": "passed"}
    runs = [
        _run("change", "test", "FAILED", tests=tests),
        _run("base", "test", "PASSED", tests={"t.T.test_a": "passed", "t.T.test_b": "passed"}),
    ]
    for _ in range(3):  # the confirmation's pairs, in the suite (unittest has no file context)
        runs += [_run("change", "test", "FAILED", tests=tests),
                 _run("base", "test", "PASSED", tests=dict.fromkeys(tests, "passed"))]  # fmt: skip
    ran = next(line for line in to_markdown(Report(base=SIDE, head=SIDE, runs=runs).finish())
               .splitlines() if line.startswith("Ran: "))  # fmt: skip
    assert len(ran) < 200, ran
    assert ran.count("tests on the change") == 1 and ran.count("tests on the base") == 1
    assert "tests on the change: FAILED, 1 passed, 1 failed (0.1s), then 3 more runs: FAILED" in ran
    assert "tests on the base: PASSED, 2 passed (0.1s), then 3 more runs: PASSED" in ran


def test_setup_run_twice_on_one_side_is_shown_once_and_says_why():
    runs = [_run("change", "setup", "PASSED", 9.2), _run("change", "test", "FAILED"),
            _run("change", "setup", "PASSED", 13.6)]  # fmt: skip
    text = to_markdown(Report(base=SIDE, head=SIDE, runs=runs).finish())
    assert text.count("setup on the change") == 1
    assert "setup on the change: PASSED, 2 runs (9.2s, 13.6s), once in each worktree that " \
           "needed it" in text  # fmt: skip


def test_one_unconfirmed_test_is_it_and_several_are_they():
    def unconfirmed(test: str) -> Regression:
        return Regression(test=test, kind="unconfirmed", blocking=False, on_change="failed",
                          on_base="passed", excerpt="")  # fmt: skip

    [(one, _)] = regression_notes([unconfirmed("t.py::test_a")])
    assert "re-run on its own to confirm it, so it does not block" in one
    [(two, _)] = regression_notes([unconfirmed("t.py::test_a"), unconfirmed("t.py::test_b")])
    assert "re-run on their own to confirm it, so they do not block" in two


def test_the_checklist_points_at_tests_given_under_questions_instead_of_repeating_them():
    flaky = Regression(test="t.py::test_f", kind="flaky", blocking=False, on_change="failed",
                       on_base="passed", excerpt="", confirmation="failed 1/3")  # fmt: skip
    report = Report(base=SIDE, head=SIDE, other_failures=[flaky])
    for text, unverified in regression_notes([flaky]):
        report.note(text, unverified=unverified)
    report.note("submodule `vendor` was left out", unverified=False)  # about nothing shown
    text = to_markdown(report.finish())
    questions, checklist = text.split("### Questions")[1].split("### Uncertainty")
    assert "`t.py::test_f` fails on the change but not every time it runs" in questions
    assert "- [ ] `t.py::test_f`: see Questions above" in checklist
    assert "flaky" not in checklist and "- [ ] submodule `vendor` was left out" in checklist
