"""A review given again (eyeful/cli/replay.py): only while nothing it read has changed, never a
block.

Whether a run was replayed is read from the process itself: a replay never imports pygit2
(`python -X importtime`). Every other run is the full review, and its verdict must be the one
the changed input calls for.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from eyeful.cli.replay import FILE
from tests.conftest import seal
from tests.gitrepo import (
    BROKEN_ADD,
    confirm,
    eyeful,
    eyeful_config,
    git,
    python_project,
    run,
    user_state,
    write,
)

GIT_EYEFUL = str(Path(sys.executable).parent / "git-eyeful")
SWAPPED = "def add(a, b):\n    return b + a\n\n\ndef mul(a, b):\n    return a * b\n"


def plain_run(
    repo: Path, env: dict[str, str] | None = None, args: list[str] | None = None
) -> tuple[subprocess.CompletedProcess[str], bool]:
    """`git-eyeful` (no arguments, or ``args``); whether it was a replay (no pygit2 imported).

    Run directly, not as `git eyeful`: git puts its exec-path on PATH, and PATH is part of what
    a cached run depends on, so every run here is direct (see `direct`)."""
    proc, imported = run_with_imports(repo, env, args)
    return proc, "pygit2" not in imported


def run_with_imports(
    repo: Path, env: dict[str, str] | None = None, args: list[str] | None = None
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`git-eyeful` (no arguments, or ``args``) under `python -X importtime`; the modules it
    imported (stderr without the import lines)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", GIT_EYEFUL, *(args or [])],
        cwd=repo,
        env=env,
        text=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=180,
    )
    imports = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert imports, proc.stderr  # the trace is there, so "no pygit2" means something
    imported = {line.split("|")[-1].strip() for line in imports}
    rest = "\n".join(line for line in proc.stderr.splitlines() if not line.startswith("import "))
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout, rest), imported


def direct(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`git-eyeful ARGS` started the way `plain_run` starts it (the full review, typer)."""
    return subprocess.run([GIT_EYEFUL, *args], cwd=cwd, env=env, text=True, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=180)  # fmt: skip


def _copy_without_worktrees(source: Path, target: Path) -> None:
    shutil.copytree(
        source,
        target,
        symlinks=True,
        ignore=lambda d, names: [n for n in names if Path(d, n).match("*/.git/eyeful/worktrees")
                                 or Path(d, n).match("*/.git/worktrees")],
    )  # fmt: skip


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A project with a harmless staged change whose review is remembered (built once).

    The replay keys on the repository's path and the user's HOME, so every test gets the very
    same path and HOME back (`remembered`): the repository is saved without eyeful's worktrees,
    the HOME with its confirmation."""
    root = tmp_path_factory.mktemp("template")
    with pytest.MonkeyPatch.context() as mp:
        home = seal(tmp_path_factory, mp)
        config = eyeful_config(extra='env = ["CALC_MODE"]')
        repo = python_project(root / "repo", config)
        write(repo, {"calc.py": SWAPPED})
        git(repo, "add", "-A")
        confirm(repo)
        first, first_imports = run_with_imports(repo)
        assert first.returncode == 0, first.stdout + first.stderr
        cached, replayed = plain_run(repo)  # served from the cache: remembered
        assert cached.returncode == 0 and not replayed, cached.stdout + cached.stderr
        assert "cached: ran" in cached.stdout
        _copy_without_worktrees(repo, root / "saved-repo")
        shutil.copytree(home, root / "saved-home", symlinks=True)
        yield {"repo": repo, "home": home, "saved-repo": root / "saved-repo",
               "saved-home": root / "saved-home", "first-imports": first_imports}  # fmt: skip


@pytest.fixture
def remembered(template: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Path:
    """The template's repository and HOME as they were when its review was remembered, at the
    same paths: the next plain run replays (checked here, so every test starts from a replay)."""
    repo, home = template["repo"], template["home"]
    for live, saved in ((repo, template["saved-repo"]), (home, template["saved-home"])):
        shutil.rmtree(live)
        shutil.copytree(saved, live, symlinks=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    proc, replayed = plain_run(repo)
    assert proc.returncode == 0 and replayed, proc.stdout + proc.stderr
    return repo


def test_a_rerun_with_nothing_changed_is_given_again_as_the_full_review_gives_it(
    remembered: Path,
) -> None:
    before = user_state(remembered)
    proc, replayed = plain_run(remembered)
    assert replayed, proc.stderr
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert user_state(remembered) == before
    full = direct("--format", "markdown", cwd=remembered)  # options given: the full review
    assert full.returncode == 0
    assert proc.stdout == full.stdout
    assert proc.stdout.startswith("**eyeful: clean**")


# What the replay must never import: together they cost more than the whole replay budget
# (benchmarks/bench_startup.py's baseline is importing exactly these).
HEAVY = ("pydantic", "typer", "rich", "pygit2")

# `git-eyeful` as its console script starts it, then which modules the process holds: the replay
# is told by what ran (eyeful/cli/replay.py, and no review), the heavy ones by name.
_REPLAY_AND_MODULES = """
import json, sys
from eyeful.cli.launch import main
code = main()
sys.stdout.flush()
held = {"replayed": "eyeful.cli.replay" in sys.modules and "eyeful.review" not in sys.modules,
        "heavy": sorted(name for name in HEAVY if name in sys.modules)}
