"""Who writes the proof, whose words a merged finding carries, and how the judge's verdicts are
matched (issue 7 points 9 and 12). One real repository, one review with a scripted agent (a real
executable) and a findings file."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from tests.conftest import seal
from tests.core import review
from tests.gitrepo import PYTEST, confirm, eyeful_config, git, make_repo, write

AGENT = Path(__file__).with_name("scripted_agent.py")
README = "# calc\n\nadd returns the sum of its arguments.\n"
BASE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
CHANGE = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
SPEC = {"kind": "specified", "quote": "add returns the sum of its arguments",
        "source": "README.md"}  # fmt: skip

CLAIMANT = "add subtracts (the expert's own proof)"
# The claimant's test proves nothing: it fails whatever the code does.
CLAIMANT_TEST = "def test_always():\n    assert False, 'add does not add'\n"
ECHOED_ID = "the judge answers under an id of its own"
OMITTED = "the judge leaves this one out"
JUDGED = "mul is slow"
LEAD = "add misbehaves (lead, its test does not hold)"
HOLDER = "add returns a - b (its test holds)"


def _file_finding(fid: str, title: str, severity: str, line: int, code: str, fails: str) -> dict:
    return {
        "id": fid, "expert": "reviewer", "severity": severity, "evidence": "test",
        "path": "calc.py", "line": line, "title": title, "body": f"{title}.", "oracle": SPEC,
        "repro": {"path": f"tests/test_{fid}.py", "code": code, "fails": fails},
    }  # fmt: skip


def _expert(title: str, line: int, **extra: object) -> dict:
    return {"severity": "warning", "evidence": "analysis", "path": "calc.py", "line": line,
            "title": title, "body": f"{title}.", "oracle": {"kind": "human"}, **extra}  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        return _review(tmp_path_factory.mktemp("claims"))


def _review(root: Path) -> dict:
    log = root / "agent-state" / "agent.log"  # where the sandboxed agent may write
    log.parent.mkdir()
    script = {
        "log": str(log),
        "expert": {
            "correctness": [
                _expert(
                    CLAIMANT,
                    2,
                    evidence="test",
                    oracle=SPEC,
                    severity="error",
                    repro={
                        "path": "tests/test_claimant.py",
                        "code": CLAIMANT_TEST,
                        "fails": "add does not add",
                    },
                ),
                _expert(ECHOED_ID, 6),
                _expert(OMITTED, 6),
                _expert(JUDGED, 5),
            ],
        },
        "repro": {CLAIMANT: "garbage"},
        "same_problem": {f"{LEAD}|{HOLDER}": 0.9},
        "judge": {
            ECHOED_ID: {"id": "correctness-2", "valid": False, "reason": "made-up id"},
            OMITTED: "omit",
            JUDGED: [True, "mul is quadratic here"],
        },
    }
    script_path = root / "script.json"
    script_path.write_text(json.dumps(script), encoding="utf-8")
    command = (
        f"{shlex.quote(sys.executable)} {shlex.quote(str(AGENT))} {shlex.quote(str(script_path))}"
    )
    agent = f'[tool.eyeful.agent]\nprovider = "command"\ncommand = {json.dumps(command)}\n'
    agent += 'experts = ["correctness"]\n'
    agent += f"writable = [{json.dumps(str(log.parent))}]\n"
    repo = make_repo(
        root / "repo",
        {
            "pyproject.toml": eyeful_config(test_one=f"{PYTEST} {{test}}") + agent,
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "README.md": README,
            "calc.py": BASE,
            "tests/test_mul.py": "from calc import mul\n\n\ndef test_mul():\n"
            "    assert mul(2, 3) == 6\n",
        },
    )
    confirm(repo)
    write(repo, {"calc.py": CHANGE})
    git(repo, "add", "-A")
    findings = [
        # Most severe, so the merged group's lead; its test passes on the change.
        _file_finding("lead", LEAD, "error", 1, "from calc import add\n\n\ndef test_lead():\n"
                      "    assert add(0, 0) == 0, 'add of zeros is off'\n", "add of zeros is off"),
        _file_finding("holder", HOLDER, "warning", 2, "from calc import add\n\n\n"
                      "def test_holder():\n    assert add(2, 3) == 5, 'add does not return "
                      "the sum'\n", "add does not return the sum"),
    ]  # fmt: skip
    path = root / "findings.json"
    path.write_text(json.dumps(findings), encoding="utf-8")
    proc = review(repo, findings=path, format="json")
    assert proc.exit_code in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    tasks = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return {
        "report": report,
        "tasks": tasks,
        "by_title": {f["title"]: f for f in report["findings"]},
    }


def test_the_claimant_does_not_write_the_proof(run):
    found = run["by_title"][CLAIMANT]
    assert found["kind"] != "fail", found  # its always-failing test would have blocked
    assert found["unverified"] == "the reproduction agent gave no usable test"
    assert not any(r.get("side") == "change" for r in found["runs"])
    repro_tasks = [t["task"] for t in run["tasks"] if t["role"] == "repro"]
    assert repro_tasks, "the reproduction agent was asked"
    assert repro_tasks[0]["expert_attempt"]["code"] == CLAIMANT_TEST  # it may see the attempt


def test_findings_files_keep_their_reproductions(run):
    found = run["by_title"][HOLDER]
    assert found["repro"]["path"] == "tests/test_holder.py"
    assert not any(t["task"].get("finding", {}).get("title") in (LEAD, HOLDER)
                   for t in run["tasks"] if t["role"] == "repro")  # fmt: skip


def test_merged_finding_takes_the_words_of_the_one_whose_test_held(run):
    titles = set(run["by_title"])
    assert LEAD not in titles  # folded in
    found = run["by_title"][HOLDER]
    assert (found["id"], found["line"], found["severity"]) == ("holder", 2, "warning")
    assert found["merged"] == ["lead"]
    assert (found["kind"], found["label"]) == ("fail", "issue (blocking)")


def test_judge_verdicts_are_matched_by_our_own_ids(run):
    by_title = run["by_title"]
    judged = by_title[JUDGED]
    assert judged["judge"] == "mul is quadratic here"
    # The judge saw numbers, not eyeful's ids.
    judge_tasks = [t["task"] for t in run["tasks"] if t["role"] == "judge"]
    ids = [f["id"] for task in judge_tasks for f in task["findings"]]
    assert sorted(ids) == [str(n) for n in range(1, len(ids) + 1)]
    # An id the judge made up (even one that is some finding's own id) counts for nothing.
    for title in (ECHOED_ID, OMITTED):
        item = by_title[title]
        assert item["kind"] != "open" and item["judge"] is None and item["objection"] is None
    notes = " ".join(u["text"] for u in run["report"]["uncertainty"])
    for title in (ECHOED_ID, OMITTED):
        fid = by_title[title]["id"]
        assert f"finding `{fid}` ({title}) was not judged" in notes
    assert f"({JUDGED}) was not judged" not in notes
