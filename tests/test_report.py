"""The report for the person reading it (issue 10, points 6-12): the outcome in words first, the
push's fate in a hook, no noise, what ran and how to rerun it, many failures grouped, new failing
tests blocking on request, small JSON, SARIF pointing at the test's line."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from eyeful.config import parse_config
from eyeful.errors import EyefulError
from eyeful.findings import Repro
from eyeful.grading import GradedOracle, ReportedFinding
from eyeful.regressions import TestFailure as Failure
from eyeful.report import Report, RoleUsage, SideInfo, to_markdown
from eyeful.runs import Run
from eyeful.testlines import definition_line
from tests.conftest import seal
from tests.core import review
from tests.gitrepo import PYTEST, confirm, git, make_repo, write

STAGED = SideInfo(tree="a" * 40, commit=None, label="staged", short="aaaaaaa")
HEAD = SideInfo(tree="b" * 40, commit="c" * 40, label="HEAD", short="ccccccc")


def _run(side: str, status: str, tests: dict[str, str], **kw) -> Run:
    return Run(
        side=side,
        name="test",
        command="pytest",
        tree="t",
        status=status,  # type: ignore[arg-type]
        exit_code=0 if status == "PASSED" else 1,
        duration=0.4,
        tests=tests,
        **kw,
    )


def _question(**kw) -> ReportedFinding:
    fields = {
        "id": "q",
        "expert": "skeptic",
        "severity": "warning",
        "evidence": "test",
        "path": "calc.py",
        "line": 2,
        "title": "Is this right?",
        "body": "Maybe not.",
        "kind": "review",
        "label": "question",
        "oracle": GradedOracle(declared="human", graded="human"),
        "repro": Repro(
            path="tests/test_q.py", code="def test_q():\n    assert 0, 'nope'\n", fails="nope"
        ),
    }
    fields.update(kw)
    return ReportedFinding(**fields)


def _regression(test: str, excerpt: str = "E   assert 1 == 2") -> Failure:
    return Failure(
        test=test,
        kind="regression",
        blocking=True,
        on_change="failed",
        on_base="passed",
        excerpt=excerpt,
    )


# -- point 6: the outcome in words, first ---------------------------------------------------------


def test_first_line_states_the_outcome_in_words():
    blocking = Report(base=HEAD, head=STAGED, regressions=[_regression("t.py::test_a")]).finish()
    questions = Report(base=HEAD, head=STAGED, findings=[_question()]).finish()
    clean = Report(base=HEAD, head=STAGED).finish()
    unverified = Report(base=HEAD, head=STAGED)
    unverified.note("no test command is configured", unverified=True)
    unverified.finish()
    first = {
        r.outcome + str(r.questions): to_markdown(r).splitlines()[0]
        for r in (blocking, questions, clean, unverified)
    }
    assert first["blocking0"].startswith("**eyeful: blocking** · staged changes against")
    assert first["blocking0"].endswith(": 1 blocking issue")
    assert first["clean1"].startswith("**eyeful: questions only** ")
    assert first["clean1"].endswith(": nothing blocks; 1 question")
    assert first["clean0"].startswith("**eyeful: clean** ")
    # An exit-3 report must not read as clean: "0 blocking issues" is gone from it.
    assert first["unverified0"].startswith("**eyeful: could not verify** ")
    assert "could not be made" in first["unverified0"]
    assert "0 blocking" not in first["unverified0"]


def test_in_a_hook_the_last_line_says_what_happened_to_the_push_and_how_to_skip():
    blocking = Report(base=HEAD, head=STAGED, regressions=[_regression("t.py::test_a")]).finish()
    unverified = Report(base=HEAD, head=STAGED)
    unverified.note("the commands are not confirmed", unverified=True)
    unverified.finish()
    clean = Report(base=HEAD, head=STAGED).finish()
    assert "push" not in to_markdown(blocking)  # not in a hook: no word about a push
    last = to_markdown(blocking, "pre-commit").splitlines()[-1]
    assert last.startswith("**The push was stopped** because of the blocking issues")
    assert "`SKIP=eyeful git push`" in last and "`git push --no-verify`" in last
    last = to_markdown(unverified, "git").splitlines()[-1]
    assert "could not verify" in last and "`git push --no-verify`" in last
    assert "SKIP=eyeful" not in last
    assert to_markdown(clean, "git").splitlines()[-1] == "**The push goes ahead.**"


# -- point 7: no noise ----------------------------------------------------------------------------


def test_a_clean_push_prints_a_few_lines_and_no_unchecked_box():
    report = Report(base=HEAD, head=STAGED, runs=[_run("change", "PASSED", {"t::a": "passed"})])
    report.facts.append("No experts ran: no agent is configured ([tool.eyeful.agent])")
    text = to_markdown(report.finish(), "pre-commit")
    lines = [line for line in text.splitlines() if line]
    assert len(lines) <= 5, text
    assert "[ ]" not in text and "None." not in text and "Disputed" not in text
    assert "no agent is configured" in lines[-2] and lines[-2].startswith("<sub>")


def test_empty_sections_collapse_to_one_line_and_real_gaps_stay_a_checklist():
    report = Report(base=HEAD, head=STAGED, findings=[_question()])
    report.note("submodule `vendor` was left out", unverified=False)
    report.agents["expert"] = RoleUsage(calls=3, tokens=1200, seconds=2.5)
    text = to_markdown(report.finish())
    assert "No blocking issues." in text and "### Blocking issues" not in text
    assert "### Questions" in text
    assert "- [ ] submodule `vendor` was left out" in text
    assert (
        text.rstrip().splitlines()[-1] == "<sub>Agents: expert 3 calls, 1,200 tokens, 2.5s.</sub>"
    )


# -- point 8: what ran, and how to rerun it -------------------------------------------------------


def test_ran_line_counts_outcomes_and_dates_a_cached_run():
    change = _run(
        "change",
        "FAILED",
        {"a": "passed", "b": "failed", "c": "skipped", "d": "error", "e": "passed"},
    )
    base = _run("base", "PASSED", {"a": "passed"}, cached=True, started="2026-11-30T09:05:00+00:00")
    text = to_markdown(Report(base=HEAD, head=STAGED, runs=[change, base]).finish())
    assert (
        "Ran: tests on the change: FAILED, 2 passed, 1 failed, 1 skipped, 1 error (0.4s); "
        "tests on the base: PASSED, 1 passed (cached: ran 2026-11-30 09:05 UTC, took 0.4s)."
    ) in text


def test_blocking_finding_shows_its_reproduction_test_and_a_rerun_command():
    finding = _question(
        kind="fail",
        label="issue (blocking)",
        oracle=GradedOracle(declared="implicit", graded="implicit"),
        rerun="pytest -q tests/test_q.py",
    )
    text = to_markdown(Report(base=HEAD, head=STAGED, findings=[finding]).finish())
    blocking = text.split("### Blocking issues")[1]
    assert (
        "Failing test `tests/test_q.py` (fails with “nope”); rerun: save it as that file, then "
        "`pytest -q tests/test_q.py`:"
    ) in blocking
    assert "def test_q():" in blocking


def test_rerun_commands_quote_the_test_id_for_the_shell():
    from eyeful.focus import Focus
    from eyeful.report import add_reruns

    odd = "tests/test_p.py::test_p[a b;$(touch x)]"
    report = Report(base=HEAD, head=STAGED, regressions=[_regression(odd)])
    add_reruns(report, "pytest -q", Focus(template="pytest -q {test}"))
    assert report.regressions[0].rerun == f"pytest -q {shlex.quote(odd)}"
    assert shlex.split(report.regressions[0].rerun)[-1] == odd


# -- point 9: many failures from one cause --------------------------------------------------------


def test_regressions_of_one_cause_are_one_item_and_other_causes_their_own():
    def failing(test: str, message: str, at: str, excerpt: str = "E   assert") -> Failure:
        return _regression(test, excerpt).model_copy(
            update={"message": message, "raised_at": at, "cause": f"{message} at {at}"}
        )

    same = [
        failing(
            f"tests/test_v.py::test_v[{n}]",
            "AssertionError: VERSION changed",
            "version.py:3",
            f"n = {n}\nE   VERSION changed",
        )
        for n in range(28)
    ]
    same.append(
        failing("tests/test_x.py::test_x", "AssertionError: VERSION changed", "version.py:3")
    )  # another file, the same cause
    other = failing("tests/test_w.py::test_w", "KeyError: 'w'", "w.py:1")
    unknown = [_regression("tests/test_u.py::test_u", "E   other"),  # read from text: by words
               _regression("tests/test_u.py::test_u2", "E   other")]  # fmt: skip
    text = to_markdown(Report(base=HEAD, head=STAGED, regressions=[*same, other, *unknown])
                       .finish())  # fmt: skip
    assert text.splitlines()[0].endswith(": 3 blocking issues (32 failing tests)")
    assert "29 tests fail on the change and pass on the base, one cause: " \
           "`AssertionError: VERSION changed` at `version.py:3`" in text  # fmt: skip
    assert "`tests/test_w.py::test_w` fails on the change and passes on the base" in text
    assert "2 tests fail on the change and pass on the base, one cause: `E other`" in text
    folded = text.split("<details>")[1].split("</details>")[0]
    assert folded.count("`test_v[") == 28 and "`tests/test_x.py`: `test_x`" in folded
    assert text.count("VERSION changed\n") == 1  # one excerpt: the first test's
    assert len(text.splitlines()) < 40


def test_past_five_causes_each_is_one_line_and_excerpts_are_at_most_fifteen_lines():
    # Issue 35, point 7: 30 regressions of 30 causes (each test's own assertion line), each with
    # a long excerpt (pytest's long form echoes the test's body): five causes in full with at most
    # 15 lines of excerpt each, the other 25 a line each in <details>; the JSON keeps all 30.
    body = "\n".join(f"    step_{k} = compute({k})" for k in range(40))
    regressions = [
        _regression(f"tests/test_m{n}.py::test_m{n}", f"{body}\nE   assert {n} == -{n}")
        .model_copy(update={"message": f"AssertionError: assert {n} == -{n}",
                            "raised_at": f"tests/test_m{n}.py:{n + 2}",
                            "cause": f"AssertionError at tests/test_m{n}.py:{n + 2}"})
        for n in range(30)
    ]  # fmt: skip
    report = Report(base=HEAD, head=STAGED, regressions=regressions).finish()
    text = to_markdown(report)
    lines = text.splitlines()
    assert lines[0].endswith(": 30 blocking issues"), lines[0]
    assert text.count("**issue (blocking):**") == 6  # five in full, then the rest in one item
    assert "25 more causes (25 tests) fail on the change and pass on the base" in text
    folded = text.split("25 more causes")[1].split("</details>")[0]
    assert all(f"`tests/test_m{n}.py::test_m{n}`" in folded for n in range(5, 30))
    assert folded.count("step_") == 0  # one line each, no excerpt
    fences = [f.removeprefix("text\n") for f in text.split("```")[1::2]]
    assert len(fences) == 5 and all(len(f.strip().splitlines()) <= 15 for f in fences), fences
    assert "E   assert 0 == -0" in fences[0]  # the end of the failure, where the error is
    assert len(lines) <= 160, len(lines)
    assert len(json.loads(report.model_dump_json())["regressions"]) == 30


# -- point 10: block on new failing tests, when asked ---------------------------------------------


def test_block_new_failures_is_a_strict_boolean_off_by_default():
    assert parse_config({}, "pyproject.toml [tool.eyeful]").block_new_failures is False
    assert parse_config({"block_new_failures": True}, "x").block_new_failures is True
    with pytest.raises(EyefulError, match="block_new_failures"):
        parse_config({"block_new_failures": "yes"}, "x")


# -- point 12: SARIF regressions point at the test's line -----------------------------------------


def test_definition_line_finds_functions_methods_and_parametrized_tests():
    source = (
        "import pytest\n\n\ndef test_a():\n    pass\n\n\nclass TestB:\n    def test_a(self):\n"
        "        pass\n\n    async def test_c(self):\n        pass\n\n\n@pytest.mark.parametrize"
        "('n', [1])\ndef test_p(n):\n    pass\n"
    )
    assert definition_line(source, "t.py::test_a") == 4
    assert definition_line(source, "t.py::TestB::test_a") == 9
    assert definition_line(source, "t.py::TestB::test_c") == 12
    assert definition_line(source, "t.py::test_p[1]") == 17
    assert definition_line(source, "t.py::test_missing") is None


# -- end to end: one real review of a big suite with many failures from one cause ----------------


N_TRIVIAL = 2000
N_BROKEN = 30

BIG_SUITE = {
    "pytest.ini": "[pytest]\npythonpath = .\n",
    "version.py": "VERSION = 1\n",
    "tests/test_trivial.py": (
        "import pytest\n\n\n"
        f"@pytest.mark.parametrize('n', range({N_TRIVIAL}))\ndef test_trivial(n):\n"
        "    assert n >= 0\n"
    ),
    "tests/test_version.py": (
        "import pytest\n\nfrom version import VERSION\n\n\n"
        f"@pytest.mark.parametrize('n', range({N_BROKEN}))\ndef test_version(n):\n"
        "    assert VERSION == 1, 'VERSION changed'\n"
    ),
}


@pytest.fixture(scope="module")
def big_review(tmp_path_factory):
    """A suite of 2,000 trivial tests and 28 that one changed character breaks, reviewed once
    (JSON); markdown, --all-tests and SARIF are then served from the cache. Sealed as conftest
    seals a test."""
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        root = tmp_path_factory.mktemp("big")
        config = (
            "[tool.eyeful]\nreruns = 1\n"
            f"[tool.eyeful.commands]\ntest = {PYTEST!r}\ntest_one = {PYTEST + ' {test}'!r}\n"
        )
        repo = make_repo(root / "repo", {"pyproject.toml": config, **BIG_SUITE})
        confirm(repo)
        write(repo, {"version.py": "VERSION = 2\n"})
        git(repo, "add", "-A")
        compact = review(repo, format="json")
        sarif = root / "out.sarif"
        markdown = review(repo, sarif=sarif)
        full = review(repo, format="json", all_tests=True)
        return repo, compact, markdown, full, sarif


def test_json_keeps_failing_tests_and_counts_and_stays_small(big_review):
    _, compact, _, full, _ = big_review
    assert compact.exit_code == 1, compact.stderr
    report = json.loads(compact.stdout)
    change, *alone = report["runs"]
    broken = {f"tests/test_version.py::test_version[{n}]" for n in range(N_BROKEN)}
    assert change["counts"] == {"passed": N_TRIVIAL, "failed": N_BROKEN}
    assert set(change["tests"]) == broken
    assert alone
    for run in alone:  # the failing tests alone, on each side: nothing else to drop
        assert set(run["tests"]) <= broken
    assert "test_trivial" not in compact.stdout
    everything = json.loads(full.stdout)
    assert len(everything["runs"][0]["tests"]) == N_TRIVIAL + N_BROKEN
    # What one passing test costs each format; the project had 62,000 tests.
    per_test_full = (len(full.stdout) - len(compact.stdout)) / N_TRIVIAL
    assert per_test_full > 50
    projected = len(compact.stdout) + 0 * 62_000  # a passing test costs the default nothing
    assert projected < 200_000, projected


def test_many_failures_of_one_cause_are_one_item_with_a_rerun_command(big_review):
    # Issue 22, point 3: the same type, raising line and message are one blocking item, in at
    # most 40 lines of markdown; the JSON keeps every test, each with the cause it shares.
    repo, compact, markdown, _, _ = big_review
    assert markdown.exit_code == 1
    text = markdown.stdout
    assert text.startswith("**eyeful: blocking** · staged changes against `HEAD` ")
    assert text.splitlines()[0].endswith(f": 1 blocking issue ({N_BROKEN} failing tests)")
    assert len(text.splitlines()) <= 40, len(text.splitlines())
    assert text.count("**issue (blocking):**") == 1
    assert (
        f"**issue (blocking):** {N_BROKEN} tests fail on the change and pass on the base, one "
        "cause: `AssertionError: VERSION changed` at `tests/test_version.py:8`"
    ) in text
    assert text.count("\n  AssertionError: VERSION changed") == 1  # one excerpt: its frames
    assert "\n  tests/test_version.py:8 in test_version\n" in text
    folded = text.split(f"<details><summary>The {N_BROKEN} failing tests")[1].split("</details>")[0]
    assert all(f"`test_version[{n}]`" in folded for n in range(N_BROKEN))
    assert "`test_version[1]`, `test_version[2]`" in folded  # in natural order
    regressions = json.loads(compact.stdout)["regressions"]
    assert len(regressions) == N_BROKEN
    assert len({r["cause"] for r in regressions}) == 1 and regressions[0]["cause"]
    assert {r["raised_at"] for r in regressions} == {"tests/test_version.py:8"}
    assert "(cached: ran " in text  # the review was run by the JSON call before
    rerun = re.search(r"Rerun `[^`]*`: `([^`]*)`", text)
    assert rerun is not None
    import subprocess

    pasted = subprocess.run(rerun[1], shell=True, cwd=repo, capture_output=True, text=True)
    assert pasted.returncode == 1 and "1 failed" in pasted.stdout, pasted.stdout


def test_sarif_regressions_point_at_the_tests_definition_line(big_review):
    _, _, _, _, sarif = big_review
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert len(results) == N_BROKEN
    for result in results:
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "tests/test_version.py"
        assert location["region"] == {"startLine": 7}  # `def test_version(n):`


def test_new_failing_tests_block_with_block_new_failures(tmp_path):
    config = (
        f"[tool.eyeful]\nblock_new_failures = true\n[tool.eyeful.commands]\ntest = {PYTEST!r}\n"
    )
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": config,
            "pytest.ini": "[pytest]\n",
            "tests/test_ok.py": "def test_ok():\n    pass\n",
        },
    )
    confirm(repo)
    write(repo, {"tests/test_new.py": "def test_new():\n    assert 1 == 2\n"})
    git(repo, "add", "-A")
    proc = review(repo, format="json")
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert [(f["test"], f["kind"], f["blocking"]) for f in report["regressions"]] == [
        ("tests/test_new.py::test_new", "new_test", True)
    ]
    text = review(repo).stdout
    assert "`tests/test_new.py::test_new` is new in the change and fails" in text
    assert "block_new_failures = true" in text
