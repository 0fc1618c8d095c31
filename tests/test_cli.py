"""The command line's own promises: help, exit codes, stdout/stderr split, progress, demo."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests import core
from tests.gitrepo import (
    BROKEN_ADD,
    CALC,
    PYTEST,
    confirm,
    eyeful,
    eyeful_config,
    git,
    python_project,
    write,
)


def test_dash_h_documents_commands_and_exit_codes(tmp_path):
    proc = eyeful("-h", cwd=tmp_path)
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    for word in ("confirm", "install-hook", "demo", "--base", "--head", "--format"):
        assert word in text
    assert "0 nothing blocking; 1 blocking issues; 2 bad usage" in text
    assert "3 could not verify" in text


def test_both_entry_points_are_the_same_app(tmp_path):
    bindir = Path(sys.executable).parent
    for name in ("eyeful", "git-eyeful"):
        proc = subprocess.run([str(bindir / name), "--version"], capture_output=True, text=True)
        assert proc.returncode == 0
        assert proc.stdout.startswith("eyeful ")


def test_a_review_in_process_gives_what_git_eyeful_gives(tmp_path):
    """Most tests review through the core in their own process (tests/core.py); that is only
    sound if it gives what `git eyeful` gives for the same input: the same exit code, report
    and messages, for each verdict and for bad input."""
    config = eyeful_config(extra="reruns = 1", test_one=f"{PYTEST} {{test}}")
    repo = python_project(tmp_path / "repo", config)
    write(repo, {"findings.json": "[{]", "description.md": "the change"})
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()

    def same(where: Path, *args: str, **options: object) -> core.Reviewed:
        started = eyeful("--no-cache", *args, cwd=where)
        here = core.review(where, no_cache=True, **options)
        for proc in (here, started):  # durations differ from run to run
            proc.stdout, proc.stderr = (
                re.sub(r'\b\d+(\.\d+)?s\b|"(duration|started)": [^,\n]+', "N", text)
                for text in (proc.stdout, proc.stderr)
            )
        assert (here.exit_code, here.stdout, here.stderr) == (
            started.returncode, started.stdout, started.stderr
        )  # fmt: skip
        return here

    assert same(repo).exit_code == 0  # nothing staged: nothing to review
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "calc.py")
    assert same(repo).exit_code == 3  # the commands are not confirmed
    confirm(repo)
    assert (
        same(repo, "--format", "json", "--all-tests", format="json", all_tests=True).exit_code == 1
    )
    assert same(repo, "-m", "why", message="why").exit_code == 1
    bad = same(repo, "--findings", "findings.json", findings=Path("findings.json"))
    assert bad.exit_code == 2 and "findings.json" in bad.stderr, bad.stderr
    both = same(
        repo, "--description", "description.md", "-m", "x",
        description_file=Path("description.md"), message="x",
    )  # fmt: skip
    assert both.exit_code == 2
    assert same(repo, "--base", "no-such-branch", base="no-such-branch").exit_code == 2
    assert same(elsewhere).exit_code == 2
    assert (
        same(repo, "--base", "1" * 40, "--head", "HEAD", base="1" * 40, head="HEAD").exit_code == 3
    )


def test_a_review_in_process_reads_git_configuration_from_its_own_home(tmp_path):
    """libgit2 (under pygit2) finds git's global and XDG configuration from HOME and
    XDG_CONFIG_HOME when pygit2 is imported; a review in the test's process reads them again
    from the environment it is given, as a fresh start would, and the test's own afterwards."""
    import pygit2
    from pygit2.enums import ConfigLevel

    for name in ("one", "two"):
        home = tmp_path / name
        env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "xdg")}
        with core._as_git_eyeful(tmp_path, env):
            assert Path.cwd() == tmp_path
            assert pygit2.settings.search_path[ConfigLevel.GLOBAL] == str(home)
            assert pygit2.settings.search_path[ConfigLevel.XDG] == str(home / "xdg" / "git")
            assert os.environ["GIT_EXEC_PATH"] == os.environ["PATH"].split(os.pathsep)[0]
        assert pygit2.settings.search_path[ConfigLevel.GLOBAL] == os.environ["HOME"]


