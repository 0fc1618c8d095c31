"""The pre-push hooks, for real: pre-commit's `eyeful` hook and the plain `hooks/pre-push`.

pre-commit runs as the real `pre-commit` command: from the README's configuration it clones a
committed copy of this checkout and pip-installs it into a virtualenv of its own, exactly as a
user's pre-commit would (once per test session and worker: the tests that need that environment
share it); an installed pre-commit pre-push hook runs on a real `git push`. The plain hook is
installed with `git eyeful install-hook` and runs on real pushes to a local bare remote.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from eyeful.cli.precommit import confirm_hint
from tests.gitrepo import (
    CALC,
    CALC_TESTS,
    PYTEST,
    confirm,
    eyeful,
    eyeful_config,
    git,
    make_repo,
    python_project,
    run,
    user_state,
    write,
)

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent  # the test interpreter's bin: python, pytest, git-eyeful
PRE_COMMIT = BIN / "pre-commit"
SHIPPED_HOOK = ROOT / "hooks" / "pre-push"
MANIFEST = ROOT / ".pre-commit-hooks.yaml"

# What a user writes: `python` is whatever the user's PATH says, never eyeful's own interpreter.
USER_PYTEST = "python -m pytest -q -p no:cacheprovider"
USER_PYTEST_ONE = f"{USER_PYTEST} {{test}}"

EMPTY_TREE = "4b825dc"
WITH_SUB = CALC + "\n\ndef sub(a, b):\n    return a - b\n"
SUB_TESTS = "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"
BROKEN_ADD = WITH_SUB.replace("return a + b", "return a - b", 1)
REGRESSION = "`tests/test_calc.py::test_add` fails on the change and passes on the base"


# --- helpers ------------------------------------------------------------------------------------


def _no_git_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def add_remote(repo: Path) -> Path:
    remote = repo.parent / f"{repo.name}-remote.git"
    git(repo.parent, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    return remote


def remote_tip(remote: Path, ref: str) -> str:
    return run("git", "rev-parse", "-q", "--verify", ref, cwd=remote, check=False).stdout.strip()


def _combined(
    argv: list[str], repo: Path, env: dict[str, str] | None = None, timeout: float = 300
) -> tuple[subprocess.CompletedProcess[str], str]:
    """``argv`` run in ``repo`` with no input; the process and its stdout and stderr together
    (a hook's output reaches the user on either)."""
    proc = subprocess.run(argv, cwd=repo, env=env, text=True, capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=timeout)  # fmt: skip
    return proc, proc.stdout + proc.stderr


def _a_break_on_a_new_branch_is_stopped(
    repo: Path, target: str, env: dict[str, str] | None = None
) -> None:
    """`main` pushed to origin (the hook skipped), then a new branch `topic` that breaks `add`
    pushed to ``target`` (a URL, a remote's name): stopped, reviewed from `main`."""
    proc, out = push(repo, "--no-verify", "main", env=env)
    assert proc.returncode == 0, out
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "switch", "-q", "-c", "topic")
    tip = commit(repo, {"calc.py": BROKEN_ADD}, "break add")
    proc, out = _combined(["git", "push", target, "topic"], repo, env)
    assert proc.returncode != 0, out
    assert f"{base[:7]}..{tip[:7]}" in out, out
    assert REGRESSION in out, out


def push(
    repo: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], str]:
    return _combined(["git", "push", "origin", *args], repo, env)


def local_state(repo: Path, *, index_bytes: bool = True) -> dict[str, object]:
    """The user's worktree, index, HEAD and local refs: what a push must leave alone.

    The remote-tracking refs are the push's own business. Under pre-commit the index file's
    bytes are not comparable: pre-commit itself runs `git write-tree`, which rewrites the file
    with a cache-tree (even with a hook that does nothing), so there the index is compared entry
    by entry: every staged path, mode, blob and stage.
    """
    state = user_state(repo)
    for key in ("refs", "packed-refs", "for-each-ref"):
        del state[key]
    if not index_bytes:
        del state["index"]
    state["index entries"] = git(repo, "ls-files", "--stage", "--debug")
    state["local refs"] = git(repo, "for-each-ref", "refs/heads", "refs/tags", "refs/stash")
    return state


