"""`eyeful eval mine` on a real generated history with a known fix commit, and `eyeful eval` of the
mined case: a matching findings file passes, a wrong one fails, an unverifiable run is never
clean, the thresholds set the exit code, and the user's repository and confirmations are left
alone. One mined repository is shared by the module."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from eyeful.evaluate.cases import load_case
from tests.gitrepo import PYTEST, PYTEST_INI, eyeful_config, user_state

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = CALC.replace("return a - b", "return a + b")
TESTS = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
KNOWN = "from calc import mul\n\n\ndef test_known_bug():\n    assert mul(0.1, 3) == 0.3\n"
DIV = "\n\ndef div(a, b):\n    return a / b\n"
DIV_TEST = "from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n"
FIX_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5, 'add is off'\n"


def sealed_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GIT_", "PRE_COMMIT", "PYTEST_")) and k != "VIRTUAL_ENV"
    }
    (home / ".gitconfig").write_text(
        "[user]\n\tname = t\n\temail = t@eyeful.invalid\n[init]\n\tdefaultBranch = main\n"
    )
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
    )
    return env


def sh(*argv: str, cwd: Path, env: dict[str, str], check: bool = True):
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        text=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=240,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"{argv}: {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def commit(repo: Path, env: dict[str, str], files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    sh("git", "add", "-A", cwd=repo, env=env)
    sh("git", "commit", "-q", "-m", message, cwd=repo, env=env)
    return sh("git", "rev-parse", "HEAD", cwd=repo, env=env).stdout.strip()


def mine_history(root: Path) -> dict:
    home = root / "home"
    home.mkdir()
    env = sealed_env(home)
    repo = root / "calc"
    repo.mkdir()
    sh("git", "init", "-q", cwd=repo, env=env)
    config = eyeful_config(test_one=f"{PYTEST} {{test}}")
    commit(
        repo,
        env,
        {
            "pyproject.toml": config,
            "pytest.ini": PYTEST_INI,
            "calc.py": CALC,
            "tests/test_calc.py": TESTS,
            "tests/test_known.py": KNOWN,
        },
        "calc",
    )
    fix = commit(repo, env, {"calc.py": FIXED, "tests/test_add.py": FIX_TEST}, "Fix add")
    feature = commit(repo, env, {"calc.py": FIXED + DIV, "tests/test_div.py": DIV_TEST}, "Add div")
    docs = commit(repo, env, {"README.md": "calc\n"}, "Docs")
    before = user_state(repo)
    out = root / "cases"
    proc = sh("git", "eyeful", "eval", "mine", "--yes", str(out), cwd=repo, env=env)
    return {
        "root": root,
        "env": env,
        "repo": repo,
        "fix": fix,
        "feature": feature,
        "docs": docs,
        "out": out,
        "proc": proc,
        "before": before,
        "home": home,
    }


def _mining_finds_exactly_the_fix_commit(mined):
    cases = sorted(p.name for p in mined["out"].iterdir())
    assert cases == [f"bug-{mined['fix'][:10]}"]
    table = mined["proc"].stdout
    assert f"| {mined['docs'][:10]} | Docs | skipped: changes no source file |" in table
    assert "| calc | skipped: a root commit: nothing to compare with |" in table
    assert f"| {mined['fix'][:10]} | Fix add | case bug-{mined['fix'][:10]} |" in table
    # Its test fails at import on the parent: a feature, skipped unless --include-features.
    assert (
        f"| {mined['feature'][:10]} | Add div | skipped: a feature, not a fix: its test fails on "
        "the reverted source only for a name it uses missing (ImportError: cannot import name "
        "'div' from 'calc'"
    ) in table, table
    assert user_state(mined["repo"]) == mined["before"]


def _the_mined_case_has_the_expected_ground_truth(mined):
    case = load_case(mined["out"] / f"bug-{mined['fix'][:10]}")
    spec = case.spec
    assert [e.model_dump() for e in spec.required_findings] == [
        {"path": "calc.py", "claim": "", "at_least": "reproduced", "lines": [2, 2]}
    ]
    assert spec.forbidden_regressions == ["tests/test_known.py::test_known_bug"]
    assert not (spec.forbidden_findings or spec.regressions or spec.clean)
    assert case.config is not None and case.config.commands.test_one == f"{PYTEST} {{test}}"
    assert case.repository.name == "repo.bundle"
    # The change brings the bug back: the base has the fix, the change the old source.
    clone = mined["root"] / "inspect"
    sh("git", "clone", "-q", str(case.repository), str(clone), cwd=mined["root"], env=mined["env"])

    def show(rev, path):
        return sh("git", "show", f"{rev}:{path}", cwd=clone, env=mined["env"], check=False)

    assert show(spec.base, "calc.py").stdout == FIXED
    assert show(spec.change, "calc.py").stdout == CALC
    assert show(spec.base, "tests/test_add.py").returncode != 0  # F without its new test
    reference = json.loads((case.directory / "reference-findings.json").read_text())
    assert [(f["path"], f["repro"]["path"], f["repro"]["code"]) for f in reference] == [
        ("calc.py", "tests/test_add.py", FIX_TEST)
    ]
    # What the test's exception said on the reverted source, written by the test file.
    assert reference[0]["repro"]["fails"] == "add is off"


def _finding(line: int, evidence: str = "test") -> dict:
    return {
        "id": "add-sub",
        "expert": "correctness",
        "severity": "error",
        "evidence": evidence,
        "path": "calc.py",
        "line": line,
        "title": "add subtracts",
        "body": "`add` returns a - b.",
        "oracle": {"kind": "human"},
        "repro": {
            "path": "tests/test_add_repro.py",
            "code": "from calc import add\n\n\ndef test_add():\n"
            "    assert add(2, 3) == 5, 'add is off by the operator'\n",
            "fails": "add is off by the operator",
        },
    }


def _variant(mined: dict, name: str, findings: list[dict] | None, toml: str | None = None) -> Path:
    source = mined["out"] / f"bug-{mined['fix'][:10]}"
    target = mined["root"] / "variants" / name
    shutil.copytree(source, target)
    text = toml if toml is not None else (source / "case.toml").read_text()
    if findings is not None:
        (target / "findings.json").write_text(json.dumps(findings))
        # In place of the reference findings the case was mined with.
        mined_with = 'findings = ["reference-findings.json"]\n'
        assert mined_with in text
        text = text.replace(mined_with, 'findings = ["findings.json"]\n')
    (target / "case.toml").write_text(text)
    return target


def evaluate(mined):
    spec = load_case(mined["out"] / f"bug-{mined['fix'][:10]}").spec
    _variant(mined, "matching", [_finding(2)])
    _variant(mined, "wrong", [_finding(5, evidence="analysis")])  # elsewhere, nothing runs
    _variant(
        mined,
        "unverifiable",
        None,
        f'base = "{spec.base}"\nchange = "{spec.change}"\nclean = true\n\n[eyeful]\ntimeout = 30\n',
    )  # no test command: exit 3
    store = mined["home"] / ".config" / "eyeful" / "confirmed"
    before = store.read_bytes()
    proc = sh(
        "git",
        "eyeful",
        "eval",
        str(mined["root"] / "variants"),
        "--yes",
        "-j",
        "2",
        "--format",
        "json",
        "--min-recall",
        "1",
        cwd=mined["repo"],
        env=mined["env"],
        check=False,
    )
    return {
        "proc": proc,
        "store_before": before,
        "store_after": store.read_bytes(),
        "result": json.loads(proc.stdout) if proc.stdout.startswith("{") else None,
    }


def _row(evaluated: dict, case: str) -> dict:
    rows = [r for r in evaluated["result"]["results"] if r["case"] == case]
    assert len(rows) == 1, evaluated["proc"].stderr
    return rows[0]


def _eval_with_a_matching_findings_file_passes(evaluated):
    row = _row(evaluated, "matching")
    judges = {j["judge"]: j["status"] for j in row["judges"]}
    assert row["status"] == "pass", row
    assert judges["required_findings"] == "pass"
    assert judges["forbidden_regressions"] == "pass"
    assert (row["blocking"], row["questions"]) == (0, 1)  # a human oracle: a question


def _eval_with_a_wrong_findings_file_fails(evaluated):
    row = _row(evaluated, "wrong")
    required = next(j for j in row["judges"] if j["judge"] == "required_findings")
    assert row["status"] == "fail"
    assert required == {
        "judge": "required_findings",
        "status": "fail",
        "reason": "calc.py:2-2 (any claim) at least reproduced: no finding there",
    }


def _an_unverifiable_run_is_never_clean(evaluated):
    row = _row(evaluated, "unverifiable")
    assert row["status"] == "unverifiable" and row["exit_code"] == 3
    clean = next(j for j in row["judges"] if j["judge"] == "clean")
    assert clean["status"] == "fail" and clean["reason"].startswith("unverifiable: ")


def _totals_and_thresholds(evaluated):
    (total,) = evaluated["result"]["totals"]
    assert (total["required_met"], total["required_total"], total["recall_cases"]) == (1, 2, 2)
    assert total["required_verified"] == 1  # the matching finding's reproduction passed the gates
    assert (total["false_blocked"], total["false_blocking_cases"]) == (1, 3)
    assert evaluated["proc"].returncode == 1
    assert "threshold missed: execution: recall 0.500 < --min-recall 1" in evaluated["proc"].stderr


def _eval_leaves_the_users_confirmations_alone(evaluated):
    assert evaluated["store_after"] == evaluated["store_before"]


def test_mine_a_fix_commit_then_evaluate_the_case(tmp_path):
    """One test, so parallel workers never build the history twice: mine it, check the case,
    evaluate three variants of it in one `eyeful eval`."""
    mined = mine_history(tmp_path)
    _mining_finds_exactly_the_fix_commit(mined)
    _the_mined_case_has_the_expected_ground_truth(mined)
    evaluated = evaluate(mined)
    _eval_with_a_matching_findings_file_passes(evaluated)
    _eval_with_a_wrong_findings_file_fails(evaluated)
    _an_unverifiable_run_is_never_clean(evaluated)
    _totals_and_thresholds(evaluated)
    _eval_leaves_the_users_confirmations_alone(evaluated)
    _mining_needs_the_commands_confirmed_for_the_repository(mined, tmp_path / "unconfirmed")


def _mining_needs_the_commands_confirmed_for_the_repository(mined, tmp_path):
    env = {**mined["env"], "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    before = user_state(mined["repo"])
    proc = sh("git", "eyeful", "eval", "mine", str(tmp_path / "out"), cwd=mined["repo"], env=env,
              check=False)  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().endswith(
        "the project's commands are not confirmed for this repository: run `git eyeful confirm` "
        "(or pass --yes)"
    )
    assert not (tmp_path / "out").exists() and not (tmp_path / "xdg").exists()
    assert user_state(mined["repo"]) == before


def test_a_test_id_eyeful_refuses_skips_the_commit_instead_of_crashing(tmp_path):
    """A history can name a test file no id check accepts (`$` in its name): mining skips that
    commit with the reason, as it skips any commit it cannot check."""
    import pytest

    from eyeful.config import load_config
    from eyeful.evaluate.mine import Miner, _Skip
    from eyeful.gitutil import find_repo
    from eyeful.runs import Silent
    from tests.gitrepo import make_repo

    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(), "calc.py": "x = 1\n"})
    paths = find_repo(repo)
    miner = Miner(paths, load_config(paths.root), tmp_path / "out", Silent())
    try:
        tree = miner.repo.revparse_single("HEAD").tree.id
        with pytest.raises(_Skip, match=r"test_\$x\.py"):
            miner._one(tree, "change", "tests/test_$x.py")
    finally:
        miner.close()
