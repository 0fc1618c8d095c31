"""SARIF output: every document validates against the official 2.1.0 schema, and says what the
seed's table says (kind/level, baselineState, taxa, fixes, properties)."""

from __future__ import annotations

import copy
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from jsonschema.validators import validator_for

import eyeful.sarif as sarif_module
from eyeful.errors import EyefulError
from eyeful.findings import Fix, Repro
from eyeful.gates import GATE_NAMES, Gate
from eyeful.grading import GradedOracle, ReportedFinding
from eyeful.regressions import SUITE
from eyeful.regressions import TestFailure as Failure
from eyeful.report import Report, SideInfo
from eyeful.sarif import fix_changes, to_sarif, write_sarif
from tests.core import review
from tests.gitrepo import confirm, git, make_repo, python_project, write

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]

SCHEMA_PATH = Path(sarif_module.__file__).parent / "data" / "sarif-schema-2.1.0.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
SHARED_SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "data" / "sarif-schema-2.1.0.json"

ODD_PATH = "src/my dir/café módulo.py"
ODD_URI = "src/my%20dir/caf%C3%A9%20m%C3%B3dulo.py"


def validate(document: dict[str, Any]) -> None:
    cls = validator_for(SCHEMA)
    cls.check_schema(SCHEMA)
    cls(SCHEMA, format_checker=cls.FORMAT_CHECKER).validate(document)


# -- building reports from real model objects --------------------------------------------------


def _side(label: str, sha: str) -> SideInfo:
    return SideInfo(tree=sha * 40, commit=sha * 40, label=label, short=(sha * 7)[:7])


def _gates(*statuses: str) -> list[Gate]:
    padded = [*statuses, *["not_reached"] * (len(GATE_NAMES) - len(statuses))]
    return [
        Gate(name=name, status=status, detail=f"{name} {status}")  # type: ignore[arg-type]
        for name, status in zip(GATE_NAMES, padded, strict=True)
    ]


def _finding(**kw: Any) -> ReportedFinding:
    base: dict[str, Any] = {
        "id": "f",
        "expert": "correctness",
        "severity": "warning",
        "evidence": "test",
        "path": "calc.py",
        "line": 2,
        "title": "A problem",
        "body": "Why it is one.",
        "kind": "review",
        "label": "question",
        "oracle": GradedOracle(declared="human", graded="human", note="the expert's reading"),
    }
    base.update(kw)
    return ReportedFinding(**base)


# A 40-line file and a fix touching it in four hunks: a deletion, a replacement, an insertion
# in the middle and one at the end of the file; and a second, new file.
ORIGINAL = "".join(f"line{n:02}\n" for n in range(1, 41))


def _fixed(original: str) -> str:
    lines = original.splitlines(keepends=True)
    del lines[2:4]  # lines 3-4
    lines[12:13] = ["new15a\n", "new15b\n"]  # line 15 (index 12 after the deletion)
    at = lines.index("line26\n") + 1
    lines[at:at] = ["after26a\n", "after26b\n"]
    lines.append("appended\n")
    return "".join(lines)


FIXED = _fixed(ORIGINAL)
HELPER = "def helper():\n    return 1\n"