def leaky_env(repo: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment that points git at the user's repository, as a hook's environment can.

    Inherited by eyeful's own git calls in its worktrees, these would check trees out into the
    user's index and working tree.
    """
    return dict(
        os.environ if base is None else base,
        GIT_DIR=str(repo / ".git"),
        GIT_WORK_TREE=str(repo),
        GIT_INDEX_FILE=str(repo / ".git" / "index"),
    )


def make_user_dirty(repo: Path, *, unstaged: bool = True) -> None:
    """Staged, unstaged and untracked work in progress that no hook may touch.

    pre-commit itself stashes unstaged changes around every hook run (and so rewrites the index),
    so its tests leave those out: what is checked there is what eyeful does.
    """
    write(repo, {"staged.txt": "staged\n", "notes.txt": "untracked\n"})
    git(repo, "add", "staged.txt")
    if unstaged:
        write(repo, {"pytest.ini": "[pytest]\npythonpath = .\n\n"})


def tools_dir(path: Path, *names: str) -> Path:
    """A PATH directory with just these programs: no `python` in it."""
    path.mkdir()
    for name in names:
        found = shutil.which(name)
        assert found, f"{name} is not on PATH"
        (path / name).symlink_to(found)
    return path


# --- the manifest -------------------------------------------------------------------------------


def test_manifest_declares_the_eyeful_pre_push_hook():
    proc = subprocess.run(
        [str(PRE_COMMIT), "validate-manifest", str(MANIFEST)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hooks = {hook["id"]: hook for hook in yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))}
    hook = hooks["eyeful"]
    assert hook["entry"] == "git-eyeful"
    assert hook["language"] == "python"
    assert hook["stages"] == ["pre-push"]
    assert hook["pass_filenames"] is False
    assert hook["always_run"] is True
    assert hook["require_serial"] is True
    confirm_hook = hooks["eyeful-confirm"]
    assert confirm_hook["entry"] == "git-eyeful confirm --yes"
    assert confirm_hook["stages"] == ["manual"]  # only when the user runs it
    assert confirm_hook["always_run"] is True and confirm_hook["pass_filenames"] is False


# --- what a stopped push says to run to confirm ------------------------------------------------

UNDER_PRE_COMMIT = {"PRE_COMMIT": "1"}
RUN_CONFIRM = "run `pre-commit run --hook-stage manual eyeful-confirm`"
ADD_CONFIRM = (
    f"add `- id: eyeful-confirm` to eyeful's hooks in .pre-commit-config.yaml, then {RUN_CONFIRM}"
)


def _pre_commit_clone(parent: Path, origin: str, manifest: str | None = None) -> Path:
    """What pre-commit makes for a hook repository: a clone (`origin` as configured) holding the
    manifest, with the hook's environment inside it. Returns the environment's prefix."""
    manifest = manifest or MANIFEST.read_text(encoding="utf-8")
    clone = make_repo(parent / "repoabc123", {".pre-commit-hooks.yaml": manifest})
    git(clone, "remote", "add", "origin", origin)
    prefix = clone / "py_env-python3"
    prefix.mkdir()
    return prefix


@pytest.mark.parametrize(
    ("config", "listed"),
    [
        ("repos:\n- repo: x\n  rev: y\n  hooks:\n  - id: eyeful\n  - id: eyeful-confirm\n", True),
        ("repos:\n  - repo: x\n    hooks:\n      - id: 'eyeful-confirm'  # by hand\n", True),
        (
            "repos:\n  - repo: x\n    hooks:\n      - id: eyeful\n      # - id: eyeful-confirm\n",
            False,
        ),
        ("repos:\n  - repo: x\n    hooks:\n      - id: eyeful-confirm-not\n", False),
        (None, False),
    ],
    ids=["readme", "quoted", "commented-out", "another-id", "no-config"],
)
def test_a_stopped_push_under_pre_commit_says_the_confirming_command_that_works(
    tmp_path, config, listed
):
    root = make_repo(tmp_path / "project", {"calc.py": CALC})
    if config is not None:
        (root / ".pre-commit-config.yaml").write_text(config)
    hook_repo = tmp_path / "eyeful mirror"  # a space: the command quotes it
    prefix = _pre_commit_clone(tmp_path / "store", str(hook_repo))
    rev = git(prefix.parent, "rev-parse", "HEAD").strip()

    assert confirm_hint(root, env={}, prefix=str(prefix)) == "run `git eyeful confirm`"
    said = confirm_hint(root, env=UNDER_PRE_COMMIT, prefix=str(prefix))
    if listed:
        assert said == RUN_CONFIRM
    else:
        assert said == (
            f"run `pre-commit try-repo '{hook_repo}' eyeful-confirm --ref {rev} "
            "--hook-stage manual`"
        )
    # A `language: system` hook runs in the user's virtualenv, which may well sit in a clone of
    # eyeful (its developers'): only pre-commit's own environments name a repository.
    user_venv = _pre_commit_clone(tmp_path / "dev", str(hook_repo)).parent / ".venv"
    user_venv.mkdir()
    said = confirm_hint(root, env=UNDER_PRE_COMMIT, prefix=str(user_venv))
    assert said == (RUN_CONFIRM if listed else ADD_CONFIRM)


def test_the_confirming_command_names_no_repository_it_cannot_vouch_for(tmp_path):
    root = make_repo(tmp_path / "project", {"calc.py": CALC})
    # A configuration symlinked from elsewhere is not read, even when it lists the hook.
    elsewhere = tmp_path / "elsewhere.yaml"
    elsewhere.write_text("repos:\n- repo: x\n  hooks:\n  - id: eyeful-confirm\n")
    (root / ".pre-commit-config.yaml").symlink_to(elsewhere)
    assert confirm_hint(root, env=UNDER_PRE_COMMIT, prefix=str(tmp_path)) == ADD_CONFIRM

    cases = {
        # try-repo's copy of a hook repository's uncommitted changes, beside its clone: gone
        # once try-repo ends.
        "shadow": (str(tmp_path / "shadow" / "shadow-repo"), None),
        "backtick": ("https://example.com/`touch pwned`", None),
        "newline": ("https://example.com/x\nrm -rf ~", None),
        "before-the-confirming-hook": (
            "https://example.com/eyeful",
            "- id: eyeful\n  name: eyeful\n  entry: git-eyeful\n  language: python\n",
        ),
    }
    cases.update({
        # Secrets in a URL stay out of the report (which often lands in CI logs).
        "password": ("https://me:hunter2@example.com/eyeful", None),
        "token": ("https://ghp_0123456789abcdef@example.com/eyeful", None),
        # What the report would change (it collapses spaces and escapes tags), so the pasted
        # command would name another path.
        "two-spaces": (str(tmp_path / "my  eyeful"), None),
        "tag": (str(tmp_path / "a<b>c"), None),
        "too-long": ("https://example.com/" + "x" * 2000, None),
    })  # fmt: skip
    for name, (origin, manifest) in cases.items():
        parent = tmp_path / ("shadow" if name == "shadow" else name)
        prefix = _pre_commit_clone(parent, origin, manifest)
        said = confirm_hint(root, env=UNDER_PRE_COMMIT, prefix=str(prefix))
        assert said == ADD_CONFIRM, name

    # A URL option-looking origin (set by hand: `git remote add` refuses it).
    prefix = _pre_commit_clone(tmp_path / "dash", "https://example.com/eyeful")
    git(prefix.parent, "config", "remote.origin.url", "--config=/tmp/elsewhere.yaml")
    assert confirm_hint(root, env=UNDER_PRE_COMMIT, prefix=str(prefix)) == ADD_CONFIRM
    # A HEAD naming no commit of the clone.
    prefix = _pre_commit_clone(tmp_path / "no-commit", "https://example.com/eyeful")
    (prefix.parent / ".git" / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")
    assert confirm_hint(root, env=UNDER_PRE_COMMIT, prefix=str(prefix)) == ADD_CONFIRM
    # Not a clone at all, but inside another repository: that one is not eyeful's source.
    outer = make_repo(tmp_path / "outer", {"x": "x"})
    git(outer, "remote", "add", "origin", "https://example.com/outer")
    inner = outer / "store" / "repoabc123"
    write(inner, {".pre-commit-hooks.yaml": MANIFEST.read_text(encoding="utf-8")})
    (inner / "py_env-python3").mkdir()
    assert (
        confirm_hint(root, env=UNDER_PRE_COMMIT, prefix=str(inner / "py_env-python3"))
        == ADD_CONFIRM
    )


def test_the_confirming_command_names_the_url_as_configured_not_as_rewritten(tmp_path):
    """`url.<base>.insteadOf` (often how CI puts a token into URLs) rewrites what git fetches
    from, not what pre-commit was given: the hint names the configured URL."""
    root = make_repo(tmp_path / "project", {"calc.py": CALC})
    prefix = _pre_commit_clone(tmp_path / "store", "https://example.com/acme/eyeful")
    secret = "https://x-access-token:ghp_SECRET@example.com/"
    git(prefix.parent, "config", f"url.{secret}.insteadOf", "https://example.com/")
    rev = git(prefix.parent, "rev-parse", "HEAD").strip()
    said = confirm_hint(root, env=UNDER_PRE_COMMIT, prefix=str(prefix))
    assert said == (
        f"run `pre-commit try-repo https://example.com/acme/eyeful eyeful-confirm --ref {rev} "
        "--hook-stage manual`"
    )


# --- pre-commit installs eyeful from the README's configuration ---------------------------------


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # tmp_path_factory's base directory is per xdist worker, so this store is never shared
    # between processes. The environment pre-commit builds in it for the README's configuration
    # (a clone of hook_repo, pip-installed: ~10 s) is built by the first test of
    # TestPreCommitInstallsEyeful and reused by the other, which runs on the same worker.
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed copy of this checkout's working tree, for pre-commit to clone and pip-install.

    A copy rather than the checkout itself: one fixed commit for the whole session, whatever
    else is being edited meanwhile, and no "uncommitted changes" shadow repository.
    """
    dest = tmp_path_factory.mktemp("hook-repo")
    env = _no_git_env()
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        check=True,
    ).stdout
    for raw in filter(None, listed.split(b"\0")):
        name = os.fsdecode(raw)
        source = ROOT / name
        if not (source.is_file() or source.is_symlink()):
            continue  # deleted in the working tree
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest / name, follow_symlinks=False)
    identity = ["-c", "user.name=eyeful tests", "-c", "user.email=tests@eyeful.invalid"]
    for argv in (
        ["init", "-q"],
        ["add", "-A"],
        [*identity, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "eyeful under test"],
    ):
        subprocess.run(["git", *argv], cwd=dest, env=env, capture_output=True, check=True)
    assert (dest / ".pre-commit-hooks.yaml").is_file()
    return dest