sys.stderr.write("modules: " + json.dumps(held) + "\\n")
sys.exit(code)
""".replace("HEAVY", repr(HEAVY))


def test_a_replay_imports_no_pydantic_typer_rich_or_pygit2(remembered: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", _REPLAY_AND_MODULES], cwd=remembered, text=True,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=180)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("**eyeful: clean**")
    line = proc.stderr.splitlines()[-1]
    held = json.loads(line.removeprefix("modules: "))
    assert held["replayed"], proc.stderr
    assert held["heavy"] == [], f"the replay imported {held['heavy']}"


# What a review of a passing change, with no findings and no agent, never needs: the command
# line's parser (typer, click), the terminal's (rich: stderr is no terminal here), the agents,
# the eval, SARIF and its schema, a thread pool (and the logging it imports): nothing runs in
# parallel. Each costs start-up on every push (issue 37).
NOT_FOR_A_PASSING_REVIEW = (
    "typer", "click", "rich", "jsonschema", "eyeful.cli.app", "eyeful.agents", "eyeful.evaluate",
    "eyeful.sarif", "concurrent.futures", "logging",
)  # fmt: skip


def _unneeded(imported: set[str]) -> list[str]:
    return sorted(
        name
        for name in imported
        if any(name == top or name.startswith(f"{top}.") for top in NOT_FOR_A_PASSING_REVIEW)
    )


def test_a_review_of_a_passing_change_imports_only_what_it_needs(
    template: dict[str, Any],
) -> None:
    # The template's first run: the full review of a passing change, plain `git eyeful`.
    imported: set[str] = template["first-imports"]
    assert "eyeful.review" in imported  # the full review ran, so the absences mean something
    held = _unneeded(imported)
    assert held == [], f"a passing review imported {held}"


def test_format_json_alone_is_reviewed_without_typer(remembered: Path) -> None:
    from eyeful.cli.reviewcmd import ReviewOptions, quick_options

    proc, imported = run_with_imports(remembered, args=["--format", "json"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["outcome"] == "clean" and all(run["cached"] for run in report["runs"])
    assert "eyeful.review" in imported  # never a replay: only markdown is remembered
    held = _unneeded(imported)
    assert held == [], f"--format json imported {held}"
    assert quick_options(["--format=json"]) == ReviewOptions(output_format="json")
    for other in (["--format", "markdown"], ["--format", "json", "-j", "2"], ["--format"]):
        assert quick_options(other) is None  # typer's to parse


def _stage_broken(repo: Path) -> None:
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")


def _edit_config(repo: Path) -> None:
    path = repo / "pyproject.toml"
    path.write_text(path.read_text().replace("reruns = 1", "reruns = 2"), encoding="utf-8")


def _revoke(repo: Path) -> None:
    home = Path(subprocess.run(["sh", "-c", 'printf %s "$XDG_CONFIG_HOME"'], text=True,
                               capture_output=True, check=True).stdout)  # fmt: skip
    (home / "eyeful" / "confirmed").write_text("", encoding="ascii")


def _prompt_override(repo: Path) -> None:
    write(repo, {".eyeful/prompts/expert.md": "Find every bug.\n"})


def _commit(repo: Path) -> None:
    git(repo, "commit", "-q", "-m", "swap")


def _cache_entries(repo: Path) -> list[Path]:
    entries = sorted((repo / ".git" / "eyeful" / "cache" / "runs").rglob("*.json"))
    assert entries
    return entries


def _delete_cached_runs(repo: Path) -> None:
    for entry in _cache_entries(repo):
        entry.unlink()


def _touch_cached_run(repo: Path) -> None:
    for entry in _cache_entries(repo):
        entry.write_bytes(entry.read_bytes() + b"\n")


def _clean(repo: Path) -> None:
    assert eyeful("clean", cwd=repo).returncode == 0


def _merging(repo: Path) -> None:
    (repo / ".git" / "MERGE_HEAD").write_text(git(repo, "rev-parse", "HEAD"), encoding="ascii")


def _stage_same_tree_differently(repo: Path) -> None:
    # The same staged content, re-added: the index file's bytes may differ, the tree does not.
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    write(repo, {"calc.py": SWAPPED})
    git(repo, "add", "-A")


CHANGES: dict[str, tuple[Callable[[Path], None], int, str]] = {
    "a broken change staged": (_stage_broken, 1, "**eyeful: blocking**"),
    "the configuration edited, not confirmed again": (_edit_config, 3, "**eyeful: could not"),
    "the confirmation revoked": (_revoke, 3, "**eyeful: could not"),
    "a prompt override added": (_prompt_override, 3, "**eyeful: could not"),
    "the change committed": (_commit, 0, "**eyeful: nothing to review**"),
    "the cached runs deleted": (_delete_cached_runs, 0, "**eyeful: clean**"),
    "a cached run's bytes changed": (_touch_cached_run, 0, "**eyeful: clean**"),
    "eyeful's state cleaned": (_clean, 0, "**eyeful: clean**"),
    "a merge in progress": (_merging, 2, ""),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_any_change_to_what_the_review_read_runs_it_again(remembered: Path, change: str) -> None:
    mutate, code, opening = CHANGES[change]
    mutate(remembered)
    proc, replayed = plain_run(remembered)
    assert not replayed, proc.stdout
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert proc.stdout.startswith(opening), proc.stdout
    if change in ("the cached runs deleted", "eyeful's state cleaned"):
        assert "cached: ran" not in proc.stdout  # the suite really ran again


def test_a_variable_the_results_depend_on_runs_it_again(remembered: Path) -> None:
    env = {**os.environ, "CALC_MODE": "other"}  # named in [tool.eyeful] env
    proc, replayed = plain_run(remembered, env)
    assert not replayed
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cached: ran" not in proc.stdout  # the run cache keys on it too: the suite ran
    cached, replayed = plain_run(remembered, env)  # served from the cache: remembered
    assert not replayed and "cached: ran" in cached.stdout
    again, replayed = plain_run(remembered, env)
    assert replayed and again.stdout == cached.stdout
    back, replayed = plain_run(remembered)  # and the first value is not mistaken for it
    assert not replayed and back.returncode == 0


def test_a_variable_no_review_reads_does_not_stop_the_replay(remembered: Path) -> None:
    proc, replayed = plain_run(remembered, {**os.environ, "UNRELATED_TO_EYEFUL": "1"})
    assert replayed, proc.stdout
    assert proc.returncode == 0


def test_a_blocking_review_is_never_given_again(remembered: Path) -> None:
    _stage_broken(remembered)
    for _ in range(3):
        proc, replayed = plain_run(remembered)
        assert not replayed
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "confirmed alone" in proc.stdout or "alone" in proc.stdout


def test_under_pre_commit_a_range_of_commit_ids_is_given_again_with_its_hook_footer(
    remembered: Path,
) -> None:
    _commit(remembered)
    head = git(remembered, "rev-parse", "HEAD").strip()
    base = git(remembered, "rev-parse", "HEAD^").strip()
    env = {**os.environ, "PRE_COMMIT": "1", "PRE_COMMIT_FROM_REF": base, "PRE_COMMIT_TO_REF": head}
    runs = [plain_run(remembered, env) for _ in range(3)]
    # The pushed commit's tree is the one staged before: its suite run is cached already, so the
    # first review is remembered and the next ones are given again.
    assert "cached: ran" in runs[0][0].stdout
    assert [replayed for _, replayed in runs] == [False, True, True]
    assert runs[2][0].stdout == runs[1][0].stdout == runs[0][0].stdout
    assert "push" in runs[2][0].stdout.splitlines()[-1]


def test_a_range_naming_a_branch_is_never_given_again(remembered: Path) -> None:
    _commit(remembered)
    env = {**os.environ, "PRE_COMMIT": "1", "PRE_COMMIT_LOCAL_BRANCH": "main",
           "PRE_COMMIT_REMOTE_BRANCH": "refs/heads/main"}  # fmt: skip
    for _ in range(3):
        proc, replayed = plain_run(remembered, env)
        assert not replayed, proc.stdout
        assert proc.returncode in (0, 1, 3), proc.stdout + proc.stderr


def test_the_same_tree_staged_again_is_still_the_same_review(remembered: Path) -> None:
    _stage_same_tree_differently(remembered)
    first, _ = plain_run(remembered)
    assert first.returncode == 0 and "cached: ran" in first.stdout
    second, replayed = plain_run(remembered)
    assert replayed and second.stdout == first.stdout


def test_the_plain_hooks_command_line_is_given_again_as_typer_reads_it(remembered: Path) -> None:
    _commit(remembered)
    head = git(remembered, "rev-parse", "HEAD").strip()
    base = git(remembered, "rev-parse", "HEAD^").strip()
    hook_line = ["--hook", "--base", base, "--head", head]
    runs = [plain_run(remembered, args=hook_line) for _ in range(2)]
    assert [replayed for _, replayed in runs] == [False, True]
    # The same options in another order go through typer and the full review.
    full = direct("--base", base, "--hook", "--head", head, cwd=remembered)
    assert full.returncode == runs[1][0].returncode == 0
    assert runs[1][0].stdout == full.stdout
    assert "push" in full.stdout.splitlines()[-1]
    # The remembered review is the hook's: the same range asked without --hook is not it.
    other, replayed = plain_run(remembered, args=["--base", base, "--head", head])
    assert not replayed and other.stdout != full.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--hook", "--base", "HEAD^", "--head", "HEAD"],  # names, not ids: may move
        ["--hook", "--base", "0" * 39, "--head", "1" * 40],
        ["--hook", "--head", "1" * 40, "--base", "0" * 40],
        ["--hook", "--base", "0" * 40, "--head", "1" * 40, "--no-cache"],
    ],
    ids=["names", "short-id", "order", "more-options"],
)
def test_other_command_lines_are_never_given_again(remembered: Path, args: list[str]) -> None:
    _commit(remembered)
    for _ in range(2):
        proc, replayed = plain_run(remembered, args=args)
        assert not replayed, proc.stdout + proc.stderr


def test_a_repository_config_the_review_cannot_open_is_not_given_again(remembered: Path) -> None:
    # What `git fetch --filter=blob:none` writes: git reads on, libgit2 cannot open the
    # repository, so the full review stops (exit 2) rather than saying clean.
    git(remembered, "config", "core.repositoryformatversion", "1")
    git(remembered, "config", "extensions.partialClone", "origin")
    proc, replayed = plain_run(remembered)
    full = direct("--format", "markdown", cwd=remembered)
    assert full.returncode == 2, full.stdout + full.stderr
    assert not replayed, proc.stdout
    assert (proc.returncode, proc.stdout) == (full.returncode, full.stdout)


def _side_range(repo: Path) -> tuple[str, str, dict[str, str]]:
    """The change committed, and a commit `side` off its parent on a branch `side`: the pushed
    range side..head, as pre-commit gives it (its base is their merge-base)."""
    _commit(repo)
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "side", "HEAD^")
    write(repo, {"notes.txt": "side\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "side")
    side = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "main")
    env = {**os.environ, "PRE_COMMIT": "1", "PRE_COMMIT_FROM_REF": side, "PRE_COMMIT_TO_REF": head}
    return side, head, env


def _prune(repo: Path, branch: str) -> None:
    """The branch deleted and its commits pruned from the repository."""
    git(repo, "branch", "-q", "-D", branch)
    git(repo, "reflog", "expire", "--expire-unreachable=now", "--all")
    git(repo, "gc", "-q", "--prune=now")


def test_a_graft_that_moves_the_merge_base_runs_it_again(remembered: Path) -> None:
    side, head, env = _side_range(remembered)
    first, _ = plain_run(remembered, env)
    again, replayed = plain_run(remembered, env)
    assert replayed and again.stdout == first.stdout
    # libgit2 reads info/grafts: `side` without parents has no merge-base with head, so the
    # base is `side` itself.
    (remembered / ".git" / "info" / "grafts").write_text(f"{side}\n", encoding="ascii")
    proc, replayed = plain_run(remembered, env)
    full = direct("--format", "markdown", cwd=remembered, env=env)
    assert f"{side[:7]}..{head[:7]}" in full.stdout.splitlines()[0], full.stdout + full.stderr
    assert not replayed, proc.stdout
    assert (proc.returncode, proc.stdout) == (full.returncode, full.stdout)


def test_under_pre_commit_the_users_python_changing_runs_it_again(tmp_path: Path) -> None:
    """pre-commit runs eyeful from its own virtualenv, first on PATH; project commands get PATH
    without it (eyeful/shell.py `project_env`), so *their* `python` is the user's, and the
    run cache keys on that one. The user's virtualenv rebuilt on another interpreter (here: a
    `python` of its own: another file, the same interpreter behind it) is a new review."""
    import sysconfig

    hook_env = tmp_path / "pre-commit" / "repo1" / "py_env-python3"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(hook_env)], check=True)
    site = next(hook_env.glob("lib/python3*/site-packages"))
    ours = sysconfig.get_paths()["purelib"]  # eyeful and its dependencies
    (site / "eyeful.pth").write_text(f"import site; site.addsitedir({ours!r})\n", "utf-8")
    user_bin = tmp_path / "user" / "bin"
    user_bin.mkdir(parents=True)
    for name, body in (("py-with", f'exec {sys.executable} "$@"'),
                       ("py-without", f'exec {sys.executable} "$@"')):  # fmt: skip
        (user_bin / name).write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        (user_bin / name).chmod(0o755)
    (user_bin / "python").symlink_to("py-with")
    pytest = "python -m pytest -q -p no:cacheprovider"
    repo = python_project(tmp_path / "repo", eyeful_config(pytest, test_one=f"{pytest} {{test}}"))
    write(repo, {"calc.py": SWAPPED})
    git(repo, "add", "-A")
    confirm(repo)
    path = os.pathsep.join([str(hook_env / "bin"), str(user_bin), os.environ["PATH"]])
    env = {**os.environ, "PRE_COMMIT": "1", "PATH": path}
    hook = [str(hook_env / "bin" / "python"), "-X", "importtime", "-c",
            "import sys; from eyeful.cli.launch import main; sys.exit(main())"]  # fmt: skip

    def run() -> tuple[subprocess.CompletedProcess[str], bool]:
        argv = hook
        proc = subprocess.run(argv, cwd=repo, env=env, text=True, capture_output=True,
                              stdin=subprocess.DEVNULL, timeout=180)  # fmt: skip
        names = [line.split("|")[-1].strip() for line in proc.stderr.splitlines()
                 if line.startswith("import time:")]  # fmt: skip
        assert names, proc.stderr
        return proc, "pygit2" not in names

    runs = [run() for _ in range(3)]
    assert [replayed for _, replayed in runs] == [False, False, True]
    assert all(proc.returncode == 0 for proc, _ in runs)
    (user_bin / "python").unlink()
    (user_bin / "python").symlink_to("py-without")
    proc, replayed = run()
    assert not replayed, proc.stdout
    assert "cached" not in proc.stdout.splitlines()[2], proc.stdout  # the suite ran again
    again, replayed = run()  # with that python, served from the cache: remembered
    assert not replayed and again.stdout != proc.stdout
    last, replayed = run()
    assert replayed and last.stdout == again.stdout


def _held_in_print(repo: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`git-eyeful` started with its stdout a full pipe: it blocks printing its report, after the
    review and before remembering it. Returns the process and the pipe's read end."""
    import time

    read, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        while True:
            os.write(write_end, b"\0" * 4096)
    except BlockingIOError:
        os.set_blocking(write_end, True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # the report is written as it is printed
    proc = subprocess.Popen([GIT_EYEFUL], cwd=repo, env=env, stdout=write_end,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)  # fmt: skip
    os.close(write_end)
    deadline = time.monotonic() + 120
    while "pipe_write" not in Path(f"/proc/{proc.pid}/wchan").read_text():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    return proc, read


@pytest.mark.skipif(not Path("/proc/self/wchan").exists(), reason="needs Linux /proc")
def test_a_cache_entry_rewritten_during_the_review_is_not_remembered_as_served(
    remembered: Path,
) -> None:
    (remembered / ".git" / "eyeful" / "cache" / FILE).unlink()  # the next review records again
    proc, read = _held_in_print(remembered)
    # Meanwhile another run (`git eyeful --no-cache`, say) puts its own result under the key.
    for entry in _cache_entries(remembered):
        run = json.loads(entry.read_text(encoding="utf-8"))
        entry.write_text(json.dumps({**run, "duration": 99.0}), encoding="utf-8")
    while os.read(read, 1 << 16):
        pass
    os.close(read)
    assert proc.wait(timeout=120) == 0
    again, replayed = plain_run(remembered)
    full = direct("--format", "markdown", cwd=remembered)
    assert "took 99.0s" in full.stdout, full.stdout
    assert (again.returncode, again.stdout) == (full.returncode, full.stdout), replayed


def test_a_pushed_range_whose_base_is_gone_is_not_given_again(remembered: Path) -> None:
    side, _, env = _side_range(remembered)
    first, _ = plain_run(remembered, env)
    again, replayed = plain_run(remembered, env)
    assert replayed and again.stdout == first.stdout
    _prune(remembered, "side")
    assert run("git", "cat-file", "-e", side, cwd=remembered, check=False).returncode != 0
    proc, replayed = plain_run(remembered, env)
    full = direct("--format", "markdown", cwd=remembered, env=env)
    assert full.returncode == 3 and "not in this repository" in full.stderr, full.stderr
    assert not replayed, proc.stdout
    assert (proc.returncode, proc.stdout) == (full.returncode, full.stdout)


def test_a_remembered_text_with_control_characters_is_never_printed(remembered: Path) -> None:
    memo = remembered / ".git" / "eyeful" / "cache" / "replay.json"
    data = json.loads(memo.read_text(encoding="utf-8"))
    data["text"] = "\x1b]0;planted\x07" + data["text"]
    memo.write_text(json.dumps(data), encoding="utf-8")
    proc, replayed = plain_run(remembered)
    assert not replayed
    assert proc.returncode == 0 and "\x1b" not in proc.stdout


def test_the_plain_hooks_range_whose_base_is_gone_is_not_given_again(remembered: Path) -> None:
    gone, head, _ = _side_range(remembered)
    hook_line = ["--hook", "--base", gone, "--head", head]
    runs = [plain_run(remembered, args=hook_line) for _ in range(2)]
    assert [r.returncode for r, _ in runs] == [0, 0] and runs[1][1]
    _prune(remembered, "side")
    proc, replayed = plain_run(remembered, args=hook_line)
    assert not replayed
    assert proc.returncode == 3, proc.stdout + proc.stderr


def test_a_review_asks_each_interpreter_once(tmp_path: Path) -> None:
    """The replay's fingerprint and the runs' keys both cover the interpreters PATH gives
    (eyeful/environment.py): one review asks them once, not once for each (a version manager's
    shim costs about 150 ms of CPU a question). Counted by a `python` on PATH that notes each
    time it is asked what it is, then is the real one."""
    shims = tmp_path / "shims"
    shims.mkdir()
    asked = tmp_path / "asked"
    (shims / "python").write_text(
        f'#!/bin/sh\ncase "$*" in *eyeful-interpreter*) echo asked >> "{asked}";; esac\n'
        f'exec "{sys.executable}" "$@"\n'
    )
    (shims / "python").chmod(0o755)
    (shims / "python3").symlink_to("python")  # side by side, one file: one interpreter
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}
    repo = python_project(tmp_path / "repo")
    write(repo, {"calc.py": SWAPPED})
    git(repo, "add", "-A")
    confirm(repo)

    def questions() -> int:
        return len(asked.read_text().splitlines()) if asked.exists() else 0

    counts = []
    for _ in range(3):  # the tests run; served from the cache and remembered; given again
        before = questions()
        proc, replayed = plain_run(repo, env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        counts.append((questions() - before, replayed))
    assert counts == [(1, False), (1, False), (1, True)]
