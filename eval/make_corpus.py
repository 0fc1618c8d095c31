"""Rebuild eval/cases/: the corpus CI runs with `--findings` only (no LLM).

    python eval/make_corpus.py            # rewrites eval/cases/

Two cases are mined with `eyeful eval mine` from a synthetic history of the example project
(a boundary fix with its test, then a refactor); the others review the demo's breaking change
(eyeful/examples) with one finding each. The repositories are stored as git bundles.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
EXAMPLES = HERE.parent / "eyeful" / "examples"
PYTEST = "python -m pytest -q -p no:cacheprovider"
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "eyeful corpus",
    "GIT_AUTHOR_EMAIL": "corpus@eyeful.invalid",
    "GIT_COMMITTER_NAME": "eyeful corpus",
    "GIT_COMMITTER_EMAIL": "corpus@eyeful.invalid",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
    "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
}
PYPROJECT = f"""[project]
name = "sessions"
version = "0.1.0"

[tool.pytest.ini_options]
pythonpath = ["."]

[tool.eyeful]
timeout = 120

[tool.eyeful.commands]
test = "{PYTEST}"
test_one = "{PYTEST} {{test}}"
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, env=ENV, check=True, text=True, capture_output=True
    ).stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def base_files() -> dict[str, str]:
    return {
        "pyproject.toml": PYPROJECT,
        "README.md": (EXAMPLES / "sessions" / "README.md").read_text(),
        "sessions.py": (EXAMPLES / "sessions" / "sessions.py").read_text(),
        "tests/test_sessions.py": (
            EXAMPLES / "sessions" / "tests" / "test_sessions.py"
        ).read_text(),
    }