def _count(path: Path) -> int:
    return len(path.read_text().split()) if path.exists() else 0


def test_results_are_cached_by_tree_and_commands(tmp_path):
    counter = tmp_path / "counter"
    config = eyeful_config(
        f"echo run >> {counter} && {PYTEST}", extra="reruns = 1", test_one=f"{PYTEST} {{test}}"
    )
    repo = python_project(tmp_path / "repo", config)
    confirm(repo)
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")

    first = core.review(repo, format="json").json
    # The suite on the change; the failing test alone on each side (the base's suite never ran).
    assert [(r["name"], r["cached"]) for r in first["runs"]] == [
        ("test", False), ("test_one", False), ("test_one", False)
    ]  # fmt: skip
    assert _count(counter) == 1

    again = core.review(repo, format="json").json
    assert _count(counter) == 1  # the suite was not run again; the confirmation always is
    assert [(r["name"], r["cached"]) for r in again["runs"]] == [
        ("test", True), ("test_one", False), ("test_one", False)
    ]  # fmt: skip
    assert again["regressions"] == first["regressions"]
    assert again["exit_code"] == 1

    # A different change: its suite runs.
    write(repo, {"calc.py": BROKEN_ADD + "\n# another change\n"})
    git(repo, "add", "-A")
    third = core.review(repo, format="json").json
    assert _count(counter) == 2
    assert (third["runs"][0]["side"], third["runs"][0]["cached"]) == ("change", False)
    assert [r["test"] for r in third["regressions"]] == ["tests/test_calc.py::test_add"]


def test_a_damaged_cache_entry_is_a_miss_never_a_crash(tmp_path):
    counter = tmp_path / "counter"
    config = eyeful_config(f"echo run >> {counter} && {PYTEST}")
    repo = python_project(tmp_path / "repo", config)
    confirm(repo)
    write(repo, {"calc.py": CALC.replace("a + b", "b + a")})  # harmless
    git(repo, "add", "-A")
    assert core.review(repo).exit_code == 0
    entries = sorted((repo / ".git" / "eyeful" / "cache" / "runs").rglob("*.json"))
    assert entries and _count(counter) == 1
    for damaged in ('{"status": "nonsense"}', "[]", '{"tree": 5}'):
        for entry in entries:
            entry.write_text(damaged, encoding="utf-8")  # JSON, but not a run record
        proc = core.review(repo)
        assert proc.exit_code == 0, proc.stdout + proc.stderr  # run afresh, not a crash
        assert "cached: ran" not in proc.stdout
    assert _count(counter) == 4


def test_a_changed_command_is_not_served_from_the_old_cache(tmp_path):
    counter = tmp_path / "counter"
    one = {"test_one": f"{PYTEST} {{test}}", "extra": "reruns = 1"}
    config = eyeful_config(f"echo run >> {counter} && {PYTEST}", **one)
    repo = python_project(tmp_path / "repo", config)
    confirm(repo)
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    assert core.review(repo).exit_code == 1
    assert _count(counter) == 1
    (repo / "pyproject.toml").write_text(
        eyeful_config(f"echo other >> {counter} && {PYTEST}", **one)
    )
    confirm(repo)
    # pyproject.toml is unstaged: the tree is the same, the command is not.
    assert core.review(repo).exit_code == 1
    assert _count(counter) == 2