def _readme_pre_commit_config(hook_repo: Path) -> str:
    """The README's pre-commit snippet, with its URL and `rev` filled in as the README says."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    snippet = text.split("## Hooks", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    config = yaml.safe_load(snippet)
    (entry,) = config["repos"]
    assert [hook["id"] for hook in entry["hooks"]] == ["eyeful", "eyeful-confirm"]
    # "`git ls-remote <URL> HEAD` prints the newest"
    listed = run("git", "ls-remote", str(hook_repo), "HEAD", cwd=hook_repo).stdout
    rev = listed.split()[0]
    assert re.fullmatch(r"[0-9a-f]{40}", entry["rev"]), "the README shows a full commit id"
    snippet = snippet.replace(entry["repo"], str(hook_repo)).replace(entry["rev"], rev)
    return snippet


def pre_commit_run(
    repo: Path, config: Path, from_ref: str, to_ref: str
) -> tuple[subprocess.CompletedProcess[str], str]:
    """`pre-commit run` of the pre-push stage over a pushed range, as pre-commit's own pre-push
    hook runs it (PRE_COMMIT_FROM_REF / PRE_COMMIT_TO_REF), with a configuration kept out of
    the user's repository."""
    refs = ["--from-ref", from_ref, "--to-ref", to_ref]
    argv = [str(PRE_COMMIT), "run", "--config", str(config), "--hook-stage", "pre-push", *refs]
    return _combined(argv, repo, timeout=600)


