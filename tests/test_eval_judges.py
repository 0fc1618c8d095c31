"""The eval's judges: word-boundary claims, levels, fail-closed unverifiable runs, skipped judges,
rates over the cases that assert, and malformed ground truth refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from eyeful.errors import EyefulError
from eyeful.evaluate.cases import CaseFile, load_case
from eyeful.evaluate.judges import ReportView, judge, states, unverifiable
from eyeful.evaluate.runner import CaseResult, missed_thresholds, totals


def finding(
    kind="fail",
    label="issue (blocking)",
    path="app.py",
    line=10,
    end_line=None,
    title="SQL injection in the query",
    body="The name is put into the SQL string.",
    **more,
):
    return {"id": f"f-{kind}-{line}", "path": path, "line": line, "end_line": end_line,
            "title": title, "body": body, "kind": kind, "label": label, "extra": "ignored",
            **more}  # fmt: skip


QUESTION = {"kind": "review", "label": "question"}
PRE_EXISTING = {"kind": "review", "label": "note (pre-existing)"}


def view(*findings, regressions=(), exit_code=None, outcome=None, uncertainty=(), **extra):
    blocking = sum(f["kind"] == "fail" for f in findings) + len(regressions)
    code = exit_code if exit_code is not None else (1 if blocking else 0)
    return ReportView.model_validate(
        {
            "outcome": outcome or ("blocking" if blocking else "clean"),
            "exit_code": code,
            "blocking": blocking,
            "findings": list(findings),
            "regressions": [{"test": t, "kind": "regression"} for t in regressions],
            "uncertainty": list(uncertainty),
            **extra,
        }
    )


def spec(**truth) -> CaseFile:
    return CaseFile.model_validate({"base": "HEAD~1", "change": "HEAD", **truth})


def verdicts(case: CaseFile, report: ReportView | None, why: str | None = None) -> dict:
    return {v.judge: (v.status, v.reason) for v in judge(case, report, why)}


# Word boundaries --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "text", "expected"),
    [
        ("injection", "SQL injection in the query", True),
        ("INJECTION", "sql Injection", True),
        ("injection", "SQL injections in the query", False),
        ("injections", "one SQL injection", False),
        ("hash", "a hashicorp vault token", False),
        ("hash", "the password hash is md5", True),
        ("discount", "the discounted price", False),
        ("expiry second", "valid at its expiry   second", True),
        ("expiry second", "valid at its expiry seconds", False),
        ("is_expired", "`is_expired` compares with >", True),
        ("expired", "`is_expired` compares with >", False),
        (">=", "compares with >= now", True),
        ("", "anything at all", True),
    ],
)
def test_claims_match_on_word_boundaries(claim, text, expected):
    assert states(claim, text) is expected


def test_required_claim_near_miss_is_not_found():
    case = spec(
        required_findings=[{"path": "app.py", "claim": "injection", "at_least": "question"}]
    )
    plural = finding(title="SQL injections everywhere", body="see title")
    assert verdicts(case, view(plural))["required_findings"][0] == "fail"
    assert verdicts(case, view(finding()))["required_findings"][0] == "pass"


def test_forbidden_claim_near_miss_does_not_trip():
    case = spec(forbidden_findings=[{"path": "app.py", "claim": "hash"}])
    vault = finding(title="hashicorp vault token is logged", body="leaks")
    assert verdicts(case, view(vault))["forbidden_findings"][0] == "pass"
    weak = finding(title="weak hash", body="md5")
    assert verdicts(case, view(weak))["forbidden_findings"][0] == "fail"


# Levels, paths and lines -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reported", "at_least", "expected"),
    [
        ({}, "blocking", "pass"),
        (QUESTION, "blocking", "fail"),
        (QUESTION, "question", "pass"),
        (PRE_EXISTING, "question", "fail"),
        (PRE_EXISTING, "reported", "pass"),
        ({"kind": "open", "label": "question"}, "question", "fail"),
        ({}, "reported", "pass"),
    ],
)
def test_required_levels(reported, at_least, expected):
    case = spec(required_findings=[{"path": "app.py", "claim": "injection", "at_least": at_least}])
    assert verdicts(case, view(finding(**reported)))["required_findings"][0] == expected


@pytest.mark.parametrize(
    ("reported", "floor", "expected"),
    [
        (QUESTION, "blocking", "pass"),  # a question about the bait stays legal
        ({}, "blocking", "fail"),
        (QUESTION, "question", "fail"),
        (PRE_EXISTING, "question", "pass"),
        (PRE_EXISTING, "reported", "fail"),
    ],
)
def test_forbidden_floors(reported, floor, expected):
    case = spec(forbidden_findings=[{"path": "app.py", "claim": "injection", "floor": floor}])
    assert verdicts(case, view(finding(**reported)))["forbidden_findings"][0] == expected


def test_forbidden_floor_defaults_to_blocking_and_empty_claim_forbids_anything():
    case = spec(forbidden_findings=[{"path": "app.py", "claim": ""}])
    assert case.forbidden_findings[0].floor == "blocking"
    assert verdicts(case, view(finding(title="x", body="y")))["forbidden_findings"][0] == "fail"
    assert verdicts(case, view(finding(path="other.py")))["forbidden_findings"][0] == "pass"


def test_paths_match_exactly_and_lines_must_overlap():
    entry = {"path": "app.py", "claim": "injection", "at_least": "blocking", "lines": [10, 12]}
    case = spec(required_findings=[entry])
    assert verdicts(case, view(finding(path="App.py")))["required_findings"][0] == "fail"
    assert verdicts(case, view(finding(path="src/app.py")))["required_findings"][0] == "fail"
    assert verdicts(case, view(finding(line=13)))["required_findings"][0] == "fail"
    assert verdicts(case, view(finding(line=8, end_line=10)))["required_findings"][0] == "pass"


def test_regression_judges():
    case = spec(regressions=["t.py::test_a"], forbidden_regressions=["t.py::test_b"])
    assert verdicts(case, view(regressions=["t.py::test_a"])) | {} == {
        "required_findings": ("skipped", "no ground truth for it"),
        "forbidden_findings": ("skipped", "no ground truth for it"),
        "regressions": ("pass", "1 listed"),
        "forbidden_regressions": ("pass", "none listed"),
        "clean": ("skipped", "no ground truth for it"),
    }
    both = verdicts(case, view(regressions=["t.py::test_b"]))
    assert both["regressions"] == ("fail", "not listed: t.py::test_a")
    assert both["forbidden_regressions"][0] == "fail"


def test_clean_case():
    case = spec(clean=True)
    assert verdicts(case, view(finding(**QUESTION)))["clean"][0] == "pass"
    assert verdicts(case, view(finding()))["clean"][0] == "fail"
    assert verdicts(case, view(regressions=["t.py::test_a"]))["clean"][0] == "fail"


# Unverifiable is not clean -----------------------------------------------------------------

EVERYTHING = {
    "required_findings": [{"path": "app.py", "claim": "", "at_least": "reported"}],
    "forbidden_findings": [{"path": "app.py", "claim": ""}],
    "regressions": ["t.py::test_a"],
    "forbidden_regressions": ["t.py::test_b"],
    "clean": True,
}


def test_an_unverifiable_run_fails_every_asserting_judge():
    case = spec(**EVERYTHING)
    for report, why in [
        (None, "eyeful exited 4 without a report"),
        (view(), "eyeful could not verify (exit 3, outcome unverified)"),
    ]:
        result = verdicts(case, report, why)
        assert {status for status, _ in result.values()} == {"fail"}
        assert all(reason.startswith("unverifiable:") for _, reason in result.values())


def test_an_unverifiable_run_leaves_judges_without_ground_truth_skipped():
    result = verdicts(spec(forbidden_findings=[{"path": "a.py", "claim": ""}]), None, "exit 4")
    assert result["forbidden_findings"][0] == "fail"
    assert result["clean"][0] == result["regressions"][0] == "skipped"


@pytest.mark.parametrize(
    ("exit_code", "report", "agent", "why"),
    [
        (4, None, False, "without a report"),
        (2, None, False, "without a report"),
        (3, view(exit_code=3, outcome="unverified"), False, "could not verify"),
        (
            0,
            view(uncertainty=[{"text": "setup failed", "unverified": True}]),
            False,
            "setup failed",
        ),
        (
            0,
            view(
                uncertainty=[
                    {
                        "text": "no experts ran: the agent is not confirmed for this repository",
                        "unverified": False,
                    }
                ]
            ),
            True,
            "not confirmed",
        ),
        (0, view(), True, "no expert ran"),
        (
            0,
            view(experts=["a", "b"], agents={"expert": {"calls": 2, "faults": 2}}),
            True,
            "every expert faulted",
        ),
    ],
)
def test_what_makes_a_run_unverifiable(exit_code, report, agent, why):
    reason = unverifiable(exit_code, report, agent)
    assert reason is not None and why in reason


NOT_RUN = {
    "kind": "review",
    "label": "question",
    "repro": {"path": "t.py"},
    "gates": [],
    "unverified": "no test_one command is configured ([tool.eyeful] commands.test_one)",
}


def test_a_reproduction_nothing_ran_makes_the_run_unverifiable():
    report = view(finding(**NOT_RUN))
    assert "was never run: no test_one command" in unverifiable(0, report, agent=False)
    case = spec(forbidden_findings=[{"path": "app.py", "claim": ""}])
    why = unverifiable(0, report, agent=False)
    assert verdicts(case, report, why)["forbidden_findings"][0] == "fail"
    # ... but not under read_only, where nothing is meant to run,
    assert unverifiable(0, report, agent=False, executed=False) is None
    # nor when the finding's own reproduction was refused, or a gate was reached.
    refused = {**NOT_RUN, "unverified": "refused: tests/x.py exists in the change"}
    assert unverifiable(0, view(finding(**refused)), agent=False) is None
    ran = {**NOT_RUN, "gates": [{"name": "runs", "status": "fail"}], "unverified": "runs: ..."}
    assert unverifiable(0, view(finding(**ran)), agent=False) is None
    inspected = {**NOT_RUN, "evidence": "inspection", "repro": None}
    assert unverifiable(0, view(finding(**inspected)), agent=False) is None


def test_a_review_that_ran_is_verifiable():
    assert unverifiable(0, view(), agent=False) is None
    assert unverifiable(1, view(finding()), agent=False) is None
    report = view(experts=["a", "b"], agents={"expert": {"calls": 2, "faults": 1}})
    assert unverifiable(0, report, agent=True) is None


# Skipped judges and rates ------------------------------------------------------------------


def result(case, status="pass", judges=None, met=0, total=0, **kw):
    return CaseResult(
        case=case,
        condition="execution",
        status=status,
        judges=judges or [],
        exit_code=0,
        required_met=met,
        required_total=total,
        **kw,
    )


def test_rates_count_only_the_cases_that_assert():
    recall_case = spec(required_findings=[{"path": "a.py", "claim": "", "at_least": "question"}])
    silent = spec()
    rows = [
        result("r", status="fail", judges=judge(recall_case, view(), None), met=0, total=1),
        result("s1", judges=judge(silent, view(), None)),
        result("s2", judges=judge(silent, view(), None)),
    ]
    (total,) = totals(rows, ["execution"])
    assert (total.recall, total.recall_cases) == (0.0, 1)  # not 2/3: silent cases are skipped
    assert total.false_blocking is None and total.false_blocking_cases == 0
    assert missed_thresholds([total], 0.5, None) == ["execution: recall 0.000 < --min-recall 0.5"]
    assert "not measured" in missed_thresholds([total], None, 0.0)[0]


def test_false_blocking_rate_over_forbidden_and_clean_cases():
    clean = spec(clean=True)
    rows = [
        result("a", judges=judge(clean, view(), None)),
        result("b", status="fail", judges=judge(clean, view(finding()), None), blocking=1),
        result("c", status="unverifiable", judges=judge(clean, None, "exit 4")),
        result("d", judges=judge(spec(), view(), None)),
    ]
    (total,) = totals(rows, ["execution"])
    assert (total.false_blocked, total.false_blocking_cases) == (2, 3)
    assert total.unverifiable == 1


# Malformed ground truth --------------------------------------------------------------------


def write_case(tmp_path: Path, body: str, name: str = "c1") -> Path:
    case = tmp_path / name
    (case / "repo").mkdir(parents=True)
    (case / "case.toml").write_text('repository = "repo"\nbase = "a"\nchange = "b"\n' + body)
    return case


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("required_findings = {}\n", "c1: required_findings: Input should be a valid list"),
        ('forbidden_findings = ""\n', "c1: forbidden_findings: Input should be a valid list"),
        ("regressions = 0\n", "c1: regressions: Input should be a valid list"),
        (
            '[[required_findings]]\nclaim = "x"\nat_least = "question"\n',
            "c1: required_findings.0.path: Field required",
        ),
        (
            '[[required_findings]]\npath = "a.py"\nclaim = "x"\nat_least = "high"\n',
            "c1: required_findings.0.at_least: Input should be 'blocking', 'reproduced', "
            "'question' or 'reported'",
        ),
        (
            '[[forbidden_findings]]\npath = "a.py"\nclaim = "x"\nfloor = "critical"\n',
            "c1: forbidden_findings.0.floor: Input should be",
        ),
        (
            '[[required_findings]]\npath = "a.py"\nclaims = "x"\nat_least = "question"\n',
            "c1: unknown key 'required_findings.0.claims'",
        ),
        (
            '[[forbidden_findings]]\npath = "../a.py"\nclaim = ""\n',
            "c1: forbidden_findings.0.path: path '../a.py' leaves the repository",
        ),
        (
            '[[required_findings]]\npath = "a.py"\nclaim = "x"\nat_least = "question"\n'
            "lines = [5, 2]\n",
            "c1: required_findings.0.lines: must be [first, last]",
        ),
        ("clean = 1\n", "c1: clean: Input should be a valid boolean"),
        ("forbiden_findings = []\n", "c1: unknown key 'forbiden_findings'"),
        ('regressions = [""]\n', "c1: regressions: holds an empty test id"),
        (
            'patch = "repo"\n',
            "c1: change, patch: give `change` (a commit) or `patch` (a file), not both",
        ),
        ("[eyeful]\ncommand = {}\n", "c1: eyeful: unknown key 'command'"),
        ('[eyeful.commands]\ntest_one = "pytest"\n', "c1: eyeful: commands.test_one: must contain"),
    ],
)
def test_malformed_ground_truth_fails_the_case_in_one_line(tmp_path, body, message):
    with pytest.raises(EyefulError) as err:
        load_case(write_case(tmp_path, body))
    text = str(err.value)
    assert message in text, text
    assert "\n" not in text


def test_a_missing_repository_or_findings_file_is_named(tmp_path):
    case = write_case(tmp_path, 'findings = ["nope.json"]\n')
    with pytest.raises(EyefulError, match=r"c1: findings.0: 'nope.json' does not exist"):
        load_case(case)
    (case / "case.toml").write_text('base = "a"\nchange = "b"\n')
    with pytest.raises(EyefulError, match=r"c1: repository: 'repo.bundle' does not exist"):
        load_case(case)