def test_stdout_has_only_the_report_and_stderr_is_quiet_off_a_terminal(tmp_path):
    repo = python_project(tmp_path / "repo")
    confirm(repo)
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    proc = eyeful("--format", "json", cwd=repo)
    assert proc.returncode == 1
    json.loads(proc.stdout)  # nothing but the JSON object
    assert proc.stderr == ""


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _run_with_tty_stderr(
    argv: list[str], cwd: Path, env: dict[str, str], hang_up_after: str | None = None
) -> tuple[int, str, str]:
    """``argv`` with stderr on a terminal; with ``hang_up_after``, the terminal goes away once
    that text has been shown on it (every later write to it fails)."""
    master, slave = pty.openpty()
    # stdout goes to a file: a report larger than a pipe's buffer would block eyeful while this
    # loop only reads the terminal.
    stdout = tempfile.TemporaryFile()  # noqa: SIM115 (closed below, after the loop)
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=slave,
    )  # fmt: skip
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
            if hang_up_after is not None and hang_up_after in _ANSI.sub(
                "", b"".join(chunks).decode(errors="replace")
            ):
                break
        elif proc.poll() is not None:
            break
    os.close(master)
    proc.wait(timeout=300)
    stdout.seek(0)
    out = stdout.read().decode()
    stdout.close()
    return proc.returncode, out, b"".join(chunks).decode(errors="replace")


def test_progress_on_a_terminal_goes_to_stderr_and_honours_no_color(tmp_path):
    repo = python_project(tmp_path / "repo")
    confirm(repo)
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    code, out, err = _run_with_tty_stderr(["git", "eyeful"], repo, env)
    assert code == 1
    assert out.startswith("**eyeful: blocking**")
    plain = _ANSI.sub("", err)
    assert "FAILED test on the change" in plain
    assert "PASSED test_one on the base" in plain  # the failing test alone
    assert re.search(r"\x1b\[[0-9;]*3[0-9]m|\x1b\[[0-9;]*38;", err), "colour on a terminal"

    git(repo, "add", "-A")
    write(repo, {"calc.py": BROKEN_ADD + "\n# changed again\n"})
    git(repo, "add", "-A")
    code, out, err = _run_with_tty_stderr(["git", "eyeful"], repo, {**env, "NO_COLOR": "1"})
    assert code == 1
    assert "FAILED test on the change" in _ANSI.sub("", err)
    assert not re.search(r"\x1b\[[0-9;]*(3[0-9]|9[0-7])m|\x1b\[[0-9;]*38;", err)


def test_an_interrupted_demo_leaves_nothing(tmp_path, hermetic):
    # The demo's whole review, kept, is read by test_verify's TestDemoReview. Here: `eyeful demo`
    # (no --keep) stopped once its review is under way removes its throwaway repository, as a
    # finished one does (the same `finally`), and confirms nothing of the user's.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "eyeful"), "demo"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not list(tmp.glob("eyeful-demo-*/sessions/.git/eyeful/worktrees/wt-*/tests")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert out == ""
    assert list(tmp.iterdir()) == []  # the throwaway repository is gone
    assert not (hermetic / ".config" / "eyeful" / "confirmed").exists()


def test_interactive_run_asks_and_only_yes_confirms(tmp_path, hermetic):
    marker = tmp_path / "ran"
    config = eyeful_config(f"touch {marker} && {PYTEST}", test_one=f"{PYTEST} {{test}}")
    repo = python_project(tmp_path / "repo", config)
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    for answer, code, ran in (("n", 3, False), ("y", 1, True)):
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            ["git", "eyeful"], cwd=repo, stdin=slave, stdout=subprocess.PIPE, stderr=slave,
            env={**os.environ, "TERM": "dumb"},
        )  # fmt: skip
        os.close(slave)
        seen = b""
        while b"[y/N]" not in seen:
            ready, _, _ = select.select([master], [], [], 30)
            assert ready, seen
            seen += os.read(master, 4096)
        assert f"touch {marker}".encode() in seen  # the commands are shown before asking
        os.write(master, f"{answer}\n".encode())
        out = proc.communicate(timeout=120)[0].decode()
        os.close(master)
        assert proc.returncode == code, out
        assert marker.exists() is ran
    assert (hermetic / ".config" / "eyeful" / "confirmed").is_file()