class TestPreCommitInstallsEyeful:
    """pre-commit installs eyeful from the README's configuration: both tests run on one worker
    (`--dist loadfile`), so the environment is built once in the shared PRE_COMMIT_HOME."""

    def test_pre_commit_blocks_a_pushed_regression_and_passes_a_clean_push(
        self, tmp_path, hook_repo, pre_commit_home, monkeypatch
    ):
        # pre-commit puts the hook's own virtualenv (eyeful, no pytest) first on PATH; eyeful must
        # take it off again so that `python` is the user's: the test interpreter's, which has
        # pytest.
        assert (BIN / "python").exists()
        monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("PRE_COMMIT_HOME", str(pre_commit_home))
        repo = python_project(
            tmp_path / "repo", eyeful_config(USER_PYTEST, test_one=USER_PYTEST_ONE)
        )
        base = git(repo, "rev-parse", "HEAD").strip()
        clean = commit(repo, {"calc.py": WITH_SUB, "tests/test_sub.py": SUB_TESTS}, "add sub")
        commit(repo, {"calc.py": BROKEN_ADD}, "break add")
        # The regression is not in the last pushed commit: the whole range must be reviewed.
        broken = commit(repo, {"docs.md": "docs\n"}, "docs")
        confirm(repo)  # same XDG_CONFIG_HOME as the hook run below
        make_user_dirty(repo, unstaged=False)
        before = local_state(repo, index_bytes=False)

        # The README's configuration, outside the repository (its files are the user's).
        config = tmp_path / "pre-commit-config.yaml"
        config.write_text(_readme_pre_commit_config(hook_repo), encoding="utf-8")

        proc, out = pre_commit_run(repo, config, base, clean)
        assert proc.returncode == 0, out
        assert "Passed" in out
        # PRE_COMMIT_FROM_REF / PRE_COMMIT_TO_REF were the range reviewed, and its tests really ran.
        assert f"{base[:7]}..{clean[:7]}" in out, out
        assert "**eyeful: clean**" in out, out
        assert "tests on the change: PASSED" in out, out
        assert "**The push goes ahead.**" in out, out  # pre-commit sets PRE_COMMIT=1: hook mode

        # (No GIT_DIR/GIT_INDEX_FILE here: pre-commit's own git calls would follow them. Their not
        # leaking into eyeful is checked on the real pushes below.)
        proc, out = pre_commit_run(repo, config, clean, broken)
        assert proc.returncode == 1, out
        assert "Failed" in out
        assert f"{clean[:7]}..{broken[:7]}" in out, out
        assert "1 blocking issue" in out, out
        assert REGRESSION in out, out
        assert "**The push was stopped** because of the blocking issues above" in out, out
        assert "`SKIP=eyeful git push`" in out, out
        assert local_state(repo, index_bytes=False) == before

    def test_pre_commit_user_is_told_how_to_confirm_confirms_and_pushes(
        self, tmp_path, hook_repo, pre_commit_home
    ):
        # The README's snippet as a user copies it; pre-commit installs eyeful in an environment
        # of its own, so there is no `git eyeful` on this PATH: only the user's python, pytest,
        # pre-commit.
        env = _pre_commit_user_env(tmp_path, pre_commit_home)
        repo = _user_project(
            tmp_path / "repo",
            WITH_SUB,
            {".pre-commit-config.yaml": _readme_pre_commit_config(hook_repo)},
        )
        remote = add_remote(repo)
        proc = subprocess.run(
            ["pre-commit", "install", "--hook-type", "pre-push"],
            cwd=repo, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr

        proc, out = push(repo, "main", env=env)
        assert proc.returncode != 0, out
        assert remote_tip(remote, "main") == ""
        assert "git eyeful confirm" not in out, out
        told = re.findall(r"run `([^`]+)`", out)
        assert told and set(told) == {"pre-commit run --hook-stage manual eyeful-confirm"}, out

        proc = subprocess.run(
            told[0], shell=True, cwd=repo, env=env, capture_output=True, text=True, check=False
        )
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, out
        assert "Passed" in out and USER_PYTEST in out, out  # the commands it confirmed are shown

        proc, out = push(repo, "main", env=env)
        assert proc.returncode == 0, out
        assert "tests on the change: PASSED" in out, out
        assert remote_tip(remote, "main") == git(repo, "rev-parse", "HEAD").strip()

    def test_try_repo_stops_the_first_push_and_says_how_to_confirm_by_try_repo(
        self, tmp_path, hook_repo, pre_commit_home
    ):
        """`pre-commit try-repo`, the way to try a hook before adding it to a configuration: the
        repository has no `.pre-commit-config.yaml`, so the confirming hook is reached the same
        way, and that is what the stopped push says to run. (That the confirmed push then goes
        ahead: test_pre_commit_user_is_told_how_to_confirm_confirms_and_pushes. try-repo makes a
        fresh environment at each call, some 5 s of CPU.)"""
        env = _pre_commit_user_env(tmp_path, pre_commit_home)
        repo = _user_project(tmp_path / "repo", CALC)
        base = git(repo, "rev-parse", "HEAD").strip()
        head = commit(repo, {"calc.py": WITH_SUB, "tests/test_sub.py": SUB_TESTS}, "add sub")
        make_user_dirty(repo, unstaged=False)
        before = local_state(repo, index_bytes=False)
        try_push = ["pre-commit", "try-repo", str(hook_repo), "eyeful", "--hook-stage", "pre-push"]
        try_push += ["--from-ref", base, "--to-ref", head]

        proc, out = _combined(try_push, repo, env)
        assert proc.returncode == 1, out
        assert "**The push was stopped**" in out, out
        assert "git eyeful confirm" not in out and "pre-commit run" not in out, out
        rev = git(hook_repo, "rev-parse", "HEAD").strip()
        told = set(re.findall(r"run `([^`]+)`", out))
        wanted = f"pre-commit try-repo {hook_repo} eyeful-confirm --ref {rev} --hook-stage manual"
        assert told == {wanted}, out

        proc, out = _combined(["sh", "-c", wanted], repo, env)
        assert proc.returncode == 0, out
        assert "Passed" in out and USER_PYTEST in out, out
        assert local_state(repo, index_bytes=False) == before


def _user_project(path: Path, calc: str, files: dict[str, str] | None = None) -> Path:
    """A committed project whose commands use the user's `python` (no pre-commit hook of its
    own unless ``files`` has one)."""
    return make_repo(
        path,
        {
            "pyproject.toml": eyeful_config(USER_PYTEST),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": calc,
            "tests/test_calc.py": CALC_TESTS,
            **(files or {}),
        },
    )


def _pre_commit_user_env(tmp_path: Path, pre_commit_home: Path) -> dict[str, str]:
    """A pre-commit user's environment: the user's python (with pytest) and pre-commit on PATH,
    and no `git eyeful` (pre-commit installs eyeful in an environment of its own)."""
    system = [p for p in os.environ["PATH"].split(os.pathsep) if Path(p) != BIN]
    tools = os.pathsep.join(system)
    assert shutil.which("git-eyeful", path=tools) is None
    user_bin = tmp_path / "user-bin"
    user_bin.mkdir()
    for name in ("python", "pre-commit"):
        (user_bin / name).write_text(f'#!/bin/sh\nexec "{BIN / name}" "$@"\n')
        (user_bin / name).chmod(0o755)
    return dict(
        _no_git_env(),
        PATH=f"{user_bin}{os.pathsep}{tools}",
        PRE_COMMIT_HOME=str(pre_commit_home),
    )


# --- pre-commit installed as the pre-push hook, on a real `git push` -----------------------------


def _local_pre_commit_config() -> str:
    """The manifest's hook run from the user's own virtualenv: `repo: local`, `language: system`."""
    hooks = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == "eyeful"]
    hook = dict(hook, language="system")
    return yaml.safe_dump({"repos": [{"repo": "local", "hooks": [hook]}]}, sort_keys=False)