@pytest.fixture(scope="module")
def fix_diffs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The fix as real `git diff` prints it (quoted non-ASCII name, tab after a spaced name)."""
    repo = make_repo(tmp_path_factory.mktemp("fix") / "repo", {ODD_PATH: ORIGINAL})
    write(repo, {ODD_PATH: FIXED, "tests/helper.py": HELPER})
    git(repo, "add", "-A")
    return {
        "U3": git(repo, "diff", "--cached", "--no-color"),
        "U0": git(repo, "diff", "--cached", "--no-color", "-U0"),
    }


def _offset(text: str, line: int, column: int) -> int:
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    assert 1 <= line <= len(starts), (line, len(starts))
    line_end = starts[line] if line < len(starts) else len(text)
    assert 1 <= column <= line_end - starts[line - 1] + 1, (line, column)
    return starts[line - 1] + column - 1


def apply_replacements(text: str, replacements: list[dict[str, Any]]) -> str:
    """Apply SARIF replacements as §3.57 says: regions in the unmodified text, in order."""
    spans = []
    for replacement in replacements:
        region = replacement["deletedRegion"]
        start = _offset(text, region["startLine"], region.get("startColumn", 1))
        end = _offset(text, region.get("endLine", region["startLine"]), region["endColumn"])
        assert start <= end
        spans.append((start, end, replacement.get("insertedContent", {}).get("text", "")))
    for (_, end, _), (start, _, _) in itertools.pairwise(spans):
        assert end <= start, "replacements overlap or are out of order"
    for start, end, inserted in reversed(spans):
        text = text[:start] + inserted + text[end:]
    return text


def _report(findings: list[ReportedFinding], regressions: list[Failure] = ()) -> Report:
    report = Report(base=_side("HEAD", "a"), head=_side("the staged change", "b"))
    report.findings = list(findings)
    report.regressions = list(regressions)
    return report.finish()


def _full_report(diff: str) -> Report:
    blocking = _finding(
        id="xss",
        expert="security",
        severity="error",
        path=ODD_PATH,
        line=15,
        end_line=16,
        title="User input reaches the page unescaped",
        body="`render` puts `name` into HTML as it is.",
        cwe="CWE-79",
        kind="fail",
        label="issue (blocking)",
        oracle=GradedOracle(
            declared="specified",
            graded="specified",
            quote="names are shown escaped",
            source="README.md",
            note="quoted from README.md",
        ),
        gates=_gates("pass", "pass", "pass", "pass", "pass", "pass"),
        repro=Repro(path="tests/test_eyeful_xss.py", code="def test_x(): ...\n", fails="<b>"),
        fix=Fix(diff=diff),
        fix_verified=True,
        baseline_state="new",
        corroborated_by=["correctness"],
    )
    question = _finding(
        id="q",
        severity="warning",
        title="mul may overflow",
        cwe="89",
        repro=Repro(path="tests/test_calc.py", test="tests/test_calc.py::test_mul", fails="boom"),
        gates=_gates("pass", "pass", "fail"),
        unverified="fails_as_claimed: the test passes on the change",
        fix=Fix(diff="not a diff at all"),
        fix_note="no fix was run",
    )
    pre_existing = _finding(
        id="old",
        expert="style",
        title="Already broken on the base",
        body="",
        label="note (pre-existing)",
        baseline_state="unchanged",
        cwe="not-a-cwe",
    )
    disputed = _finding(
        id="d",
        severity="error",
        kind="open",
        label="question",
        title="Division by zero",
        objection="The caller checks for zero first (calc.py:1).",
    )
    regressions = [
        Failure(
            test="tests/test_calc.py::test_add",
            kind="regression",
            blocking=True,
            on_change="failed",
            on_base="passed",
            excerpt="FAILED tests/test_calc.py::test_add - assert -1 == 5",
        ),
        Failure(
            test=SUITE,
            kind="regression",
            blocking=True,
            on_change="failed",
            on_base="passed",
            excerpt="",
        ),
    ]
    return _report([blocking, question, pre_existing, disputed], regressions)


def _results(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for result in document["runs"][0]["results"]:
        key = result["properties"].get("id") or result["properties"]["test"]
        out[key] = result
    return out


# -- the document ------------------------------------------------------------------------------


def test_vendored_schema_is_the_shared_copy_and_a_draft_04_schema():
    if SHARED_SCHEMA.is_file():
        assert SCHEMA_PATH.read_bytes() == SHARED_SCHEMA.read_bytes()
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert validator_for(SCHEMA) is jsonschema.Draft4Validator


def test_full_report_validates_and_maps_kind_and_level(fix_diffs, tmp_path):
    document = to_sarif(_full_report(fix_diffs["U3"]), root=tmp_path)
    validate(document)
    assert document["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert document["version"] == "2.1.0"
    results = _results(document)
    expected = {
        "xss": ("fail", "error"),
        "q": ("review", "none"),
        "old": ("review", "none"),
        "d": ("open", "none"),
        "tests/test_calc.py::test_add": ("fail", "error"),
        SUITE: ("fail", "error"),
    }
    assert {k: (r["kind"], r["level"]) for k, r in results.items()} == expected
    assert results["xss"]["baselineState"] == "new"
    assert results["old"]["baselineState"] == "unchanged"
    assert "baselineState" not in results["q"]
    assert "baselineState" not in results["d"]


def test_run_tool_rules_invocation_and_srcroot(fix_diffs, tmp_path):
    report = _full_report(fix_diffs["U3"])
    run = to_sarif(report, root=tmp_path)["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "eyeful"
    assert driver["version"] == report.eyeful
    # Issue 22, point 5: a page that exists or none. pyproject's [project.urls] (installed as
    # Project-URL) names eyeful's home; with none there, the optional property is left out.
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("urls", {})
    home = next((u for k, u in urls.items() if k.casefold() in ("repository", "source",
                 "homepage", "documentation")), None)  # fmt: skip
    assert driver.get("informationUri") == home
    assert "pypi.org" not in json.dumps(to_sarif(report, root=tmp_path))
    ids = [rule["id"] for rule in driver["rules"]]
    assert ids == [
        "eyeful/regression",
        "eyeful/finding/security",
        "eyeful/finding/correctness",
        "eyeful/finding/style",
    ]
    for rule in driver["rules"]:  # GitHub rejects empty strings
        for key in ("shortDescription", "fullDescription", "help"):
            assert rule[key]["text"].strip()
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    assert run["automationDetails"]["id"] == f"eyeful/{report.head.short}"
    assert run["invocations"] == [
        {"executionSuccessful": True, "exitCode": 1, "exitCodeDescription": "blocking"}
    ]
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == tmp_path.as_uri() + "/"
    assert "uri" not in to_sarif(report)["runs"][0]["originalUriBaseIds"]["SRCROOT"]


def test_locations_are_escaped_repository_relative_uris(fix_diffs):
    results = _results(to_sarif(_full_report(fix_diffs["U3"])))
    location = results["xss"]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": ODD_URI, "uriBaseId": "SRCROOT"}
    assert location["region"] == {"startLine": 15, "endLine": 16}
    assert results["q"]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2,
        "endLine": 2,
    }


def test_message_is_title_and_body():
    results = _results(to_sarif(_full_report("x")))
    assert results["xss"]["message"]["text"] == (
        "User input reaches the page unescaped\n\n`render` puts `name` into HTML as it is."
    )
    assert results["old"]["message"]["text"] == "Already broken on the base"


def test_cwe_is_a_taxon_of_a_cwe_taxonomy(fix_diffs):
    document = to_sarif(_full_report(fix_diffs["U3"]))
    run = document["runs"][0]
    results = _results(document)
    assert results["xss"]["taxa"] == [
        {"id": "79", "index": 0, "toolComponent": {"name": "CWE", "index": 0}}
    ]
    assert results["q"]["taxa"][0]["id"] == "89"
    assert "taxa" not in results["old"]  # "not-a-cwe" names no CWE
    assert results["old"]["properties"]["cwe"] == "not-a-cwe"
    assert "taxa" not in results["d"]
    (taxonomy,) = run["taxonomies"]
    assert taxonomy["name"] == "CWE"
    assert [t["id"] for t in taxonomy["taxa"]] == ["79", "89"]
    assert run["tool"]["driver"]["supportedTaxonomies"] == [{"name": "CWE", "index": 0}]
    no_cwe = to_sarif(_report([_finding()]))["runs"][0]
    assert "taxonomies" not in no_cwe


def test_properties_carry_the_evidence(fix_diffs):
    results = _results(to_sarif(_full_report(fix_diffs["U3"])))
    props = results["xss"]["properties"]
    assert props["expert"] == "security"
    assert props["severity"] == "error"
    assert props["evidence"] == "test"
    assert props["label"] == "issue (blocking)"
    assert props["decorations"] == ["blocking"]
    assert props["corroboratedBy"] == ["correctness"]
    assert props["oracle"] == {
        "declared": "specified",
        "graded": "specified",
        "quote": "names are shown escaped",
        "source": "README.md",
        "existing_test": False,
        "note": "quoted from README.md",
    }
    assert props["repro"] == {
        "path": "tests/test_eyeful_xss.py",
        "code": "def test_x(): ...\n",
        "fails": "<b>",
        "test": None,
    }
    assert props["objection"] is None
    assert props["unverified"] is None
    assert [g["status"] for g in props["gates"]] == ["pass"] * 6
    assert set(props["gates"][0]) == {"name", "status", "detail"}
    assert props["fix"]["verified"] is True

    q = results["q"]["properties"]
    assert q["label"] == "question"
    assert q["decorations"] == []
    assert q["unverified"] == "fails_as_claimed: the test passes on the change"
    assert q["repro"]["test"] == "tests/test_calc.py::test_mul"
    assert [g["status"] for g in q["gates"]][:4] == ["pass", "pass", "fail", "not_reached"]

    assert results["old"]["properties"]["decorations"] == ["pre-existing"]
    assert results["old"]["properties"]["repro"] is None
    assert (
        results["d"]["properties"]["objection"] == "The caller checks for zero first (calc.py:1)."
    )


def test_reproduction_is_a_related_location(fix_diffs):
    results = _results(to_sarif(_full_report(fix_diffs["U3"])))
    (related,) = results["xss"]["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "tests/test_eyeful_xss.py"
    assert related["message"]["text"].startswith("reproduction")
    (existing,) = results["q"]["relatedLocations"]
    assert existing["physicalLocation"]["artifactLocation"]["uri"] == "tests/test_calc.py"
    assert "tests/test_calc.py::test_mul" in existing["message"]["text"]
    assert "relatedLocations" not in results["old"]


def test_regressions_are_blocking_results_located_at_their_test_file(fix_diffs):
    results = _results(to_sarif(_full_report(fix_diffs["U3"])))
    add = results["tests/test_calc.py::test_add"]
    assert add["ruleId"] == "eyeful/regression"
    assert add["locations"] == [
        {
            "physicalLocation": {
                "artifactLocation": {"uri": "tests/test_calc.py", "uriBaseId": "SRCROOT"}
            }
        }
    ]
    assert "test_add" in add["message"]["text"]
    assert "assert -1 == 5" in add["message"]["text"]
    assert add["properties"]["decorations"] == ["blocking"]
    assert add["properties"]["onBase"] == "passed"
    suite = results[SUITE]
    assert "locations" not in suite
    assert suite["message"]["text"] == "The test suite fails on the change and passes on the base"


def test_only_blocking_regressions_become_results():
    other = Failure(
        test="tests/test_x.py::test_y",
        kind="pre_existing",
        blocking=False,
        on_change="failed",
        on_base="failed",
        excerpt="x",
    )
    report = _report([])
    report.regressions = [other]
    report.other_failures = [other]
    document = to_sarif(report)
    validate(document)
    assert document["runs"][0]["results"] == []
    assert document["runs"][0]["tool"]["driver"]["rules"] == []


# -- fixes -------------------------------------------------------------------------------------


def test_fix_has_one_replacement_per_hunk_matching_the_diff(fix_diffs):
    result = _results(to_sarif(_full_report(fix_diffs["U3"])))["xss"]
    (fix,) = result["fixes"]
    assert fix["description"]["text"].startswith("Suggested fix (verified")
    odd, helper = fix["artifactChanges"]
    assert odd["artifactLocation"] == {"uri": ODD_URI, "uriBaseId": "SRCROOT"}
    deletion, replacement, insertion, at_end = odd["replacements"]
    # Hunk 1 deletes lines 3-4 with their newlines: up to column 1 of line 5; nothing inserted.
    assert deletion == {
        "deletedRegion": {"startLine": 3, "startColumn": 1, "endLine": 5, "endColumn": 1}
    }
    # Hunk 2 replaces line 15.
    assert replacement == {
        "deletedRegion": {"startLine": 15, "startColumn": 1, "endLine": 16, "endColumn": 1},
        "insertedContent": {"text": "new15a\nnew15b\n"},
    }
    # Hunk 3 only adds: an empty region (an insertion point) before line 27.
    assert insertion == {
        "deletedRegion": {"startLine": 27, "startColumn": 1, "endLine": 27, "endColumn": 1},
        "insertedContent": {"text": "after26a\nafter26b\n"},
    }
    # Hunk 4 adds after the last line: the insertion point after line 40's newline.
    end = len("line40\n") + 1
    assert at_end == {
        "deletedRegion": {"startLine": 40, "startColumn": end, "endLine": 40, "endColumn": end},
        "insertedContent": {"text": "appended\n"},
    }
    assert helper["artifactLocation"]["uri"] == "tests/helper.py"
    assert helper["replacements"] == [
        {
            "deletedRegion": {"startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 1},
            "insertedContent": {"text": HELPER},
        }
    ]
    assert apply_replacements(ORIGINAL, odd["replacements"]) == FIXED
    assert apply_replacements("", helper["replacements"]) == HELPER


def test_fix_from_a_diff_without_context_applies_the_same(fix_diffs):
    changes = fix_changes(fix_diffs["U0"])
    assert len(changes[0]["replacements"]) == 4
    assert apply_replacements(ORIGINAL, changes[0]["replacements"]) == FIXED


def test_fix_keeps_a_missing_final_newline_and_deleting_the_last_line():
    original = "a\nb\nc"
    diff = (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,2 @@\n a\n-b\n-c\n\\ No newline at end of file\n+B"
        "\n\\ No newline at end of file\n"
    )
    (change,) = fix_changes(diff)
    (replacement,) = change["replacements"]
    assert replacement == {
        "deletedRegion": {"startLine": 2, "startColumn": 1, "endLine": 3, "endColumn": 2},
        "insertedContent": {"text": "B"},
    }
    assert apply_replacements(original, change["replacements"]) == "a\nB"
    crlf = fix_changes("--- a/w.txt\n+++ b/w.txt\n@@ -1 +1 @@\n-x\r\n+y\r\n")
    assert crlf[0]["replacements"][0]["insertedContent"]["text"] == "y\r\n"
    assert apply_replacements("x\r\n", crlf[0]["replacements"]) == "y\r\n"


def test_unreadable_or_unverified_fix():
    results = _results(to_sarif(_full_report("x")))
    assert "fixes" not in results["q"]  # "not a diff at all": nothing to convert
    assert results["q"]["properties"]["fix"] == {
        "verified": False,
        "note": "no fix was run",
        "diff": "not a diff at all",
    }
    assert "fixes" not in results["xss"]
    assert results["old"]["properties"]["fix"] is None
    unverified = _finding(fix=Fix(diff="--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"), fix_note="no")
    (fix,) = _results(to_sarif(_report([unverified])))["f"]["fixes"]
    assert fix["description"]["text"] == "Suggested fix (not verified: no)"


# -- fingerprints ------------------------------------------------------------------------------


def test_fingerprints_are_stable_unique_and_ignore_line_moves(fix_diffs):
    report = _full_report(fix_diffs["U3"])
    first = [r["partialFingerprints"] for r in to_sarif(report)["runs"][0]["results"]]
    again = [r["partialFingerprints"] for r in to_sarif(report)["runs"][0]["results"]]
    assert first == again
    hashes = [p["primaryLocationLineHash"] for p in first]
    assert len(set(hashes)) == len(hashes)
    assert all(h.endswith(":1") and len(h.split(":")[0]) == 16 for h in hashes)
    moved = _report([_finding(line=40)])
    still = _report([_finding(line=2)])
    assert (
        to_sarif(moved)["runs"][0]["results"][0]["partialFingerprints"]
        == to_sarif(still)["runs"][0]["results"][0]["partialFingerprints"]
    )
    twice = to_sarif(_report([_finding(id="a", line=1), _finding(id="b", line=9)]))
    a, b = (
        r["partialFingerprints"]["primaryLocationLineHash"] for r in twice["runs"][0]["results"]
    )
    assert a.split(":")[0] == b.split(":")[0]
    assert (a[-2:], b[-2:]) == (":1", ":2")


# -- validation really runs --------------------------------------------------------------------


@pytest.mark.parametrize(
    "breakage",
    [
        lambda d: d["runs"][0]["results"][0].__setitem__("level", "fatal"),
        lambda d: d["runs"][0]["results"][0].__setitem__("kind", "blocking"),
        lambda d: d["runs"][0]["results"][0].pop("message"),
        lambda d: d["runs"][0]["results"][0]["fixes"][0]["artifactChanges"][0].__setitem__(
            "replacements", []
        ),
        lambda d: d.__setitem__("version", "2.0.0"),
    ],
    ids=["level-fatal", "kind-blocking", "no-message", "no-replacements", "version"],
)
def test_a_broken_document_fails_validation(fix_diffs, breakage):
    document = to_sarif(_full_report(fix_diffs["U3"]))
    document["runs"][0]["results"].sort(key=lambda r: "fixes" not in r)
    validate(document)
    broken = copy.deepcopy(document)
    breakage(broken)
    with pytest.raises(jsonschema.ValidationError):
        validate(broken)


def test_each_kind_of_report_validates_on_its_own(fix_diffs):
    full = _full_report(fix_diffs["U3"])
    for findings in ([], *([f] for f in full.findings)):
        validate(to_sarif(_report(findings)))
    validate(to_sarif(_report([], full.regressions)))


# -- writing -----------------------------------------------------------------------------------


def test_write_sarif_is_atomic_utf8_and_indented(fix_diffs, tmp_path):
    report = _full_report(fix_diffs["U3"])
    out = tmp_path / "out.sarif"
    out.write_text("old", encoding="utf-8")
    write_sarif(report, out, root=tmp_path)
    text = out.read_text(encoding="utf-8")
    assert json.loads(text) == to_sarif(report, root=tmp_path)
    assert text.startswith('{\n  "$schema"')
    assert "“<b>”" in text  # UTF-8, not \\u escapes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.sarif"]
    with pytest.raises(EyefulError, match="cannot write SARIF"):
        write_sarif(report, tmp_path / "missing" / "out.sarif")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.sarif"]


# -- end to end --------------------------------------------------------------------------------

BROKEN_ADD = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def test_cli_writes_a_valid_sarif_file(tmp_path):
    repo = python_project(tmp_path / "repo")
    confirm(repo)
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    finding = {
        "id": "sub",
        "expert": "correctness",
        "severity": "warning",
        "evidence": "analysis",
        "path": "calc.py",
        "line": 2,
        "title": "add subtracts",
        "body": "`add` returns `a - b`.",
        "cwe": "CWE-682",
        "oracle": {"kind": "human"},
    }
    findings = tmp_path / "f.json"
    findings.write_text(json.dumps([finding]), encoding="utf-8")
    proc = review(repo, findings=findings, sarif=Path("out.sarif"))
    assert proc.exit_code == 1, proc.stderr  # the suite's test_add regressed
    document = json.loads((repo / "out.sarif").read_text(encoding="utf-8"))
    validate(document)
    run = document["runs"][0]
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == repo.resolve().as_uri() + "/"
    invocation = run["invocations"][0]
    assert (invocation["executionSuccessful"], invocation["exitCode"]) == (True, 1)
    by_rule = {r["ruleId"]: r for r in run["results"]}
    regression = by_rule["eyeful/regression"]
    assert regression["properties"]["test"] == "tests/test_calc.py::test_add"
    assert regression["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "tests/test_calc.py"
    )
    result = by_rule["eyeful/finding/correctness"]
    assert (result["kind"], result["level"]) == ("review", "none")
    assert result["properties"]["evidence"] == "analysis"
    assert result["properties"]["unverified"].startswith("evidence is analysis")
    assert result["taxa"][0]["id"] == "682"
    assert not list(repo.glob(".out.sarif.*"))