def test_clean_removes_worktrees_and_cache_and_nothing_of_the_users(tmp_path):
    from tests.gitrepo import user_state

    repo = python_project(tmp_path / "repo")
    confirm(repo)
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    assert core.review(repo).exit_code == 1
    listed = git(repo, "worktree", "list", "--porcelain")
    assert ".git/eyeful/worktrees/wt-" in listed
    before = user_state(repo)
    proc = eyeful("clean", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"Removed \d worktree\(s\)", proc.stderr)
    assert not (repo / ".git" / "eyeful").exists()
    assert "eyeful" not in git(repo, "worktree", "list", "--porcelain")
    assert not (repo / ".git" / "worktrees").exists() or not list(
        (repo / ".git" / "worktrees").iterdir()
    )
    assert user_state(repo) == before
    # It all comes back on the next run.
    assert core.review(repo).exit_code == 1


def _repro_finding(n: int) -> dict[str, object]:
    message = f"add does not return the sum ({n})"
    return {
        "id": f"sum-{n}", "expert": "correctness", "severity": "error", "evidence": "test",
        "path": "calc.py", "line": 2, "title": f"add subtracts ({n})", "body": "add returns a - b.",
        "oracle": {"kind": "human"},
        "repro": {
            "path": f"tests/test_repro_{n}.py",
            "code": "from calc import add\n\n\ndef test_sum():\n"
            f"    assert add(2, {n}) == 2 + {n}, {message!r}\n",
            "fails": message,
        },
    }  # fmt: skip


def test_a_terminal_that_goes_away_mid_review_costs_neither_the_report_nor_the_exit_code(tmp_path):
    """Findings are verified in worker threads (-j 2, the not_flaky runs of each at once), and every
    run reports to the display on the terminal. A race there once crashed the run (rich's
    KeyError: exit 1, stdout empty); updates now hold one lock, and a display that fails turns
    itself off. The lock has no deterministic test (the race could not be made to happen on
    purpose); the second half does: the terminal goes away mid-review, every later write to
    stderr fails (EIO), and the exit code and the report must stand."""
    repo = python_project(tmp_path / "repo", eyeful_config(PYTEST, test_one=PYTEST + " {test}"))
    confirm(repo)
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([_repro_finding(n) for n in (3, 4)]))
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
    argv = ["git", "eyeful", "-j", "2", "--findings", str(findings), "--format", "json"]
    code, out, err = _run_with_tty_stderr(argv, repo, env, hang_up_after="test_one on the change")
    shown = _ANSI.sub("", err)
    assert "test_one on the change" in shown  # the regression's confirmation: the review was going
    assert "test_repro_" not in shown  # and the findings were verified after the terminal went
    assert code == 1, (out, err[-3000:])
    report = json.loads(out)
    assert report["exit_code"] == 1
    assert [f["label"] for f in report["findings"]] == ["question"] * 2


def test_a_reader_that_stops_reading_changes_no_exit_code(tmp_path):
    """`git eyeful | head -1`: the review's exit code stands, and no crash is reported."""
    repo = python_project(tmp_path / "repo")
    confirm(repo)
    bindir = Path(sys.executable).parent
    for staged, code in ((CALC.replace("a + b", "b + a"), 0), (BROKEN_ADD, 1)):
        write(repo, {"calc.py": staged})
        git(repo, "add", "-A")
        # The fast path (no arguments) and typer's (any other option): every format is printed
        # by the same `emit`.
        for argv in ([], ["-j", "2", "--format", "json"]):
            proc = subprocess.Popen(
                [str(bindir / "git-eyeful"), *argv], cwd=repo, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
            )  # fmt: skip
            assert proc.stdout is not None and proc.stderr is not None
            proc.stdout.close()  # the reader is gone before anything is written
            err = proc.stderr.read().decode()
            assert proc.wait(timeout=180) == code, (argv, err)
            assert "internal error" not in err and "Traceback" not in err, err
