"""Agents end to end: a scripted agent plays every role, through the command provider (a real
subprocess) and the openai provider (a real local HTTP server); faults only ever lower trust."""

from __future__ import annotations

import hashlib
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from eyeful.cli.demo import make_demo_repo
from tests.core import review
from tests.gitrepo import confirm, git, user_state
from tests.scripted_agent import serve_openai

AGENT = Path(__file__).with_name("scripted_agent.py")

BOUNDARY = "A session is still valid at its expiry second"
BOUNDARY_AGAIN = "The expiry boundary moved by one second"
NEGATIVE = "remaining returns negative numbers"
NAIVE = "is_expired compares naive timestamps"
OVERFLOW = "extend can overflow the expiry"

BOUNDARY_TEST = """from sessions import Session, is_expired


def test_expired_at_exact_boundary():
    session = Session("ada", expires_at=100)
    assert is_expired(session, now=100), "session still valid at its expiry second"
"""
NEGATIVE_TEST = """from sessions import Session, remaining


def test_remaining_is_not_negative():
    left = remaining(Session("ada", expires_at=100), now=130)
    assert left >= 0, f"negative seconds left: {left}"
"""
# The first attempt fails, but not for the claimed reason: the agent is asked to correct it.
NEGATIVE_FIRST_TRY = NEGATIVE_TEST.replace(
    "    assert left >= 0", "    assert left == 0\n    assert left >= 0"
)
BOUNDARY_FIX = """--- a/sessions.py
+++ b/sessions.py
@@ -13,7 +13,7 @@ class Session:
 
 def is_expired(session: Session, now: int) -> bool:
     \"\"\"A session expires at `expires_at` (see README.md).\"\"\"
-    return now > session.expires_at
+    return now >= session.expires_at
 
 
 def remaining(session: Session, now: int) -> int:
"""
NEGATIVE_FIX = """--- a/sessions.py
+++ b/sessions.py
@@ -18,7 +18,7 @@ def is_expired(session: Session, now: int) -> bool:
 
 def remaining(session: Session, now: int) -> int:
     \"\"\"Seconds left.\"\"\"
-    return session.expires_at - now
+    return max(0, session.expires_at - now)
 
 
 def extend(session: Session, seconds: int, now: int) -> Session:
"""


def _finding(
    title: str,
    line: int,
    severity: str = "warning",
    evidence: str = "test",
    oracle: dict | None = None,
) -> dict:
    return {
        "severity": severity,
        "evidence": evidence,
        "path": "sessions.py",
        "line": line,
        "title": title,
        "body": f"{title}.",
        "oracle": oracle or {"kind": "human"},
    }


def full_script(log: Path) -> dict:
    """Every outcome at once: blocking with a verified fix, a merged pair, a question, a
    finding degraded by a fault, a disputed finding, a regression already known."""
    return {
        "log": str(log),
        "expert": {
            "correctness": [
                _finding(
                    BOUNDARY,
                    16,
                    "error",
                    oracle={
                        "kind": "specified",
                        "quote": "from that second on",
                        "source": "README.md",
                    },
                ),
                _finding(OVERFLOW, 28, evidence="analysis"),
            ],
            "skeptic": [_finding(BOUNDARY_AGAIN, 16), _finding(NEGATIVE, 21)],
            "security": [
                _finding(NAIVE, 14),
                {**_finding("Not in the change", 1), "path": "README.md"},
                _finding("Past the end of the file", 999),
            ],
        },
        "same_problem": {f"{BOUNDARY}|{BOUNDARY_AGAIN}": 0.9},
        "repro": {
            BOUNDARY: {
                "path": "tests/test_boundary.py",
                "code": BOUNDARY_TEST,
                "fails": "session still valid at its expiry second",
                "oracle": {
                    "kind": "specified",
                    "quote": "from that second on, `is_expired` is true",
                    "source": "README.md",
                },
            },
            NEGATIVE: {
                "path": "tests/test_negative.py",
                "code": NEGATIVE_FIRST_TRY,
                "fails": "negative seconds left",
                "oracle": {"kind": "human"},
                "corrected": {
                    "path": "tests/test_negative.py",
                    "code": NEGATIVE_TEST,
                    "fails": "negative seconds left",
                    "oracle": {"kind": "human"},
                },
            },
            NAIVE: "garbage",
        },
        "fix": {BOUNDARY: {"diff": BOUNDARY_FIX}, NEGATIVE: {"diff": NEGATIVE_FIX}},
        "judge": {
            OVERFLOW: [False, "Python integers do not overflow"],
            NAIVE: [True, "the comparison mixes clocks"],
        },
    }


