"""What eyeful must never do to the user, and how its project commands are contained.

Nothing of the user's is written (working tree, index, HEAD, refs, stash), also when a run is
interrupted or times out; project commands run in their own process group and leave no orphans;
every run is recorded with status, exit code, duration and tail; hook-inherited GIT_* variables
reach neither eyeful's worktrees nor the project's commands; concurrent runs share the worktree
pool and the cache safely; `setup` runs only when its command or its inputs change.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.core import review
from tests.gitrepo import (
    BROKEN_ADD,
    CALC_TESTS,
    PYTEST,
    PYTEST_INI,
    PYTHON,
    SYSTEM_TMP,
    confirm,
    eyeful_config,
    git,
    make_repo,
    python_project,
    stage,
    user_state,
    write,
)

FIXED_ADD = "def add(a, b):\n    return b + a\n\n\ndef mul(a, b):\n    return a * b\n"
GIT_EYEFUL = str(Path(PYTHON).parent / "git-eyeful")
INTERRUPTED = "eyeful: error: interrupted; nothing of yours was changed"


def _project(tmp_path: Path, config: str | None = None) -> Path:
    repo = python_project(tmp_path / "repo", config)
    confirm(repo)
    return repo


def _alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie (a zombie's reaper may be slow or absent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _read_pid(path: Path) -> int:
    return int(path.read_text().split()[0])


def _wait_for(path: Path, proc: subprocess.Popen[str], within: float = 90.0) -> None:
    deadline = time.monotonic() + within
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"eyeful ended ({proc.returncode}) first:\n{out}\n{err}")
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.05)


@pytest.fixture
def kill_leftovers(tmp_path):
    """After the test, kill (by pid, never by name) what a failing test's commands left running:
    every pid they wrote to a ``*.pid`` file in the test's directory."""
    yield
    for pidfile in tmp_path.glob("*.pid"):
        try:
            pid = _read_pid(pidfile)
        except (ValueError, IndexError):
            continue
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


# A. Nothing of the user's is touched ------------------------------------------------------------