def history(repo: Path) -> None:
    """Buggy boundary; the fix with its test; a refactor that changes no behaviour."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    files = base_files()
    fixed = files["sessions.py"]
    buggy = fixed.replace("return now >= session.expires_at", "return now > session.expires_at")
    commit(repo, {**files, "sessions.py": buggy}, "sessions: expiry and remaining time")
    test = (
        "from sessions import Session, is_expired\n\n\n"
        "def test_expired_at_exact_boundary():\n"
        "    assert is_expired(Session('ada', expires_at=100), now=100), "
        "'session still valid at its expiry second'\n"
    )
    commit(
        repo,
        {"sessions.py": fixed, "tests/test_boundary.py": test},
        "Fix: a session expires at its expiry second",
    )
    refactored = fixed.replace(
        '    """Seconds left, never negative."""\n    return max(0, session.expires_at - now)',
        '    """Seconds left, never negative."""\n    left = session.expires_at - now\n'
        "    return max(0, left)",
    )
    assert refactored != fixed
    commit(repo, {"sessions.py": refactored}, "Refactor remaining: name the difference")


def demo_bundle(where: Path) -> tuple[str, str]:
    """The demo: the example committed, then its breaking change; returns (base, change)."""
    repo = where / "demo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = commit(repo, base_files(), "sessions: expiry and remaining time")
    change = commit(
        repo,
        {"sessions.py": (EXAMPLES / "sessions-change" / "sessions.py").read_text()},
        "Simplify expiry and remaining",
    )
    git(repo, "bundle", "create", "-q", str(CASES / "demo.bundle"), "main")
    return base, change


FINDINGS = {f["id"]: f for f in json.loads((EXAMPLES / "sessions-findings.json").read_text())}


def wrong_fails() -> dict:
    finding = json.loads(json.dumps(FINDINGS["boundary-unquoted"]))
    finding["id"] = "boundary-wrong-fails"
    finding["repro"]["code"] += "\n\nREASON = 'the boundary moved by one hour'\n"
    finding["repro"]["fails"] = "the boundary moved by one hour"
    return finding


DEMO_CASES = {
    "real-bug-quoted": (
        "A real bug whose expected behaviour is quoted from the README: it must block.",
        [FINDINGS["boundary"]],
        '[[required_findings]]\npath = "sessions.py"\nclaim = "expiry second"\n'
        'at_least = "blocking"\nlines = [16, 16]\n',
    ),
    "question": (
        "The same reproduced bug with no quote: only the expert says so, so it is a question, "
        "though a test shows it.",
        [FINDINGS["boundary-unquoted"]],
        '[[required_findings]]\npath = "sessions.py"\nclaim = "expires_at"\n'
        'at_least = "reproduced"\n\n'
        '[[forbidden_findings]]\npath = "sessions.py"\nclaim = ""\nfloor = "blocking"\n',
    ),
    "pre-existing": (
        "A real bug the base has too: reported, never promoted to a question or a blocker.",
        [FINDINGS["extend-expired"]],
        '[[required_findings]]\npath = "sessions.py"\nclaim = "extended"\nat_least = "reported"\n\n'
        '[[forbidden_findings]]\npath = "sessions.py"\nclaim = "extended"\nfloor = "question"\n',
    ),
    "flaky": (
        "A flaky reproduction: not verified, so it may not block.",
        [FINDINGS["flaky-expiry"]],
        '[[forbidden_findings]]\npath = "sessions.py"\nclaim = ""\nfloor = "blocking"\n',
    ),
    "wrong-fails-text": (
        "A reproduction that fails, but not with the text it claims: not verified, may not block.",
        [wrong_fails()],
        '[[forbidden_findings]]\npath = "sessions.py"\nclaim = ""\nfloor = "blocking"\n',
    ),
    "fix-breaks-test": (
        "A real bug whose suggested fix breaks another test: it blocks, the fix is not verified.",
        [FINDINGS["remaining-negative"]],
        '[[required_findings]]\npath = "sessions.py"\nclaim = "negative"\nat_least = "blocking"\n',
    ),
    "regression": (
        "The change breaks an existing test: a regression, listed and blocking.",
        [],
        'regressions = ["tests/test_sessions.py::test_remaining_never_negative"]\n'
        'forbidden_regressions = ["tests/test_sessions.py::test_extend_moves_expiry"]\n',
    ),
}


BAIT = {
    "id": "refactor-bait",
    "expert": "skeptic",
    "severity": "error",
    "evidence": "test",
    "path": "sessions.py",
    "line": 21,
    "title": "The refactor lets remaining go negative",
    "body": "`left` is returned before the guard.",
    "oracle": {"kind": "human"},
    "repro": {
        "path": "tests/test_refactor_bait.py",
        "code": "from sessions import Session, remaining\n\n\ndef test_bait():\n"
        "    assert remaining(Session('ada', 100), now=130) == 0, "
        "'remaining went negative'\n",
        "fails": "remaining went negative",
    },
}


def write_demo_cases(base: str, change: str) -> None:
    for name, (description, findings, truth) in DEMO_CASES.items():
        case = CASES / name
        case.mkdir()
        lines = [
            f"# {description}",
            'repository = "../demo.bundle"',
            f'base = "{base}"',
            f'change = "{change}"',
        ]
        if findings:
            (case / "findings.json").write_text(json.dumps(findings, indent=1) + "\n")
            lines.append('findings = ["findings.json"]')
        (case / "case.toml").write_text("\n".join(lines) + "\n\n" + truth)


def mined_cases(where: Path) -> None:
    repo = where / "history"
    history(repo)
    env = {**ENV, "XDG_CONFIG_HOME": str(where / "xdg")}
    mined = where / "mined"
    proc = subprocess.run(
        [sys.executable, "-m", "eyeful", "eval", "mine", "--yes", str(mined)],
        cwd=repo,
        env=env,
        text=True,
        capture_output=True,
        check=False,
    )
    print(proc.stdout, proc.stderr, sep="\n")
    proc.check_returncode()
    for case in sorted(mined.iterdir()):
        kind = case.name.split("-", 1)[0]
        target = CASES / ("mined-boundary-fix" if kind == "bug" else "mined-clean-refactor")
        shutil.copytree(case, target)
        toml = (target / "case.toml").read_text()
        if kind == "bug":
            # The reference findings, the fix's own test as the reproduction, are listed by mine
            # itself (a question a test shows: mine requires `reproduced`).
            assert 'findings = ["reference-findings.json"]' in toml, toml
        else:
            # Bait: a claim the refactor broke `remaining`; its test passes, so nothing blocks.
            (target / "findings.json").write_text(json.dumps([BAIT], indent=1) + "\n")
            toml = toml.replace("\nbase = ", '\nfindings = ["findings.json"]\nbase = ', 1)
        (target / "case.toml").write_text(toml)


def main() -> None:
    if CASES.exists():
        shutil.rmtree(CASES)
    CASES.mkdir()
    with tempfile.TemporaryDirectory(prefix="eyeful-corpus-") as tmp:
        base, change = demo_bundle(Path(tmp))
        write_demo_cases(base, change)
        mined_cases(Path(tmp))


if __name__ == "__main__":
    main()