def _configure(repo: Path, agent: str) -> None:
    pyproject = repo / "pyproject.toml"
    text = pyproject.read_text()
    # One live run per side confirms the demo's regression and two reproduce a finding:
    # confirmation and the gates' run counts are not what these tests are about
    # (tests/gitrepo.py's eyeful_config does the same; the demo's own defaults, 3 and 5, are
    # exercised by test_verify and `eyeful demo`).
    section = "[tool.eyeful]\ntimeout = 120\n"
    assert section in text
    text = text.replace(section, section + "reruns = 1\nrepro_runs = 2\n")
    pyproject.write_text(text + "\n[tool.eyeful.agent]\n" + agent)
    confirm(repo)


def _state(tmp_path: Path) -> Path:
    """Where the scripted agent keeps its log: the one directory outside its export it may
    write in its sandbox (`agent.writable`, eyeful/agents/jail.py)."""
    state = tmp_path / "agent-state"
    state.mkdir(exist_ok=True)
    return state


def _command_agent(script: dict, tmp_path: Path, timeout: float = 60) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(AGENT))} {shlex.quote(str(path))}"
    writable = json.dumps([str(_state(tmp_path))])
    return (
        f'provider = "command"\ncommand = {json.dumps(command)}\ntimeout = {timeout}\n'
        f"writable = {writable}\n"
    )


def _report(repo: Path, **options: object) -> dict:
    result = review(repo, format="json", **options)
    assert result.exit_code in (0, 1, 3), result.stderr
    return json.loads(result.stdout)


def _by_title(report: dict) -> dict[str, dict]:
    return {f["title"]: f for f in report["findings"]}


def _check_full(report: dict) -> None:
    found = _by_title(report)
    boundary = found[BOUNDARY]
    assert (boundary["kind"], boundary["label"]) == ("fail", "issue (blocking)")
    assert boundary["fix_verified"] is True
    assert boundary["repro"]["path"] == "tests/test_boundary.py"
    assert boundary["merged"] == ["skeptic-1"]
    assert boundary["corroborated_by"] == ["skeptic"]
    assert BOUNDARY_AGAIN not in found  # one problem, one comment
    negative = found[NEGATIVE]
    assert (negative["kind"], negative["label"]) == ("review", "question")
    assert negative["oracle"]["graded"] == "human"
    assert negative["corrected"] is True
    assert negative["repro"]["code"] == NEGATIVE_TEST
    assert negative["fix_verified"] is True
    notes = [u["text"] for u in report["uncertainty"]]
    assert any(
        "dropped finding `security-2` (Not in the change): it cites README.md, which the "
        "change does not touch" in n
        for n in notes
    )
    assert any(
        "dropped finding `security-3` (Past the end of the file): it cites line 999 of "
        "sessions.py, which has 28" in n
        for n in notes
    )
    naive = found[NAIVE]
    assert naive["kind"] == "review"  # degraded by the repro fault, never more trusted
    assert naive["unverified"] == "the reproduction agent gave no usable test"
    assert naive["judge"] == "the comparison mixes clocks"
    overflow = found[OVERFLOW]
    assert (overflow["kind"], overflow["objection"]) == ("open", "Python integers do not overflow")
    assert (report["blocking"], report["questions"], report["disputed"]) == (2, 2, 1)
    assert report["experts"] == ["correctness", "skeptic", "security"]
    faults = [u["text"] for u in report["uncertainty"] if u["text"].startswith("agent fault")]
    assert faults == [
        "agent fault (repro, security-1): invalid reply twice: the reply has no JSON object"
    ]
    usage = report["agents"]
    assert usage["expert"]["calls"] == 3
    assert usage["same_problem"]["calls"] == 3  # every pair within two lines of each other
    assert usage["repro"]["calls"] == 5  # two tests, one correction, two tries for the faulty one
    assert usage["repro"]["faults"] == 1
    assert usage["fix"]["calls"] == 2
    assert usage["judge"]["calls"] == 1


