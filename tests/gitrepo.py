"""Helpers for tests: real repositories, starting eyeful, and fingerprints of the user's state."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

PYTHON = sys.executable
# The system's temporary directory, as the suite started: each test's TMPDIR is its worker's own
# directory under pytest's base temp (tests/conftest.py), which another user cannot enter and
# whose paths pytest leaves out of parameter ids; the tests that need neither use this one.
SYSTEM_TMP = tempfile.gettempdir()
PYTEST = f"{shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider"
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")


def run(*argv: str, cwd: Path, check: bool = True, **kw) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, cwd=cwd, text=True, capture_output=True, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"{argv} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def git(repo: Path, *args: str, **kw) -> str:
    return run("git", *args, cwd=repo, **kw).stdout


def write(repo: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def stage(repo: Path, files: dict[str, str | bytes]) -> None:
    """Write ``files`` and stage everything: the change a review looks at."""
    write(repo, files)
    git(repo, "add", "-A")


def report_json(proc: subprocess.CompletedProcess[str]) -> dict:
    """The JSON report `--format json` printed (stderr shown when there is none)."""
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout)


def eyeful_config(test: str = PYTEST, *, extra: str = "", **commands: str) -> str:
    if test == PYTEST and "test_one" not in commands:
        # Regressions block only once confirmed by running the test alone (`test_one`).
        commands["test_one"] = f"{PYTEST} {{test}}"
    if "reruns" not in extra:
        # One live run per side confirms a regression in tests about something else; the default
        # (3) is what the tests of confirmation itself, and the demo, exercise.
        extra = f"reruns = 1\n{extra}"
    if "repro_runs" not in extra:
        # Two runs per side reproduce a finding in tests about something else (two runs can
        # already disagree); the default (5) is what the demo and the tests of the gates use.
        extra = f"repro_runs = 2\n{extra}"
    lines = ["[tool.eyeful]", extra, "[tool.eyeful.commands]", f"test = {test!r}"]
    lines += [f"{k} = {v!r}" for k, v in commands.items()]
    return "\n".join(lines) + "\n"


def make_repo(path: Path, files: dict[str, str | bytes], message: str = "base") -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    write(path, files)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return path


CALC = """def add(a, b):
    return a + b


def mul(a, b):
    return a * b
"""

CALC_TESTS = """from calc import add, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6
"""

PYTEST_INI = "[pytest]\npythonpath = .\n"

# calc.py with add broken: test_add fails, test_mul passes.
BROKEN_ADD = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def python_project(path: Path, config: str | None = None) -> Path:
    """A small committed Python project whose tests pass."""
    return make_repo(
        path,
        {
            "pyproject.toml": config if config is not None else eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "calc.py": CALC,
            "tests/test_calc.py": CALC_TESTS,
        },
    )


def eyeful(
    *args: str,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 180,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """`git eyeful ARGS`, started as a user starts it: for the tests about the program itself
    (starting, the command line, terminals, hooks, signals, the crash handler). A review's
    verdict is tested through the core, in the test's process: tests/core.py."""
    return subprocess.run(
        ["git", "eyeful", *args],
        cwd=cwd,
        text=True,
        capture_output=True,
        env=env,
        timeout=timeout,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )


def confirm(repo: Path) -> None:
    """Record what `git eyeful confirm --yes` records, in this process (no eyeful start-up).

    The command itself is exercised by the tests of confirming (test_review, test_cli, and
    `test_the_confirm_helper_records_what_the_command_records`); every other test needs only
    the record, in the same file (this test's sealed HOME) as the command would write it."""
    from eyeful.config import load_config
    from eyeful.gitutil import find_repo
    from eyeful.trust import TrustStore

    paths = find_repo(repo)
    TrustStore().confirm(paths.root, load_config(paths.root))


def _hash_tree(root: Path, skip_git: bool) -> dict[str, str]:
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if skip_git and Path(dirpath) == root and ".git" in dirnames:
            dirnames.remove(".git")
        for name in sorted(filenames + [d for d in dirnames if (Path(dirpath) / d).is_symlink()]):
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            else:
                data = path.read_bytes()
                out[rel] = f"{oct(path.stat().st_mode)}:{hashlib.sha256(data).hexdigest()}"
    return out


def user_state(repo: Path) -> dict[str, object]:
    """Everything of the user's that eyeful must leave byte-identical."""
    gitdir = repo / ".git"

    def read(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"

    refs = _hash_tree(gitdir / "refs", skip_git=False) if (gitdir / "refs").exists() else {}
    return {
        "worktree": _hash_tree(repo, skip_git=True),
        "index": read(gitdir / "index"),
        "HEAD": (gitdir / "HEAD").read_text(),
        "refs": refs,
        "packed-refs": read(gitdir / "packed-refs"),
        "for-each-ref": git(repo, "for-each-ref"),
        "stash": git(repo, "stash", "list"),
        "stash-log": read(gitdir / "logs" / "refs" / "stash"),
        "HEAD-log": read(gitdir / "logs" / "HEAD"),
        "status": git(
            repo,
            "--no-optional-locks",
            "status",
            "--porcelain=v2",
            "--untracked-files=all",
            "--ignored",
        ),
    }