@pytest.fixture
def pre_commit_project(tmp_path, pre_commit_home):
    """A confirmed project using pre-commit's pre-push hook, and a bare remote with nothing yet.

    eyeful runs from the user's own virtualenv (the test interpreter's, with pytest in it), as
    with a `language: system` hook: that virtualenv is where the user's `python` is, and must stay
    on PATH. PATH has nothing else with a `python` in it.
    """
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(USER_PYTEST, test_one=USER_PYTEST_ONE),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": WITH_SUB,
            "tests/test_calc.py": CALC_TESTS,
            ".pre-commit-config.yaml": _local_pre_commit_config(),
        },
    )
    remote = add_remote(repo)
    assert (BIN / "git-eyeful").exists() and (BIN / "python").exists()
    tools = tools_dir(tmp_path / "tools", "git", "sh", "bash", "dirname")
    env = dict(
        os.environ,
        PATH=f"{BIN}{os.pathsep}{tools}",
        VIRTUAL_ENV=str(BIN.parent),
        PRE_COMMIT_HOME=str(pre_commit_home),
    )
    proc = subprocess.run(
        [str(PRE_COMMIT), "install", "--hook-type", "pre-push"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    confirm(repo)
    return repo, remote, env


def test_installed_pre_commit_hook_reviews_the_pushed_range_on_git_push(pre_commit_project):
    repo, remote, env = pre_commit_project
    proc, out = push(repo, "--no-verify", "main", env=env)
    assert proc.returncode == 0, out
    base = git(repo, "rev-parse", "HEAD").strip()
    clean = commit(repo, {"tests/test_sub.py": SUB_TESTS}, "test sub")
    proc, out = push(repo, "main", env=env)
    assert proc.returncode == 0, out
    assert f"{base[:7]}..{clean[:7]}" in out, out
    assert "tests on the change: PASSED" in out, out
    assert remote_tip(remote, "main") == clean

    commit(repo, {"calc.py": BROKEN_ADD}, "break add")
    # The regression is not in the last pushed commit: the whole range must be reviewed.
    broken = commit(repo, {"docs.md": "docs\n"}, "docs")
    make_user_dirty(repo, unstaged=False)
    before = local_state(repo, index_bytes=False)
    proc, out = push(repo, "main", env=leaky_env(repo, env))
    assert proc.returncode != 0, out
    assert f"{clean[:7]}..{broken[:7]}" in out, out
    assert REGRESSION in out, out
    assert remote_tip(remote, "main") == clean
    assert local_state(repo, index_bytes=False) == before


def test_installed_pre_commit_hook_reviews_a_branch_pushed_by_url_from_what_remotes_have(
    pre_commit_project,
):
    """helper-82: pushed by the remote's URL, a new branch gave pre-commit no remote-tracking
    ref of that name: it set no range, and eyeful reviewed the branch against the empty tree
    (the break "new in the change"): clean, pushed."""
    repo, remote, env = pre_commit_project
    _a_break_on_a_new_branch_is_stopped(repo, str(remote), env)
    assert remote_tip(remote, "topic") == ""


def test_installed_pre_commit_hook_reviews_a_root_commit_against_the_empty_tree(
    pre_commit_project,
):
    repo, _remote, env = pre_commit_project
    root = git(repo, "rev-parse", "HEAD").strip()
    proc, out = push(repo, "main", env=env)
    assert proc.returncode == 0, out
    assert f"{EMPTY_TREE}..{root[:7]}" in out, out


# --- `git eyeful install-hook` ------------------------------------------------------------------


def test_install_hook_installs_the_shipped_hook_and_reinstalls_over_its_own(tmp_path):
    repo = python_project(tmp_path / "repo")
    target = repo / ".git" / "hooks" / "pre-push"
    proc = eyeful("install-hook", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert str(target) in "".join(proc.stderr.split())  # rich wraps at 80 columns
    assert target.read_bytes() == SHIPPED_HOOK.read_bytes()
    assert os.access(target, os.X_OK)
    # An older eyeful hook is eyeful's own: replaced, not refused.
    target.write_text(SHIPPED_HOOK.read_text() + "# from an older eyeful\n")
    before = user_state(repo)
    proc = eyeful("install-hook", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert target.read_bytes() == SHIPPED_HOOK.read_bytes()
    assert os.access(target, os.X_OK)
    assert sorted(p.name for p in target.parent.iterdir() if p.name.startswith(".")) == []
    assert user_state(repo) == before


@pytest.mark.parametrize("kind", ["script", "symlink", "dangling symlink"])
def test_install_hook_refuses_to_overwrite_a_foreign_hook(tmp_path, kind):
    repo = python_project(tmp_path / "repo")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    target = hooks / "pre-push"
    foreign = tmp_path / "their-hook"
    foreign.write_bytes(b'#!/bin/sh\n# someone else\'s pre-push\nexec run-checks "$@"\n')
    foreign.chmod(0o700)
    if kind == "script":
        shutil.copy2(foreign, target)
    elif kind == "symlink":
        target.symlink_to(foreign)
    else:
        target.symlink_to(tmp_path / "nowhere")
    listing = sorted(p.name for p in hooks.iterdir())
    link = os.readlink(target) if target.is_symlink() else None
    data = foreign.read_bytes()
    mode = target.lstat().st_mode

    proc = eyeful("install-hook", cwd=repo)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("eyeful: error: ")
    assert str(target) in lines[0] and "not eyeful's" in lines[0]
    assert "Traceback" not in proc.stderr
    assert target.lstat().st_mode == mode
    assert (os.readlink(target) if target.is_symlink() else None) == link
    assert foreign.read_bytes() == data
    if kind == "script":
        assert target.read_bytes() == data
    assert sorted(p.name for p in hooks.iterdir()) == listing


@pytest.mark.parametrize("where", ["relative", "absolute"])
def test_install_hook_honours_core_hooks_path(tmp_path, where):
    repo = python_project(tmp_path / "repo")
    value = ".githooks" if where == "relative" else str(tmp_path / "shared hooks")
    git(repo, "config", "core.hooksPath", value)
    (repo / "tests" / "sub").mkdir()
    # git's own answer to "where are the hooks"; install-hook runs from a subdirectory.
    expected = (repo / git(repo, "rev-parse", "--git-path", "hooks").strip()).resolve()
    proc = eyeful("install-hook", cwd=repo / "tests" / "sub")
    assert proc.returncode == 0, proc.stderr
    assert (expected / "pre-push").read_bytes() == SHIPPED_HOOK.read_bytes()
    assert os.access(expected / "pre-push", os.X_OK)
    assert not (repo / ".git" / "hooks" / "pre-push").exists()
    if where == "relative":
        assert not (repo / "tests" / "sub" / value).exists()


def test_install_hook_with_hooks_disabled_is_a_one_line_error(tmp_path):
    repo = python_project(tmp_path / "repo")
    git(repo, "config", "core.hooksPath", os.devnull)
    proc = eyeful("install-hook", cwd=repo)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "core.hooksPath" in lines[0] and os.devnull in lines[0]


# --- the plain pre-push hook on real pushes -----------------------------------------------------


@pytest.fixture
def hooked_project(tmp_path):
    """A confirmed project with the plain hook installed and a bare remote that has nothing yet."""
    repo = python_project(tmp_path / "repo", eyeful_config(PYTEST))
    remote = add_remote(repo)
    proc = eyeful("install-hook", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    confirm(repo)
    return repo, remote


def test_plain_hook_refuses_a_push_that_breaks_a_test_and_lets_a_clean_one_through(
    hooked_project,
):
    repo, remote = hooked_project
    proc, out = push(repo, "--no-verify", "main")
    assert proc.returncode == 0, out
    base = git(repo, "rev-parse", "HEAD").strip()

    clean = commit(repo, {"calc.py": WITH_SUB, "tests/test_sub.py": SUB_TESTS}, "add sub")
    proc, out = push(repo, "main")
    assert proc.returncode == 0, out
    assert "eyeful: reviewing refs/heads/main" in out, out
    assert f"{base[:7]}..{clean[:7]}" in out, out
    assert "**eyeful: clean**" in out, out
    assert "**The push goes ahead.**" in out, out  # the plain hook passes --hook
    assert remote_tip(remote, "main") == clean

    commit(repo, {"calc.py": BROKEN_ADD}, "break add")
    # The regression is not in the last pushed commit: the whole range must be reviewed.
    broken = commit(repo, {"docs.md": "docs\n"}, "docs")
    make_user_dirty(repo)
    before = local_state(repo)
    proc, out = push(repo, "main", env=leaky_env(repo))
    assert proc.returncode != 0, out
    assert f"{clean[:7]}..{broken[:7]}" in out, out
    assert "1 blocking issue" in out, out
    assert REGRESSION in out, out
    assert "skip eyeful once with `git push --no-verify`" in out, out
    assert remote_tip(remote, "main") == clean
    assert local_state(repo) == before


def test_plain_hook_reviews_a_new_branch_from_the_first_commit_the_remote_lacks(hooked_project):
    repo, remote = hooked_project
    proc, out = push(repo, "--no-verify", "main")
    assert proc.returncode == 0, out
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "switch", "-q", "-c", "feature")
    commit(repo, {"calc.py": BROKEN_ADD}, "break add")  # the first commit: the regression
    commit(repo, {"docs.md": "docs\n"}, "docs")
    tip = commit(repo, {"more.md": "more\n"}, "more docs")

    proc, out = push(repo, "feature")
    assert proc.returncode != 0, out
    assert "eyeful: reviewing refs/heads/feature" in out, out
    # The whole branch against what the remote has (main), not just the last commit.
    assert f"{base[:7]}..{tip[:7]}" in out, out
    assert REGRESSION in out, out
    assert remote_tip(remote, "feature") == ""

    git(repo, "switch", "-q", "main")
    git(repo, "switch", "-q", "-c", "good")
    commit(repo, {"calc.py": WITH_SUB, "tests/test_sub.py": SUB_TESTS}, "add sub")
    good = commit(repo, {"docs.md": "docs\n"}, "docs")
    proc, out = push(repo, "good")
    assert proc.returncode == 0, out
    assert f"{base[:7]}..{good[:7]}" in out, out
    assert remote_tip(remote, "good") == good


def test_plain_hook_reviews_a_new_branch_pushed_by_url_from_what_the_remotes_have(
    hooked_project,
):
    """helper-82: a new branch pushed by the remote's URL (`git push ../remote.git topic`): no
    remote-tracking ref is named so, the first commit the remote lacked was the root, and the
    break was reviewed against the empty tree: "new in the change", clean, pushed."""
    repo, remote = hooked_project
    _a_break_on_a_new_branch_is_stopped(repo, str(remote))
    assert remote_tip(remote, "topic") == ""


def test_plain_hook_reviews_a_push_to_a_remote_never_fetched_from_what_others_have(
    hooked_project,
):
    """helper-84: a remote just added (no remote-tracking ref yet): the first commit it lacked
    was the root, and the break was reviewed against the empty tree: clean, pushed."""
    repo, remote = hooked_project
    fork = remote.parent / "fork.git"
    git(remote.parent, "init", "-q", "--bare", str(fork))
    git(repo, "remote", "add", "fork", str(fork))
    _a_break_on_a_new_branch_is_stopped(repo, "fork")
    assert remote_tip(fork, "topic") == ""


def test_plain_hook_pushing_by_url_reads_the_remote_of_that_url(hooked_project):
    """helper-84: pushed by URL, what any remote-tracking ref had counted as pushed: the break,
    already on a fork's `origin/topic`, was never reviewed for the upstream (exit 0)."""
    repo, upstream = hooked_project
    proc, out = push(repo, "--no-verify", "main")
    assert proc.returncode == 0, out
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "remote", "rename", "origin", "up")
    fork = upstream.parent / "fork.git"
    git(upstream.parent, "init", "-q", "--bare", str(fork))
    git(repo, "remote", "add", "origin", str(fork))
    git(repo, "switch", "-q", "-c", "topic")
    tip = commit(repo, {"calc.py": BROKEN_ADD}, "break add")
    proc, out = _combined(["git", "push", "--no-verify", "origin", "topic"], repo)
    assert proc.returncode == 0, out
    proc, out = _combined(["git", "push", str(upstream), "topic"], repo)
    assert proc.returncode != 0, out
    assert f"{base[:7]}..{tip[:7]}" in out, out
    assert REGRESSION in out, out
    assert remote_tip(upstream, "topic") == ""


def test_plain_hook_lets_a_branch_every_commit_of_which_a_remote_has_go(hooked_project):
    """helper-85: `git push fork main` to a new, empty fork (no tracking ref of it): the guess
    found nothing new and stopped the push (exit 3), for good; so did a push by the remote's URL
    written otherwise (a trailing slash) and one by the URL of two remotes, one fetched long
    ago, whose stale refs made a break already on the server block."""
    repo, remote = hooked_project
    proc, out = push(repo, "--no-verify", "main")
    assert proc.returncode == 0, out
    fork = remote.parent / "fork.git"
    git(remote.parent, "init", "-q", "--bare", str(fork))
    git(repo, "remote", "add", "fork", str(fork))
    proc, out = _combined(["git", "push", "fork", "main"], repo)
    assert proc.returncode == 0, out
    proc, out = _combined(["git", "push", f"{remote}/", "main:release"], repo)
    assert proc.returncode == 0, out
    assert remote_tip(remote, "release") == git(repo, "rev-parse", "HEAD").strip()
    git(repo, "remote", "add", "a", str(remote))
    git(repo, "fetch", "-q", "a")  # (never fetched again: its refs go stale)
    commit(repo, {"calc.py": BROKEN_ADD}, "break add")
    proc, out = push(repo, "--no-verify", "main")  # (on the server: reviewed or skipped there)
    assert proc.returncode == 0, out
    proc, out = _combined(["git", "push", str(remote), "main:other"], repo)
    assert proc.returncode == 0, out


def test_plain_hook_reviews_a_root_commit_against_the_empty_tree(hooked_project):
    repo, remote = hooked_project
    root = git(repo, "rev-parse", "HEAD").strip()
    proc, out = push(repo, "main")
    assert proc.returncode == 0, out
    assert "eyeful: reviewing refs/heads/main" in out, out
    assert f"{EMPTY_TREE}..{root[:7]}" in out, out
    assert "against empty tree" in out, out
    assert remote_tip(remote, "main") == root


def test_plain_hook_reviews_nothing_for_a_branch_deletion(hooked_project):
    repo, remote = hooked_project
    proc, out = push(repo, "--no-verify", "main")
    assert proc.returncode == 0, out
    git(repo, "switch", "-q", "-c", "feature")
    commit(repo, {"calc.py": BROKEN_ADD}, "break add")
    proc, out = push(repo, "--no-verify", "feature")
    assert proc.returncode == 0, out
    git(repo, "switch", "-q", "main")

    proc, out = push(repo, "--delete", "feature")
    assert proc.returncode == 0, out
    assert "eyeful" not in out, out
    assert remote_tip(remote, "feature") == ""

    # A deletion next to an update in one push: only the update is reviewed.
    git(repo, "branch", "-q", "-f", "feature", "HEAD")
    proc, out = push(repo, "--no-verify", "feature")
    assert proc.returncode == 0, out
    base = git(repo, "rev-parse", "HEAD").strip()
    clean = commit(repo, {"tests/test_sub.py": SUB_TESTS, "calc.py": WITH_SUB}, "add sub")
    proc, out = push(repo, ":feature", "main")
    assert proc.returncode == 0, out
    assert out.count("eyeful: reviewing") == 1, out
    assert f"eyeful: reviewing refs/heads/main ({base}..{clean})" in out, out
    assert remote_tip(remote, "feature") == ""
    assert remote_tip(remote, "main") == clean


def test_plain_hook_without_git_eyeful_on_path_refuses_with_a_hint(hooked_project, tmp_path):
    repo, remote = hooked_project
    env = dict(os.environ, PATH=str(tools_dir(tmp_path / "tools", "git")))
    proc, out = push(repo, "main", env=env)
    assert proc.returncode != 0, out
    assert "git-eyeful is not on PATH" in out, out
    assert remote_tip(remote, "main") == ""