def test_command_provider_plays_every_role(tmp_path):
    repo = make_demo_repo(tmp_path)
    log = _state(tmp_path) / "log.jsonl"
    _configure(repo, _command_agent(full_script(log), tmp_path))
    report = _report(repo)
    _check_full(report)
    assert report["exit_code"] == 1
    # The experts were told about the regression eyeful had already found.
    tasks = [json.loads(line) for line in log.read_text().splitlines()]
    expert_task = next(t["task"] for t in tasks if t["role"] == "expert")
    assert [r["test"] for r in expert_task["regressions"]] == [
        "tests/test_sessions.py::test_remaining_never_negative"
    ]
    assert "sessions.py" in expert_task["files"]
    assert "-    return now >= session.expires_at" in expert_task["diff"]
    # The fix agent sees the finding and the test, not the expert's reasoning.
    repro_task = next(t["task"] for t in tasks if t["role"] == "repro")
    assert repro_task["example_test"]["path"] == "tests/test_sessions.py"
    assert "sessions.py" not in repro_task["documentation_and_files"]
    fix_task = next(t["task"] for t in tasks if t["role"] == "fix")
    assert "body" not in json.dumps(fix_task)
    assert fix_task["test"]["code"] in (BOUNDARY_TEST, NEGATIVE_TEST)
    # The markdown shows the merged pair, the judge's objection folded, and the usage footer.
    md = review(repo).stdout
    assert "One problem with: `skeptic-1`." in md
    folded = md.split("<details><summary>Disputed (1)</summary>")[1].split("</details>")[0]
    assert "Objection: Python integers do not overflow" in folded
    # A rerun asks again only what did not answer: the rest is cached.
    assert "<sub>Agents: expert 0 calls, 0 tokens, 0.0s, 3 cached;" in md
    assert "repro 2 calls" in md


def test_openai_provider_against_a_local_server(tmp_path, monkeypatch):
    # Every role through HTTP. The negative-time finding and its corrected reproduction (the
    # command provider's test shows them) are left out: they add seventeen test runs and no
    # request the other findings do not make.
    repo = make_demo_repo(tmp_path)
    script = full_script(_state(tmp_path) / "log.jsonl")
    script["expert"]["skeptic"] = [_finding(BOUNDARY_AGAIN, 16)]
    script["repro"][NAIVE] = "http500"  # an HTTP 500, after the client's retries, is a fault
    server, requests = serve_openai(script)
    try:
        monkeypatch.setenv("EYEFUL_TEST_KEY", "sk-test-123")
        base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        _configure(
            repo,
            f'provider = "openai"\nbase_url = "{base_url}"\nmodel = "scripted"\n'
            'api_key_env = "EYEFUL_TEST_KEY"\n',
        )
        report = _report(repo)
    finally:
        server.shutdown()
    found = _by_title(report)
    boundary = found[BOUNDARY]
    assert (boundary["kind"], boundary["label"]) == ("fail", "issue (blocking)")
    assert boundary["fix_verified"] is True and boundary["merged"] == ["skeptic-1"]
    assert NEGATIVE not in found and BOUNDARY_AGAIN not in found
    overflow = found[OVERFLOW]
    assert (overflow["kind"], overflow["objection"]) == ("open", "Python integers do not overflow")
    naive = found[NAIVE]
    assert naive["kind"] == "review" and naive["judge"] == "the comparison mixes clocks"
    faults = [u["text"] for u in report["uncertainty"] if u["text"].startswith("agent fault")]
    assert len(faults) == 1 and faults[0].startswith("agent fault (repro, security-1): "), faults
    assert "openai: HTTP 500 from " in faults[0], faults
    usage = report["agents"]
    assert {role: usage[role]["calls"] for role in ("expert", "repro", "fix", "judge")} == {
        "expert": 3, "repro": 2, "fix": 1, "judge": 1
    }  # fmt: skip
    assert usage["same_problem"]["calls"] >= 1
    assert (report["blocking"], report["disputed"]) == (2, 1)  # the regression and the boundary
    assert requests and all(r["body"]["model"] == "scripted" for r in requests)
    assert all(r["auth"] == "Bearer sk-test-123" for r in requests)
    assert report["agents"]["expert"]["tokens"] > 0  # usage is recorded


