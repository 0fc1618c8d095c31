"""`eyeful eval` mechanics: the semantic judge through a real agent command (any fault is a
failed match), and Ctrl-C stopping every run with the partial table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from eyeful.config import AgentConfig
from eyeful.evaluate.cases import RequiredFinding
from eyeful.evaluate.judges import FindingView, required_met
from eyeful.evaluate.semantic import agent_matcher
from tests.gitrepo import git, make_repo, write

FINDING = FindingView(
    id="f1",
    path="app.py",
    line=3,
    title="Untrusted name reaches SQL",
    body="The query is built with an f-string.",
    kind="fail",
    label="issue (blocking)",
)
ENTRY = RequiredFinding(path="app.py", claim="injection", at_least="question")

AGENTS = {
    "yes": 'print(\'```json\\n{"states_claim": true, "reason": "the same bug"}\\n```\')',
    "no": 'print(\'{"states_claim": false, "reason": "another problem"}\')',
    "crash": "import sys; sys.exit(3)",
    "garbage": "print('I think so')",
    "wrong-type": 'print(\'{"states_claim": "yes", "reason": "sure"}\')',
}


@pytest.mark.parametrize(("agent", "met", "why"), [
    ("yes", True, "agent judge: the same bug"),
    ("no", False, "another problem"),
    ("crash", False, "agent fault"),
    ("garbage", False, "agent fault"),
    ("wrong-type", False, "agent fault"),
])  # fmt: skip
def test_the_agent_judge_only_ever_passes_on_a_clear_yes(tmp_path, agent, met, why):
    script = tmp_path / "agent.py"
    script.write_text("import sys\nsys.stdin.read()\n" + AGENTS[agent] + "\n")
    config = AgentConfig(command=f"{sys.executable} {script}", timeout=30)
    ok, reason = required_met(ENTRY, [FINDING], agent_matcher(config, tmp_path))
    assert ok is met
    assert why in reason
    # Without the agent, the words alone decide: "injection" is not in the finding.
    assert required_met(ENTRY, [FINDING])[0] is False


def test_ctrl_c_stops_every_run_and_prints_the_partial_table(tmp_path):
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    base = git(repo, "rev-parse", "HEAD").strip()
    write(repo, {"app.py": "x = 2\n"})
    git(repo, "commit", "-qam", "change")
    change = git(repo, "rev-parse", "HEAD").strip()
    pidfile = tmp_path / "slow.pid"
    cases = tmp_path / "cases"
    head = f'repository = "{repo}"\nbase = "{base}"\nchange = "{change}"\nclean = true\n'
    write(cases, {
        # No test command: eyeful exits 3 at once (an unverifiable run).
        "a-fast/case.toml": head + "\n[eyeful]\ntimeout = 30\n",
        "b-slow/case.toml": head + f'\n[eyeful.commands]\ntest = "echo $$ > {pidfile}; '
                                   'exec sleep 120"\n',
    })  # fmt: skip
    # Started the way a terminal starts a command: SIGINT at its default, even when this suite
    # itself was started in the background (`pytest ... &`), where it is inherited ignored.
    as_on_a_terminal = [sys.executable, "-c", "import os, signal, sys; "
                        "signal.signal(signal.SIGINT, signal.SIG_DFL); "
                        "os.execv(sys.argv[1], sys.argv[1:])"]  # fmt: skip
    proc = subprocess.Popen(
        [*as_on_a_terminal, sys.executable, "-m", "eyeful", "eval", str(cases), "--yes", "-j", "2"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (pidfile.is_file() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    slow = int(pidfile.read_text())
    lines = []
    while not any("a-fast" in line for line in lines):
        line = proc.stderr.readline()
        assert line, lines
        lines.append(line)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "| a-fast | execution | UNVERIFIABLE |" in out
    assert "b-slow" not in out
    assert "Interrupted: the table holds the runs that finished." in out
    assert "interrupted; the table holds the runs that finished" in err
    with pytest.raises(ProcessLookupError):
        os.kill(slow, 0)


def _patch_case(tmp_path, patch: str):
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    git(repo, "branch", "stable")
    case = tmp_path / "cases" / "patched"
    write(case, {
        "change.patch": patch,
        "case.toml": f'repository = "{repo}"\nbase = "stable"\nclean = true\n\n'
                     '[eyeful.commands]\ntest = "grep -q \'x = 1\' app.py"\n',
    })  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "eyeful", "eval", str(case.parent), "--yes", "--format", "json"],
        cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120,
    )  # fmt: skip


PATCH = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def test_a_change_patch_is_applied_to_the_base_branch(tmp_path):
    # The suite checks for the base's line: with the patch applied it fails (a regression),
    # so the clean case fails; unapplied, there would be nothing to review.
    proc = _patch_case(tmp_path, PATCH)
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)["results"]
    assert (row["status"], row["exit_code"], row["regressions"]) == ("fail", 1, 1), row


def test_a_patch_that_does_not_apply_stops_the_eval(tmp_path):
    proc = _patch_case(tmp_path, PATCH.replace("-x = 1", "-x = 7"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("eyeful: error: patched: patch: does not apply to the base: ")
    assert len(proc.stderr.strip().splitlines()) == 1


def _tiny_case(tmp_path, truth: str):
    repo = make_repo(tmp_path / "repo", {"app.py": "x = 1\n"})
    write(repo, {"app.py": "x = 2\n"})
    git(repo, "commit", "-qam", "change")
    case = tmp_path / "cases" / "tiny"
    write(case, {"case.toml": f'repository = "{repo}"\nbase = "HEAD~1"\nchange = "HEAD"\n'
                              f'{truth}\n[eyeful.commands]\ntest = "true"\n'})  # fmt: skip
    return case


def test_eval_without_a_terminal_needs_yes(tmp_path):
    case = _tiny_case(tmp_path, "clean = true\n")
    proc = subprocess.run([sys.executable, "-m", "eyeful", "eval", str(case)], cwd=tmp_path,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert "    test           true" in proc.stderr
    assert proc.stderr.strip().endswith("pass --yes to run the cases' commands")


def test_a_bad_case_stops_the_eval_before_anything_runs(tmp_path):
    good = _tiny_case(tmp_path, "clean = true\n")
    bad = tmp_path / "cases" / "bad"
    write(bad, {"case.toml": (good / "case.toml").read_text().replace(
        "clean = true", "[[required_findings]]\npath = 'a.py'\nclaim = 'x'\nat_least = 'severe'"
    )})  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "eyeful", "eval", str(tmp_path / "cases"), "--yes"],
        cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "eyeful: error: bad: required_findings.0.at_least: Input should be 'blocking', "
        "'reproduced', 'question' or 'reported'"
    ]