def test_a_normal_run_touches_nothing_and_reviews_only_the_index(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
            "tests/test_calc.py": CALC_TESTS,
            ".gitignore": "*.log\nbuild/\n",
        },
    )
    confirm(repo)
    write(repo, {"calc.py": "def add(a, b):\n    return a + b  # stashed\n"})
    git(repo, "stash", "-q")
    stage(repo, {"calc.py": BROKEN_ADD})
    # Unstaged: the working tree has add fixed again; untracked: a failing test; ignored files.
    write(
        repo,
        {
            "calc.py": FIXED_ADD,
            "tests/test_untracked.py": "def test_untracked():\n    assert False\n",
            "debug.log": "ignored\n",
            "build/out.bin": bytes(range(256)),
        },
    )
    before = user_state(repo)
    assert before["stash"].strip(), "the stash entry is part of what is checked"
    assert "debug.log" in before["worktree"] and "build/out.bin" in before["worktree"]
    proc = review(repo, format="json")
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    report = proc.json
    # The staged calc.py was reviewed, not the fixed working-tree file, and no untracked test ran.
    assert [r["test"] for r in report["regressions"]] == ["tests/test_calc.py::test_add"]
    for run in report["runs"]:
        assert not any("test_untracked" in name for name in run["tests"] or {})
    assert user_state(repo) == before
    # Served from the cache the second time: still nothing touched.
    again = review(repo, format="json").json
    assert all(r["cached"] for r in again["runs"] if r["name"] == "test")
    assert user_state(repo) == before


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.usefixtures("kill_leftovers")
def test_an_interrupted_run_exits_130_kills_the_command_and_touches_nothing(tmp_path, sig):
    hang, marker = tmp_path / "hang", tmp_path / "started"
    shell_pid, child_pid = tmp_path / "shell.pid", tmp_path / "child.pid"
    hang.touch()
    command = (
        f"if [ -e {hang} ]; then echo $$ > {shell_pid}; sleep 300 & echo $! > {child_pid}; "
        f"touch {marker}; sleep 300; fi; {PYTEST}"
    )
    repo = _project(tmp_path, eyeful_config(command, test_one=f"{PYTEST} {{test}}"))
    stage(repo, {"calc.py": BROKEN_ADD})
    write(repo, {"notes.txt": "untracked\n"})
    before = user_state(repo)
    # The console script itself, so that the signal reaches eyeful's python process (`git eyeful`
    # would put a git process in between).
    proc = subprocess.Popen(
        [GIT_EYEFUL],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(marker, proc)
        pids = [_read_pid(shell_pid), _read_pid(child_pid)]
        assert all(_alive(pid) for pid in pids)
        started = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, out + err
    assert time.monotonic() - started < 30
    assert [line for line in err.splitlines() if line.strip()] == [INTERRUPTED]
    assert out == ""
    for pid in pids:
        assert _gone(pid), f"process {pid} of the interrupted command is still running"
    assert user_state(repo) == before
    # The interrupted run left nothing half-done: the next run reviews the change normally.
    hang.unlink()
    again = review(repo, format="json")
    assert again.exit_code == 1, again.stdout + again.stderr
    regressions = again.json["regressions"]
    assert [r["test"] for r in regressions] == ["tests/test_calc.py::test_add"]
    assert user_state(repo) == before


@pytest.mark.parametrize("ignored", [True, False], ids=["under-nohup", "at-a-terminal"])
def test_a_hangup_ignored_by_whoever_started_eyeful_stays_ignored(tmp_path, ignored):
    """`nohup git eyeful` (or any start with SIGHUP ignored) asks that a hangup not stop it, as
    Python itself keeps an ignored SIGINT ignored: the review goes on to its verdict. Without
    nohup, a hangup interrupts the review like Ctrl-C."""
    marker = tmp_path / "started"
    command = f"touch {marker}; sleep 2; {PYTEST}"
    repo = _project(tmp_path, eyeful_config(command))
    stage(repo, {"calc.py": FIXED_ADD})
    start = "import os, signal, sys; "
    if ignored:
        start += "signal.signal(signal.SIGHUP, signal.SIG_IGN); "
    start += "os.execv(sys.argv[1], sys.argv[1:])"
    proc = subprocess.Popen(
        [PYTHON, "-c", start, GIT_EYEFUL], cwd=repo, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _wait_for(marker, proc)
        proc.send_signal(signal.SIGHUP)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if ignored:
        assert proc.returncode == 0, out + err
        assert "**eyeful: clean**" in out, out
    else:
        assert proc.returncode == 130, out + err
        assert INTERRUPTED in err


@pytest.mark.usefixtures("kill_leftovers")
def test_a_hanging_command_times_out_exit_3_and_kills_its_group(tmp_path):
    child_pid, stubborn = tmp_path / "child.pid", tmp_path / "stubborn.sh"
    # The background child ignores SIGTERM, so only the SIGKILL that follows can end it.
    stubborn.write_text("trap '' TERM INT HUP\nwhile :; do sleep 1; done\n")
    command = f"sh {stubborn} & echo $! > {child_pid}; sleep 300"
    repo = _project(tmp_path, eyeful_config(command, extra="timeout = 2"))
    stage(repo, {"calc.py": BROKEN_ADD})
    before = user_state(repo)
    started = time.monotonic()
    proc = review(repo)
    elapsed = time.monotonic() - started
    pid = _read_pid(child_pid)
    assert proc.exit_code == 3, proc.stdout + proc.stderr
    assert elapsed < 60
    uncertainty = proc.stdout.split("### Uncertainty")[1]
    assert "the tests could not run on the change: timed out after 2s" in uncertainty
    assert "tests on the change: ERROR" in proc.stdout
    assert _gone(pid), "the SIGTERM-proof child of the timed-out command survived"
    assert user_state(repo) == before


def test_a_test_that_hangs_is_named_where_the_timeout_stopped_it(tmp_path):
    """helper-58: a pytest run killed at `timeout` was reported as a session that "never
    reached its end (the process was killed or exited early, as with os._exit)": the timeout
    went unsaid. The reason says it, the setting, and the first test without a result."""
    hangs = "import time\n\n\ndef test_hangs():\n    time.sleep(300)\n"
    files = {"pyproject.toml": eyeful_config(extra="timeout = 5"), "pytest.ini": PYTEST_INI,
             "tests/test_hang.py": hangs}  # fmt: skip
    repo = make_repo(tmp_path / "repo", files)
    confirm(repo)
    stage(repo, {"README.md": "hangs\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.stdout
    [run] = proc.json["runs"]
    assert run["status"] == "ERROR", run
    assert run["reason"].startswith("timed out after 5s (`timeout` in [tool.eyeful])"), run
    assert "the first test without a result: `tests/test_hang.py::test_hangs`" in run["reason"]


LEAVES_UNREADABLE = """import os


def test_leaves_a_private_directory():
    os.makedirs("scratch/private")
    open("scratch/private/data", "w").close()
    os.chmod("scratch/private", 0)
    assert False, "failed before it set the mode back"
"""


@pytest.mark.skipif(
    os.geteuid() == 0 and shutil.which("setpriv") is None,
    reason="as root, the review must run as another user (util-linux setpriv)",
)
def test_a_directory_a_test_left_unreadable_breaks_no_later_review(tmp_path, monkeypatch):
    """helper-58: a failing test left `scratch/private` at mode 0 in eyeful's worktree; for a
    user other than root, `git clean` could not remove it, and every later review ended with
    "git clean failed" (exit 2). Root reads anything, so as root the reviews run as nobody."""
    top = Path(tempfile.mkdtemp(prefix="eyeful-user-", dir=SYSTEM_TMP))  # (not root's alone)
    try:
        top.chmod(0o755)
        home = top / "home"
        home.mkdir()
        repo = python_project(top / "repo")
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
        confirm(repo)
        env = {**os.environ, "NO_COLOR": "1"}
        prefix: list[str] = []
        if os.geteuid() == 0:
            subprocess.run(["chown", "-R", "65534:65534", str(top)], check=True)
            prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]

        def review_as_user() -> subprocess.CompletedProcess[str]:
            return subprocess.run([*prefix, GIT_EYEFUL, "--format", "json"], cwd=repo,
                                  env=env, capture_output=True, text=True, check=False)  # fmt: skip

        write(repo, {"tests/test_leaves.py": LEAVES_UNREADABLE})
        subprocess.run([*prefix, "git", "add", "-A"], cwd=repo, env=env, check=True)
        first = review_as_user()
        assert first.returncode in (0, 1, 3), first.stderr
        (repo / "tests" / "test_leaves.py").unlink()
        write(repo, {"README.md": "calc\n"})
        subprocess.run([*prefix, "git", "add", "-A"], cwd=repo, env=env, check=True)
        second = review_as_user()
        assert second.returncode == 0, second.stderr
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", str(top)], check=False)
        shutil.rmtree(top, ignore_errors=True)


FRESH_TEST = """from pathlib import Path

LOG = Path({log!r})


def test_each_run_sees_exactly_its_tree():
    stray = Path("stray.txt")  # untracked: must be gone by the next checkout
    assert not stray.exists()
    stray.write_text("left behind")
    warm = Path("warm") / "count"  # ignored: stays, as a virtualenv would
    warm.parent.mkdir(exist_ok=True)
    count = int(warm.read_text()) + 1 if warm.exists() else 1
    warm.write_text(str(count))
    with LOG.open("a") as handle:
        handle.write(f"{{count}}\\n")
"""


def test_a_reused_worktree_drops_untracked_leftovers_and_keeps_ignored_files(tmp_path):
    log = tmp_path / "warm.log"
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": PYTEST_INI,
            ".gitignore": "warm/\n",
            "tests/test_fresh.py": FRESH_TEST.format(log=str(log)),
        },
    )
    confirm(repo)
    for n in range(3):
        stage(repo, {"notes.txt": f"{n}\n"})
        proc = review(repo, format="json")
        assert proc.exit_code == 0, proc.stdout + proc.stderr
        runs = proc.json["runs"]
        assert [(r["side"], r["status"]) for r in runs] == [("change", "PASSED")]
    assert log.read_text().split() == ["1", "2", "3"]
    assert not (repo / "stray.txt").exists() and not (repo / "warm").exists()


# B. Process groups: no orphans ------------------------------------------------------------------


@pytest.mark.parametrize(
    "redirect",
    ["> /dev/null 2>&1", ""],
    ids=["child-closed-the-pipe", "child-holds-the-pipe"],
)
@pytest.mark.usefixtures("kill_leftovers")
def test_a_passing_command_leaves_no_background_child(tmp_path, redirect):
    child_pid = tmp_path / "child.pid"
    command = f"sleep 300 {redirect} & echo $! > {child_pid}; echo started; exit 0"
    repo = _project(tmp_path, eyeful_config(command))
    stage(repo, {"calc.py": FIXED_ADD})
    proc = review(repo, format="json")
    pid = _read_pid(child_pid)
    assert proc.exit_code == 0, proc.stdout + proc.stderr
    # (a run that names no test is compared with the base's once: eyeful/unreached.py)
    [run] = [r for r in proc.json["runs"] if r["side"] == "change"]
    assert run["status"] == "PASSED"
    assert run["duration"] < 30  # a child holding the output open does not keep eyeful waiting
    assert "started" in run["tail"]
    assert _gone(pid), "the background child of a finished command is still running"


@pytest.mark.usefixtures("kill_leftovers")
def test_a_timed_out_command_and_its_background_child_are_killed(tmp_path):
    shell_pid, child_pid = tmp_path / "shell.pid", tmp_path / "child.pid"
    command = f"echo $$ > {shell_pid}; sleep 300 & echo $! > {child_pid}; sleep 300"
    repo = _project(tmp_path, eyeful_config(command, extra="timeout = 2"))
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    pids = [_read_pid(shell_pid), _read_pid(child_pid)]
    assert proc.exit_code == 3, proc.stdout + proc.stderr
    [run] = proc.json["runs"]
    assert (run["status"], run["reason"]) == ("ERROR", "timed out after 2s")
    for pid in pids:
        assert _gone(pid)


def test_a_forked_eyeful_marks_its_commands_with_tokens_of_its_own():
    """The token that marks a command's processes for killing is unique to the eyeful process
    that made it, even for a fork of a process that had imported eyeful or made tokens already:
    a shared token would let one run kill another's."""
    code = (
        "import os\n"
        "from eyeful import reaper\n"
        "def child():\n"
        "    r, w = os.pipe()\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os.write(w, reaper.new_token().encode())\n"
        "        os._exit(0)\n"
        "    os.close(w)\n"
        "    os.waitpid(pid, 0)\n"
        "    print(pid, os.read(r, 200).decode())\n"
        "child()\n"
        "print(os.getpid(), reaper.new_token())\n"
        "child()\n"
    )
    out = subprocess.run(
        [PYTHON, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    pids, tokens = out[0::2], out[1::2]
    for pid, token in zip(pids, tokens, strict=True):
        assert token.startswith(f"{pid}-"), (pid, token)
    assert len({token.rsplit("-", 1)[0] for token in tokens}) == 3, tokens


# C. Run records ---------------------------------------------------------------------------------


def test_runs_record_status_exit_code_duration_and_tail(tmp_path):
    script = (
        "import sys\n"
        "print('x' * 19990)\n"
        "print('LAST LINE')\n"
        "sys.exit(0 if open('mode.txt').read().strip() == 'pass' else 3)\n"
    )
    command = f"{shlex.quote(PYTHON)} check.py"
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(command, extra="reruns = 1"),
            "check.py": script,
            "mode.txt": "pass\n",
        },
    )
    confirm(repo)
    stage(repo, {"mode.txt": "fail\n"})
    report = review(repo, format="json").json
    change, base = report["runs"]
    assert (change["side"], change["status"], change["exit_code"]) == ("change", "FAILED", 3)
    assert (base["side"], base["status"], base["exit_code"]) == ("base", "PASSED", 0)
    expected_tail = ("x" * 19990 + "\nLAST LINE\n")[-8000:]
    for run in (change, base):
        assert run["name"] == "test"
        assert run["command"] == command
        assert 0 < run["duration"] < 60
        assert run["reason"] is None
        assert run["tail"] == expected_tail
        assert run["cached"] is False
    assert report["exit_code"] == 1


def test_a_command_killed_by_a_signal_is_failed_with_the_signal_as_reason(tmp_path):
    repo = _project(tmp_path, eyeful_config("echo dying; kill -9 $$"))
    stage(repo, {"calc.py": FIXED_ADD})
    report = review(repo, format="json").json
    change = report["runs"][0]
    assert change["status"] == "FAILED"
    assert change["exit_code"] == -9
    assert change["reason"] == "killed by SIGKILL"
    assert "dying" in change["tail"]


def test_a_command_that_cannot_start_is_an_error_with_its_reason_and_not_cached(tmp_path):
    repo = _project(tmp_path, eyeful_config("no-such-command-xyz --flag"))
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.stdout + proc.stderr
    report = proc.json
    [run] = report["runs"]
    assert run["status"] == "ERROR"
    assert run["exit_code"] == 127
    assert "could not start" in run["reason"]
    assert "no-such-command-xyz" in run["tail"] and "not found" in run["tail"]
    assert any("could not start" in u["text"] and u["unverified"] for u in report["uncertainty"])
    md = review(repo).stdout
    assert "tests on the change: ERROR" in md
    # An error says nothing about the tree, so it is tried again rather than served from cache.
    again = review(repo, format="json").json
    assert [r["cached"] for r in again["runs"]] == [False]


# D. GIT_* variables from hooks ------------------------------------------------------------------


def _env_names(path: Path) -> set[str]:
    return {line.split("=", 1)[0] for line in path.read_text().splitlines() if "=" in line}


def test_hook_git_variables_reach_neither_the_worktrees_nor_the_commands(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    envfile, toplevel = outside / "env.txt", outside / "toplevel.txt"
    # `git add -A` in the project command would write the hook's index if GIT_* leaked through.
    command = f"env > {envfile}; git rev-parse --show-toplevel > {toplevel}; git add -A; {PYTEST}"
    repo = _project(tmp_path, eyeful_config(command, test_one=f"{PYTEST} {{test}}"))
    # The change is staged in another index, as `git commit -a` or `git commit <path>` do.
    other_index = outside / "next-index"
    shutil.copyfile(repo / ".git" / "index", other_index)
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "calc.py", env={**os.environ, "GIT_INDEX_FILE": str(other_index)})
    assert git(repo, "diff", "--cached", "--name-only") == ""  # the user's index has no change
    before = user_state(repo)
    other_before = other_index.read_bytes()
    env = {
        **os.environ,
        "GIT_INDEX_FILE": str(other_index),
        "GIT_DIR": ".git",
        "GIT_WORK_TREE": str(repo),
        "GIT_PREFIX": "",
    }
    proc = review(repo, env=env, format="json")
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    assert [r["test"] for r in proc.json["regressions"]] == ["tests/test_calc.py::test_add"]
    assert user_state(repo) == before
    assert other_index.read_bytes() == other_before
    names = _env_names(envfile)
    assert "PATH" in names  # the file is the command's environment
    assert not names & {"GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE", "GIT_PREFIX"}
    assert Path(toplevel.read_text().strip()) != repo
    assert (repo / ".git" / "eyeful" / "worktrees") in Path(toplevel.read_text().strip()).parents


def test_as_a_pre_commit_hook_of_commit_a_the_regression_blocks_and_nothing_changes(tmp_path):
    envfile = tmp_path / "env.txt"
    repo = _project(tmp_path, eyeful_config(f"env > {envfile}; git add -A; {PYTEST}"))
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nexec git eyeful\n")
    hook.chmod(0o755)
    write(repo, {"calc.py": BROKEN_ADD})  # unstaged: only `commit -a` makes it the change
    before = user_state(repo)
    result = subprocess.run(
        ["git", "commit", "-a", "-q", "-m", "break add"],
        cwd=repo,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode != 0, "the hook let a regression through"
    # Without test_one it cannot be confirmed alone: exit 3, which stops the commit too.
    assert "`tests/test_calc.py::test_add` failed on the change" in result.stdout + result.stderr
    assert user_state(repo) == before
    assert not _env_names(envfile) & {"GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE"}


# E. Concurrent runs -----------------------------------------------------------------------------

SLOW_CONFTEST = """import os, time
from pathlib import Path

LOG = Path({log!r})


def pytest_sessionstart(session):
    with LOG.open("a") as handle:
        handle.write(f"start {{os.getpid()}} {{time.time()}} {{os.getcwd()}}\\n")
    time.sleep(0.5)  # long enough that two sessions in one worktree would overlap


def pytest_sessionfinish(session, exitstatus):
    with LOG.open("a") as handle:
        handle.write(f"end {{os.getpid()}} {{time.time()}} {{os.getcwd()}}\\n")
"""


def _sessions(log: Path) -> list[tuple[float, float, str]]:
    starts: dict[str, tuple[float, str]] = {}
    out = []
    for line in log.read_text().splitlines():
        kind, pid, when, cwd = line.split(" ", 3)
        if kind == "start":
            starts[pid] = (float(when), cwd)
        else:
            began, where = starts.pop(pid)
            assert where == cwd
            out.append((began, float(when), cwd))
    assert not starts, "a test session never finished"
    return out


def _summary(report: dict) -> tuple:
    return (
        report["exit_code"],
        report["outcome"],
        [(f["test"], f["kind"], f["on_change"], f["on_base"]) for f in report["regressions"]],
        [(f["test"], f["kind"]) for f in report["other_failures"]],
        sorted((r["side"], r["name"], r["status"], r["exit_code"]) for r in report["runs"]),
    )


def test_concurrent_runs_get_separate_worktrees_identical_results_and_a_sound_cache(tmp_path):
    log = tmp_path / "sessions.log"
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(extra="reruns = 1"),
            "pytest.ini": PYTEST_INI,
            "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
            "tests/test_calc.py": CALC_TESTS,
            "conftest.py": SLOW_CONFTEST.format(log=str(log)),
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    before = user_state(repo)
    procs = [
        subprocess.Popen(
            ["git", "eyeful", "--format", "json"],
            cwd=repo,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=240) for p in procs]
    reports = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 1, out + err
        reports.append(json.loads(out))
    assert _summary(reports[0]) == _summary(reports[1])
    assert [f["test"] for f in reports[0]["regressions"]] == ["tests/test_calc.py::test_add"]
    # Never two test sessions in one worktree at a time.
    sessions = _sessions(log)
    for i, (start_a, end_a, cwd_a) in enumerate(sessions):
        for start_b, end_b, cwd_b in sessions[i + 1 :]:
            if cwd_a == cwd_b:
                assert end_a <= start_b or end_b <= start_a, f"two sessions shared {cwd_a}"
    # The cache is whole: every entry parses and nothing half-written is left.
    cache = repo / ".git" / "eyeful" / "cache"
    entries = list(cache.rglob("*.json"))
    assert entries
    for entry in entries:
        assert isinstance(json.loads(entry.read_text()), dict)
    assert not [p for p in cache.rglob(".tmp-*")]
    third = review(repo, format="json").json
    # The suite comes from the cache; a regression's confirmation is always live.
    assert [(r["name"], r["cached"]) for r in third["runs"]] == [
        ("test", True), ("test_one", False), ("test_one", False)
    ]  # fmt: skip
    assert _summary(third) == _summary(reports[0])
    assert len(_sessions(log)) == len(sessions) + 2  # the two confirmation runs
    assert user_state(repo) == before


# F. Setup runs when its command or inputs change ------------------------------------------------


def _setup_project(tmp_path: Path, setup: str, extra: str = "", test: str = PYTEST) -> Path:
    config = f"{extra}\n[commands]\nsetup = {setup!r}\ntest = {test!r}\n"
    repo = make_repo(
        tmp_path / "repo",
        {
            ".eyeful.toml": config,
            "pytest.ini": PYTEST_INI,
            "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
            "tests/test_calc.py": CALC_TESTS,
            "requirements.txt": "six\n",
            "deps/a.cfg": "a\n",
        },
    )
    confirm(repo)
    return repo


def _review_runs(repo: Path) -> list[tuple[str, str, str]]:
    proc = review(repo, format="json")
    assert proc.exit_code in (0, 1, 3), proc.stdout + proc.stderr
    return [(r["side"], r["name"], r["status"]) for r in proc.json["runs"]]


def _lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def test_setup_runs_first_and_again_only_when_its_command_or_inputs_change(tmp_path):
    counter = tmp_path / "counter"
    repo = _setup_project(tmp_path, f"echo x >> {counter}")
    setup_and_test = [("change", "setup", "PASSED"), ("change", "test", "PASSED")]
    test_only = [("change", "test", "PASSED")]
    steps: list[tuple[dict[str, str], list[tuple[str, str, str]], int]] = [
        ({"calc.py": FIXED_ADD}, setup_and_test, 1),  # the worktree's first test
        ({"notes.txt": "1\n"}, test_only, 1),
        ({"requirements.txt": "six\nattrs\n"}, setup_and_test, 2),
        ({"src/notes.txt": "2\n"}, test_only, 2),
        ({"requirements-dev.txt": "pytest\n"}, setup_and_test, 3),
        ({"pyproject.toml": "[project]\nname = 'x'\n"}, setup_and_test, 4),
        ({"deps/a.cfg": "b\n"}, test_only, 4),  # not a default input
        # What setup compiles (an extension built in place, git-ignored, kept in the worktree),
        # at any depth: the base's build must not serve the change.
        ({"src/ext/fast.c": "int add;\n"}, setup_and_test, 5),
        ({"src/ext/notes.md": "1\n"}, test_only, 5),
    ]
    for files, runs, count in steps:
        stage(repo, files)
        assert _review_runs(repo) == runs, files
        assert len(_lines(counter)) == count, files
    # A changed setup command (confirmed again) runs again on an unchanged set of inputs.
    (repo / ".eyeful.toml").write_text(
        f"[commands]\nsetup = 'echo y >> {counter}'\ntest = {PYTEST!r}\n"
    )
    confirm(repo)
    stage(repo, {"notes.txt": "3\n"})
    assert _review_runs(repo) == setup_and_test
    assert _lines(counter) == ["x", "x", "x", "x", "x", "y"]
    stage(repo, {"notes.txt": "4\n"})
    assert _review_runs(repo) == test_only
    assert len(_lines(counter)) == 6


def test_setup_runs_for_the_base_when_its_inputs_differ_from_the_change(tmp_path):
    counter = tmp_path / "counter"
    # The base's whole suite (no test_one derived behind `env`): one setup, one test run there.
    repo = _setup_project(tmp_path, f"echo x >> {counter}", test=f"env {PYTEST}")
    stage(repo, {"calc.py": FIXED_ADD})
    _review_runs(repo)
    assert len(_lines(counter)) == 1
    # A failing change with new requirements: setup for the change, and again for the base.
    stage(repo, {"calc.py": BROKEN_ADD, "requirements.txt": "six\nattrs\n"})
    assert _review_runs(repo) == [
        ("change", "setup", "PASSED"),
        ("change", "test", "FAILED"),
        ("base", "setup", "PASSED"),
        ("base", "test", "PASSED"),
    ]
    assert len(_lines(counter)) == 3


def test_setup_inputs_are_configurable(tmp_path):
    counter = tmp_path / "counter"
    repo = _setup_project(tmp_path, f"echo x >> {counter}", extra='setup_inputs = ["deps/*.cfg"]')
    stage(repo, {"calc.py": FIXED_ADD})
    _review_runs(repo)
    assert len(_lines(counter)) == 1
    stage(repo, {"requirements.txt": "attrs\n", "pyproject.toml": "[project]\nname = 'x'\n"})
    assert _review_runs(repo) == [("change", "test", "PASSED")]
    assert len(_lines(counter)) == 1
    stage(repo, {"deps/a.cfg": "changed\n"})
    assert _review_runs(repo) == [("change", "setup", "PASSED"), ("change", "test", "PASSED")]
    assert len(_lines(counter)) == 2
    stage(repo, {"deps/b.cfg": "new\n"})
    assert _review_runs(repo) == [("change", "setup", "PASSED"), ("change", "test", "PASSED")]
    assert len(_lines(counter)) == 3


def test_a_failed_setup_is_exit_3_and_is_tried_again_next_time(tmp_path):
    counter, fail = tmp_path / "counter", tmp_path / "fail"
    repo = _setup_project(tmp_path, f"echo x >> {counter} && test ! -e {fail}")
    fail.touch()
    stage(repo, {"calc.py": FIXED_ADD})
    proc = review(repo)
    assert proc.exit_code == 3, proc.stdout + proc.stderr
    assert "setup failed on the change" in proc.stdout.split("### Uncertainty")[1]
    assert "setup on the change: FAILED" in proc.stdout
    fail.unlink()
    stage(repo, {"notes.txt": "1\n"})  # inputs unchanged, but the last setup did not succeed
    assert _review_runs(repo) == [("change", "setup", "PASSED"), ("change", "test", "PASSED")]
    assert len(_lines(counter)) == 2


# Where start-up is interrupted: a profile hook sends SIGINT to the process itself when the
# named function of the named file is first called, so each point is hit exactly (no timing).
INTERRUPT_AT = """
import os, signal, sys
target_file, target_function = sys.argv[1], sys.argv[2]
def hook(frame, event, arg):
    code = frame.f_code
    if event == "call" and code.co_name == target_function and code.co_filename.endswith(
        target_file
    ):
        sys.setprofile(None)
        os.kill(os.getpid(), signal.SIGINT)
sys.argv = ["git-eyeful", *sys.argv[3:]]
sys.setprofile(hook)
from eyeful.cli.launch import main
sys.exit(main())
"""


@pytest.mark.parametrize(
    "where",
    [
        ("eyeful/cli/app.py", "main"),  # typer not imported yet
        ("typer/main.py", "get_command"),  # typer reads the commands' signatures
        ("typer/core.py", "_main"),  # typer's own main: it turned this into a silent 130
        ("click/core.py", "make_context"),  # parsing the options
        ("click/core.py", "invoke"),  # typer calls the command
        ("eyeful/cli/reviewcmd.py", "prepare"),  # the review starts
    ],
    ids=lambda where: f"{where[0]}:{where[1]}",
)
def test_an_interrupt_at_any_point_of_start_up_is_one_line_and_130(tmp_path, where):
    repo = _project(tmp_path)
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "calc.py")
    script = tmp_path / "interrupt_at.py"
    script.write_text(INTERRUPT_AT, encoding="utf-8")
    before = user_state(repo)
    proc = subprocess.run(
        [PYTHON, str(script), *where, "--no-cache"], cwd=repo, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("eyeful: error: interrupted"), proc.stderr
    assert proc.stdout == ""
    assert user_state(repo) == before