def test_no_agent_configured_says_no_experts_ran(tmp_path):
    repo = make_demo_repo(tmp_path)
    confirm(repo)
    report = _report(repo)
    # A fact in the footer, not an unchecked box: nothing was asked of an agent.
    assert any(f.startswith("No experts ran") for f in report["facts"])
    assert not any("experts" in u["text"] for u in report["uncertainty"])
    assert report["experts"] == []


def test_read_only_level_runs_no_project_command_and_judges(tmp_path):
    repo = make_demo_repo(tmp_path)
    script = full_script(_state(tmp_path) / "log.jsonl")
    _configure(repo, _command_agent(script, tmp_path))
    report = _report(repo, level="read_only")
    assert report["runs"] == []
    found = _by_title(report)
    assert all(f["kind"] in ("review", "open") for f in found.values())
    assert found[OVERFLOW]["kind"] == "open"
    assert found[BOUNDARY]["judge"] == "looks right"
    assert report["agents"]["repro"]["calls"] == 0
    assert report["exit_code"] == 0


# Each fault of the matrix below: the review it is checked on, and what it hits (an expert, or
# the finding whose reproduction or fix faults). Faults that touch different findings share a
# review, each still asserted on its own test id: the two experts' faults leave the skeptic's
# findings; the fix agent hangs on the negative-time finding while the boundary finding's
# reproduction crashes. Two reviews, not six.
FAULT_REVIEWS = {
    ("expert", "malformed"): ("experts", "correctness"),
    ("expert", "garbage"): ("experts", "security"),
    ("repro", "crash"): ("roles", BOUNDARY),
    ("fix", "hang"): ("roles", NEGATIVE),
    ("judge", "crash"): ("roles", None),
    ("same_problem", "garbage"): ("roles", None),
}
# How each fault reads in the report's uncertainty.
FAULT_READS = {
    "malformed": "invalid reply twice",
    "garbage": "the reply has no JSON object",
    "crash": "agent crashed",
    "hang": "timed out",
}


def _faulty_script(log: Path, review: str) -> dict:
    script = full_script(log)
    for (role, fault), (name, target) in FAULT_REVIEWS.items():
        if name != review:
            continue
        if role == "expert":
            script["expert"][target] = fault
        elif role == "same_problem":
            script["same_problem"] = {f"{BOUNDARY}|{BOUNDARY_AGAIN}": fault}
        elif role == "judge":
            script["judge"] = fault
        else:
            script[role][target] = fault
    return script


@pytest.fixture(scope="module")
def fault_reports(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict]:
    """The report of each review of FAULT_REVIEWS, made the first time a test asks for it,
    inside that test's own sealed environment (conftest's `hermetic`)."""
    reports: dict[str, dict] = {}

    def report(name: str) -> dict:
        if name not in reports:
            where = tmp_path_factory.mktemp(name)
            repo = make_demo_repo(where)
            script = _faulty_script(_state(where) / "log.jsonl", name)
            _configure(repo, _command_agent(script, where, timeout=5))
            reports[name] = _report(repo)
        return reports[name]

    return report


class TestEveryFaultOnlyLowersTrust:
    """One worker makes the two reviews, each once (`--dist loadfile`: a module runs on one
    worker)."""

    @pytest.mark.parametrize(
        ("role", "fault"),
        list(FAULT_REVIEWS),
        ids=[f"{role}-{fault}" for role, fault in FAULT_REVIEWS],
    )
    def test_every_fault_only_lowers_trust(self, fault_reports, role, fault):
        review, target = FAULT_REVIEWS[role, fault]
        report = fault_reports(review)
        found = _by_title(report)
        faults = [u["text"] for u in report["uncertainty"] if u["text"].startswith("agent fault")]
        boundary = found.get(BOUNDARY)
        if role == "expert":
            ours = [t for t in faults if t.startswith(f"agent fault (expert, {target})")]
            assert ours and FAULT_READS[fault] in ours[0], faults
            assert boundary is None and OVERFLOW not in found  # the correctness expert is absent
            assert NAIVE not in found  # so is the security expert
            assert BOUNDARY_AGAIN in found and NEGATIVE in found  # the skeptic is not
        elif role in ("repro", "fix"):
            hit = found[target]
            ours = [t for t in faults if t.startswith(f"agent fault ({role}, {hit['id']})")]
            assert ours and FAULT_READS[fault] in ours[0], faults
            assert not hit["fix_verified"] and hit["fix"] is None
            if role == "repro":
                assert hit["kind"] == "review" and hit["repro"] is None
            else:  # the reproduction shows it, as corrected; only the fix is the fault
                assert hit["corrected"] is True and hit["repro"]["code"] == NEGATIVE_TEST
                gates = {g["name"]: g["status"] for g in hit["gates"]}
                assert all(gates[g] == "pass" for g in ("runs", "not_flaky", "fails_as_claimed"))
                assert gates["introduced"] == "pass"
        elif role == "judge":
            assert any(t.startswith("agent fault (judge") for t in faults), faults
            assert found[OVERFLOW]["kind"] == "review"  # not disputed without a judge
        elif role == "same_problem":
            assert any(t.startswith("agent fault (same_problem") for t in faults), faults
            assert boundary["merged"] == [] and BOUNDARY_AGAIN in found
            assert any("nothing was merged" in u["text"] for u in report["uncertainty"])
        assert all(f["kind"] != "fail" for f in report["findings"]), "no faulted path blocks"


def test_budget_runs_out_and_the_rest_is_listed(tmp_path):
    repo = make_demo_repo(tmp_path)
    _configure(
        repo,
        _command_agent(full_script(_state(tmp_path) / "l.jsonl"), tmp_path) + "budget_calls = 4\n",
    )
    report = _report(repo)
    skipped = [u["text"] for u in report["uncertainty"] if u["text"].startswith("skipped, budget")]
    assert skipped
    total = sum(u["calls"] for u in report["agents"].values())
    assert total == 4
    assert all(f["kind"] != "fail" for f in report["findings"])


def test_an_invalid_reply_is_asked_again_once_with_the_error_quoted(tmp_path):
    repo = make_demo_repo(tmp_path)
    log = _state(tmp_path) / "log.jsonl"
    script = full_script(log)
    script["expert"]["skeptic"] = {"once": "malformed", "then": script["expert"]["skeptic"]}
    _configure(repo, _command_agent(script, tmp_path))
    # The experts are asked the same at either level: read_only spares the project's test runs.
    report = _report(repo, level="read_only")
    prompts = [json.loads(line) for line in log.read_text().splitlines()]
    skeptic = [
        p["prompt"] for p in prompts if p["role"] == "expert" and p["task"]["expert"] == "skeptic"
    ]
    assert len(skeptic) == 2
    assert "## Your previous reply was rejected" not in skeptic[0]
    assert "## Your previous reply was rejected\n\nfindings: Field required" in skeptic[1]
    assert NEGATIVE in _by_title(report)  # the second answer counted
    assert not [u for u in report["uncertainty"] if "agent fault (expert" in u["text"]]


def test_prompts_can_be_overridden_from_the_repository(tmp_path):
    repo = make_demo_repo(tmp_path)
    log = _state(tmp_path) / "log.jsonl"
    override = repo / ".eyeful" / "prompts" / "judge.md"
    override.parent.mkdir(parents=True)
    override.write_text("# Role: judging findings no test could show\n\nHOUSE RULES: be strict.\n")
    _configure(repo, _command_agent(full_script(log), tmp_path))
    # read_only: the judge reads every finding, and no project test runs (not needed here).
    _report(repo, level="read_only")
    prompts = [json.loads(line) for line in log.read_text().splitlines()]
    judge = [p["prompt"] for p in prompts if p["role"] == "judge"]
    assert judge and all("HOUSE RULES: be strict." in p for p in judge)
    expert = [p["prompt"] for p in prompts if p["role"] == "expert"]
    assert expert and all("HOUSE RULES" not in p for p in expert)


def test_the_judge_reads_at_most_eight_findings_per_call(tmp_path):
    repo = make_demo_repo(tmp_path)
    log = _state(tmp_path) / "log.jsonl"
    script = full_script(log)
    script["expert"] = {
        "skeptic": [_finding(f"Guess number {n}", 1 + n * 3, evidence="analysis") for n in range(9)]
    }
    _configure(repo, _command_agent(script, tmp_path) + 'experts = ["skeptic"]\n')
    report = _report(repo)
    prompts = [json.loads(line) for line in log.read_text().splitlines()]
    sizes = sorted(len(p["task"]["findings"]) for p in prompts if p["role"] == "judge")
    assert sizes == [1, 8]
    assert report["agents"]["judge"]["calls"] == 2
    assert all(f.get("judge") == "looks right" for f in report["findings"])


def test_a_bad_agent_setting_is_exit_2_before_anything_runs(tmp_path):
    repo = make_demo_repo(tmp_path)
    marker = tmp_path / "ran"
    (repo / "pyproject.toml").write_text(
        f'[tool.eyeful.commands]\ntest = "touch {marker}"\n[tool.eyeful.agent]\npreset = "ollama"\n'
    )
    confirm(repo)
    proc = review(repo)
    assert proc.exit_code == 2
    assert "ollama" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not marker.exists()
    assert proc.stdout == ""


def test_an_unknown_agent_key_names_the_field(tmp_path):
    repo = make_demo_repo(tmp_path)
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + '\n[tool.eyeful.agent]\nprovder = "openai"\n')
    proc = review(repo)
    assert proc.exit_code == 2
    assert "unknown key 'agent.provder'" in proc.stderr


def _git_dir_state(repo: Path) -> dict[str, object]:
    """The user's repository as a git command would change it: config, hooks, refs, index,
    HEAD and the working tree (user_state), byte for byte."""
    gitdir = repo / ".git"

    def tree(path: Path) -> dict[str, str]:
        return {
            str(p.relative_to(gitdir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*"))
            if p.is_file()
        }

    return {
        **user_state(repo),
        "config": (gitdir / "config").read_bytes(),
        "hooks": tree(gitdir / "hooks"),
        "info": tree(gitdir / "info"),
        "refs": tree(gitdir / "refs"),
        "top": sorted(p.name for p in gitdir.iterdir() if p.name not in ("eyeful", "worktrees")),
    }


def test_an_agent_with_a_shell_cannot_reach_the_users_repository(tmp_path):
    """The agent's directory is an export with no .git: git config, commit and branch find no
    repository, and hooks written in, through or above its directory reach nothing of the
    user's. (In one of eyeful's linked worktrees every one of these reached the user.)"""
    repo = make_demo_repo(tmp_path)
    done = _state(tmp_path) / "mischief.jsonl"
    script = {"log": str(_state(tmp_path) / "log.jsonl"), "mischief": str(done), "expert": {}}
    _configure(repo, _command_agent(script, tmp_path) + 'experts = ["correctness"]\n')
    before = _git_dir_state(repo)
    report = _report(repo, level="read_only")  # the agents, and no project command
    assert report["agents"]["expert"]["calls"] == 1
    assert _git_dir_state(repo) == before
    [attempt] = [json.loads(line) for line in done.read_text().splitlines()]
    cwd = Path(attempt["cwd"])
    assert not cwd.exists()  # the export is gone with the review
    assert not str(cwd).startswith(str(repo))
    assert (attempt["config"], attempt["commit"], attempt["branch"]) == (128, 128, 128)
    assert "linked_hook" not in attempt  # no .git link to follow
    assert attempt["up_hook"] == "no such directory"
    assert attempt["up_config"] in ("no such directory", "no such file")
    assert attempt["git_vars"] == []
    assert "pwned" not in git(repo, "branch", "--list")
    assert not (repo / ".git" / "hooks" / "pre-push").exists()
