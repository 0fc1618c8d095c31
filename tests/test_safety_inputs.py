"""The safety suite's corpus of bad inputs (issue 8): one line on stderr, exit 2, nothing run.

One table, one row per hostile or careless input: usage errors, output paths, findings files,
configuration, repositories. For every row the test checks the exit code, that stderr is one
`eyeful: error: ...` line saying the real reason, that stdout is empty, that the project's
commands never ran (they would touch a marker file), that eyeful made no worktree, that nothing
of the user's changed, and that no crash report was written. The last rows are the odd
repositories eyeful must handle rather than refuse, and an internal error, which is exit 4.
Rows the command line's parser refuses, `confirm`'s, and the internal error start the program;
the others are reviewed in the test's process (tests/core.py), as the review command would run them.

The rows run against one confirmed repository with a staged breaking change (so that, without
the bad input, the commands *would* run: `test_the_corpus_repository_would_run_its_commands`
shows it); a row that has to change the repository gets a copy, confirmed in-process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from eyeful.agents.agent import extract_json
from eyeful.agents.presets import Unreadable, _json_values
from eyeful.config import load_config
from eyeful.confine import Refused
from eyeful.extra import Extra
from eyeful.trust import TrustStore
from tests.core import Reviewed, review
from tests.gitrepo import (
    BROKEN_ADD,
    PYTEST,
    eyeful,
    eyeful_config,
    git,
    make_repo,
    python_project,
    user_state,
    write,
)

Files = dict[str, str | bytes]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The shared repository (read only for the rows) and the marker its commands would touch."""
    where = tmp_path_factory.mktemp("corpus")
    marker = where / "ran"
    repo = python_project(where / "repo", _config(marker))
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    return repo, marker


def _config(marker: Path, extra: str = "") -> str:
    return eyeful_config(
        f"touch {marker} && {PYTEST}", extra=extra, test_one=f"touch {marker} && {PYTEST} {{test}}"
    )


def _confirm(repo: Path) -> None:
    """What `git eyeful confirm --yes` records, without a process per row."""
    TrustStore().confirm(repo, load_config(repo))


def _finding(path: str = "tests/test_repro.py", **over: object) -> dict[str, object]:
    record: dict[str, object] = {
        "id": "f1",
        "expert": "correctness",
        "severity": "error",
        "evidence": "test",
        "path": "calc.py",
        "line": 2,
        "title": "add subtracts",
        "body": "add returns a - b.",
        "oracle": {"kind": "human"},
        "repro": {
            "path": path,
            "code": "from calc import add\n\n\ndef test_sum():\n    assert add(2, 3) == 5, 'off'\n",
            "fails": "off",
        },
    }
    record.update(over)
    return record


def _repro(**over: object) -> dict[str, object]:
    return {**_finding()["repro"], **over}  # type: ignore[dict-item]


# Ways a row changes its copy of the repository -------------------------------------------------


def _unmerged(repo: Path) -> None:
    write(repo, {"calc.py": "def add(a, b):\n    return 'stashed'\n"})
    git(repo, "stash", "-q")
    write(repo, {"calc.py": "def add(a, b):\n    return 'committed'\n"})
    git(repo, "commit", "-qam", "other side")
    git(repo, "stash", "apply", check=False)
    assert "calc.py" in git(repo, "diff", "--name-only", "--diff-filter=U")


def _sha256(repo: Path) -> None:
    shutil.rmtree(repo / ".git")
    git(repo, "init", "-q", "--object-format=sha256")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    write(repo, {"calc.py": "def add(a, b):\n    return 0\n"})
    git(repo, "add", "-A")


def _state_dir_is_a_file(repo: Path) -> None:
    (repo / ".git" / "eyeful").write_text("not eyeful's\n")


def _locks_is_a_file(repo: Path) -> None:
    # eyeful's own state, corrupted: not the user's input, so a crash -- but a contained one.
    (repo / ".git" / "eyeful").mkdir()
    (repo / ".git" / "eyeful" / "locks").write_text("")


def _confirmations_dir_is_a_file(repo: Path) -> None:
    config_home = Path(os.environ["XDG_CONFIG_HOME"])
    config_home.mkdir(parents=True, exist_ok=True)
    (config_home / "eyeful").write_text("not eyeful's\n")


def _bare(repo: Path) -> None:
    shutil.rmtree(repo / ".git")
    for child in repo.iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    git(repo, "init", "-q", "--bare")


@dataclass(frozen=True)
class Bad:
    """One bad input: ``args`` ({tmp} and {findings} filled in), what the line says, the code."""

    says: str
    args: tuple[str, ...] = ()
    code: int = 2
    findings: object = None
    """Records (written as a JSON array), or the raw text/bytes of a findings file."""
    files: Files = field(default_factory=dict)
    """Written over a copy of the repository (working tree only)."""
    prepare: Callable[[Path], None] | None = None
    """Applied to a copy of the repository."""
    cwd: str | None = None
    """Run in this directory under the test's tmp_path instead of the repository."""
    confirmed: bool = True
    """Whether the row's repository is confirmed (for rows whose configuration loads)."""
    program: bool = False
    """Refused by the command line's parser, another command than the review, or a crash: the
    row starts the program; every other row is reviewed in the test's process (tests/core.py)."""

    @property
    def copies(self) -> bool:
        return bool(self.files) or self.prepare is not None


BAD_INPUTS: dict[str, Bad] = {
    # Usage errors (point 10): click's three lines become one.
    "jobs-zero": Bad("Invalid value for '-j' / '--jobs'", ("-j", "0"), program=True),
    "format-xml": Bad(
        "Invalid value for '--format': 'xml' is not one of", ("--format", "xml"), program=True
    ),
    "level-none": Bad(
        "Invalid value for '--level': 'none' is not one of", ("--level", "none"), program=True
    ),
    "unknown-option": Bad("No such option: --no-such-flag", ("--no-such-flag",), program=True),
    "unknown-option-of-a-subcommand": Bad(
        "No such option: --bogus", ("confirm", "--bogus"), program=True
    ),
    "findings-is-a-directory": Bad(
        "Invalid value for '--findings'", ("--findings", "{tmp}"), program=True
    ),
    "findings-missing": Bad(
        "cannot read findings: No such file or directory", ("--findings", "{tmp}/none.json")
    ),
    "base-unknown": Bad("unknown revision 'no-such-rev'", ("--base", "no-such-rev")),
    # --base names a commit: an empty value reviewed against the empty tree, a blob's id sent the
    # user to `git fetch` (issue 34, point 3).
    "base-empty": Bad("--base: empty; give a commit, branch or tag", ("--base", "")),
    "base-blob": Bad("is a blob, not a commit", ("--base", "{blob}")),
    "base-tree": Bad("is a tree, not a commit", ("--base", "{tree}")),
    "description-and-message": Bad(
        "--description FILE or -m TEXT, not both",
        ("--description", "{findings}", "-m", "x"),
        findings=[],
    ),
    # Output paths (point 11): checked before anything runs.
    "sarif-is-a-directory": Bad("Invalid value for '--sarif'", ("--sarif", "{tmp}"), program=True),
    "sarif-directory-missing": Bad("its directory", ("--sarif", "{tmp}/no/such/out.sarif")),
    "sarif-under-a-file": Bad(
        "is not a directory", ("--sarif", "{findings}/out.sarif"), findings=[]
    ),
    # Findings files (point 7 and the findings tests before it).
    "findings-nested-200000-deep": Bad("not valid JSON: nested too deeply", findings="[" * 200_000),
    "findings-object-nested-deep": Bad(
        "line 1 is not valid JSON: nested too deeply", findings='{"a":' * 200_000
    ),
    "findings-not-utf8": Bad("findings must be UTF-8 JSON", findings=b"[\xff]"),
    "findings-not-json": Bad("not valid JSON", findings="[{"),
    "findings-not-objects": Bad("finding #1: must be a JSON object", findings="[1]"),
    "findings-duplicate-id": Bad("finding 'f1': id: used twice", findings=[_finding(), _finding()]),
    "repro-path-directory": Bad(
        "finding 'f1': repro.path: repro.path 'tests' is a directory in the change",
        findings=[_finding("tests")],
    ),
    "repro-path-directory-slash": Bad(
        "repro.path 'tests' is a directory in the change", findings=[_finding("tests/")]
    ),
    "repro-path-under-a-file": Bad(
        "repro.path 'calc.py/test_x.py' goes through 'calc.py', which is a file in the change",
        findings=[_finding("calc.py/test_x.py")],
    ),
    "repro-path-dot": Bad(
        "finding 'f1' (#1): repro.path: repro.path '.' names the repository root",
        findings=[_finding(".")],
    ),
    "repro-path-dotdot": Bad(
        "finding 'f1' (#1): repro.path: repro.path '../evil.py' leaves the repository",
        findings=[_finding("../evil.py")],
    ),
    "repro-path-absolute": Bad(
        "finding 'f1' (#1): repro.path: repro.path '/tmp/evil.py' is absolute",
        findings=[_finding("/tmp/evil.py")],
    ),
    "repro-path-in-dot-git": Bad(
        "finding 'f1' (#1): repro.path: repro.path '.git/hooks/pre-push' is inside .git",
        findings=[_finding(".git/hooks/pre-push")],
    ),
    "repro-path-nul": Bad("repro.path 'a\\x00b' is not a usable path", findings=[_finding("a\0b")]),
    "finding-severity": Bad(
        "finding 'bad' (#2): severity: Input should be 'error', 'warning' or 'note'",
        findings=[_finding(), _finding(id="bad", severity="fatal")],
    ),
    "finding-line-zero": Bad(
        "finding 'f1' (#1): line: Input should be greater than or equal to 1",
        findings=[_finding(line=0)],
    ),
    "finding-line-string": Bad(
        "finding 'f1' (#1): line: Input should be a valid integer", findings=[_finding(line="2")]
    ),
    "finding-line-bool": Bad(
        "finding 'f1' (#1): line: Input should be a valid integer", findings=[_finding(line=True)]
    ),
    "finding-unknown-field": Bad(
        "finding 'f1' (#1): colour: unknown field", findings=[_finding(colour="red")]
    ),
    "finding-oracle-kind": Bad(
        "finding 'f1' (#1): oracle.kind: Input should be",
        findings=[_finding(oracle={"kind": "gut"})],
    ),
    "finding-fails-missing": Bad(
        "finding 'f1' (#1): repro.fails: Field required",
        findings=[_finding(repro={"path": "t.py", "code": "x"})],
    ),
    # Configuration (points 7 and 9, and the configuration tests before them).
    "config-not-utf8": Bad(
        "pyproject.toml: not UTF-8 (byte 0xff at offset",
        files={"pyproject.toml": b"[tool.eyeful.commands]\ntest = '\xff'\n"},
    ),
    "config-nul-in-command": Bad(
        "commands.test: contains the control character \\x00",
        files={"pyproject.toml": '[tool.eyeful.commands]\ntest = "true\\u0000touch x"\n'},
    ),
    "config-timeout-string": Bad(
        "timeout: Input should be a valid number, not '10'; write a number without quotes",
        files={"pyproject.toml": '[tool.eyeful]\ntimeout = "10"\n'},
    ),
    "config-timeout-bool": Bad(
        "timeout: Input should be a valid number, not true/false",
        files={"pyproject.toml": "[tool.eyeful]\ntimeout = true\n"},
    ),
    "config-agent-budget-float": Bad(
        "agent.budget_calls: Input should be a valid integer, not 2.5",
        files={"pyproject.toml": "[tool.eyeful.agent]\npreset = 'claude'\nbudget_calls = 2.5\n"},
    ),
    "config-agent-timeout-string": Bad(
        "agent.timeout: Input should be a valid number, not '60'",
        files={"pyproject.toml": "[tool.eyeful.agent]\npreset = 'claude'\ntimeout = '60'\n"},
    ),
    "config-test-one-without-placeholder": Bad(
        "pyproject.toml [tool.eyeful]: commands.test_one: must contain {test}",
        files={"pyproject.toml": "[tool.eyeful.commands]\ntest = 'true'\ntest_one = 'pytest'\n"},
    ),
    "config-unknown-key": Bad(
        "unknown key 'timeot'", files={"pyproject.toml": "[tool.eyeful]\ntimeot = 3\n"}
    ),
    "config-not-toml": Bad(
        "pyproject.toml: not valid TOML", files={"pyproject.toml": "[tool.eyeful\n"}
    ),
    "config-junit-outside": Bad(
        "junit: junit must be a path inside the repository",
        files={"pyproject.toml": "[tool.eyeful]\njunit = '../out.xml'\n"},
    ),
    "config-in-two-files": Bad("keep one", files={".eyeful.toml": "[commands]\ntest = 'true'\n"}),
    # Repositories (point 8 and the repository tests before it).
    "outside-a-repository": Bad("not a git repository", cwd="."),
    "bare-repository": Bad("this is a bare repository", prepare=_bare),
    "unmerged-paths": Bad("the index has unmerged paths", prepare=_unmerged),
    "sha256-repository": Bad("uses SHA-256 object names", prepare=_sha256),
    "confirmations-dir-is-a-file": Bad(
        "cannot record confirmations in",
        ("confirm", "--yes"),
        prepare=_confirmations_dir_is_a_file,
        confirmed=False,
        program=True,
    ),
    "state-dir-is-a-file": Bad("/.git/eyeful is not a directory", prepare=_state_dir_is_a_file),
    # eyeful's own state corrupted: not a verdict, exit 4, the traceback saved.
    "internal-error": Bad(
        "eyeful: internal error (a bug in eyeful, not a verdict): FileExistsError:",
        code=4,
        prepare=_locks_is_a_file,
        program=True,
    ),
}


def _fill(args: tuple[str, ...], tmp: Path, findings: Path | None, repo: Path) -> list[str]:
    ids = {}
    if any("{blob}" in a or "{tree}" in a for a in args):
        ids = {"blob": git(repo, "rev-parse", "HEAD:calc.py").strip(),
               "tree": git(repo, "rev-parse", "HEAD^{tree}").strip()}  # fmt: skip
    return [a.format(tmp=tmp, findings=findings, **ids) for a in args]


_OPTIONS = {
    "--base": "base",
    "-m": "message",
    "--sarif": "sarif",
    "--description": "description_file",
}


def _options(args: list[str]) -> dict[str, object]:
    """A row's command line as the review command's options (the rows use these flags only)."""
    options: dict[str, object] = {}
    findings: list[Path] = []
    for flag, value in zip(args[::2], args[1::2], strict=True):
        if flag == "--findings":
            findings.append(Path(value))
        elif flag in ("--sarif", "--description"):
            options[_OPTIONS[flag]] = Path(value)
        else:
            options[_OPTIONS[flag]] = value
    if findings:
        options["findings"] = findings
    return options


def _write_findings(tmp: Path, findings: object) -> Path:
    path = tmp / "findings.json"
    if isinstance(findings, bytes):
        path.write_bytes(findings)
    elif isinstance(findings, str):
        path.write_text(findings, encoding="utf-8")
    else:
        path.write_text(json.dumps(findings), encoding="utf-8")
    return path


def _reset(repo: Path) -> None:
    """Undo what a failed row did to the shared repository: one failure does not fail the rest."""
    if (repo / ".git" / "eyeful").exists():
        shutil.rmtree(repo / ".git" / "eyeful")
        git(repo, "worktree", "prune")


def _state(repo: Path) -> dict[str, object] | None:
    return user_state(repo) if (repo / ".git").is_dir() else None


@pytest.mark.parametrize("case", list(BAD_INPUTS.values()), ids=list(BAD_INPUTS))
def test_every_bad_input_is_one_line_and_runs_nothing(corpus, tmp_path, monkeypatch, case):
    repo, marker = corpus
    marker.unlink(missing_ok=True)
    crashes = tmp_path / "tmpdir"
    crashes.mkdir()
    monkeypatch.setenv("TMPDIR", str(crashes))  # where a crash's traceback would be saved
    if case.copies:
        repo = tmp_path / "repo"
        shutil.copytree(corpus[0], repo, symlinks=True)
        write(repo, case.files)
        if case.prepare is not None:
            case.prepare(repo)
        if not case.files and case.confirmed and (repo / ".git").is_dir():
            _confirm(repo)  # the copy is a new path: confirmed as the original is
    else:
        _confirm(repo)
        _reset(repo)
    findings = None if case.findings is None else _write_findings(tmp_path, case.findings)
    args = _fill(case.args, tmp_path, findings, repo)
    if findings is not None and not any("{findings}" in a for a in case.args):
        args = ["--findings", str(findings), *args]
    cwd = tmp_path / case.cwd if case.cwd is not None else repo
    before = _state(repo)

    if case.program:
        proc = eyeful(*args, cwd=cwd)
        code = proc.returncode
    else:
        proc = review(cwd, **_options(args))
        code = proc.exit_code

    lines = proc.stderr.splitlines()
    assert code == case.code, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("eyeful: "), lines[0]
    assert case.says in lines[0]
    assert proc.stdout == ""
    assert not marker.exists(), "a project command ran"
    assert not (repo / ".git" / "eyeful" / "worktrees").exists(), "a worktree was made"
    assert _state(repo) == before
    saved = list(crashes.glob("eyeful-crash-*"))
    if case.code == 4:
        [path] = saved
        assert str(path) in lines[0]
        assert "Traceback (most recent call last)" in path.read_text()
        assert os.path.commonpath([path, repo]) != str(repo)  # never in the user's tree
    else:
        assert saved == []


def test_the_corpus_repository_would_run_its_commands(corpus, tmp_path):
    """Without a bad input, the rows' repository runs its commands: the marker means something."""
    repo, marker = corpus
    copy = tmp_path / "repo"
    shutil.copytree(repo, copy, symlinks=True)
    _confirm(copy)
    marker.unlink(missing_ok=True)
    proc = review(copy, format="json")
    assert proc.exit_code == 1, proc.stderr
    assert marker.exists()
    assert (copy / ".git" / "eyeful" / "worktrees").is_dir()
    marker.unlink()


# Repositories eyeful handles rather than refuses (point 8) ---------------------------------------


def _regressions(proc: Reviewed) -> list[str]:
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    assert proc.stderr.strip() == "" or "Traceback" not in proc.stderr
    return [r["test"] for r in json.loads(proc.stdout)["regressions"]]


@pytest.mark.parametrize("kind", ["split-index", "sparse-index"])
def test_a_split_or_sparse_index_is_read_through_git_and_left_as_it_was(tmp_path, kind):
    repo = python_project(tmp_path / "repo")
    write(repo, {"docs/guide.md": "guide\n", "docs/more/x.md": "x\n"})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "docs")
    if kind == "split-index":
        git(repo, "config", "core.splitIndex", "true")
        git(repo, "update-index", "--split-index")
        assert list((repo / ".git").glob("sharedindex.*"))
    else:
        git(repo, "sparse-checkout", "set", "--cone", "--sparse-index", "tests")
        assert "docs/" in git(repo, "ls-files", "--sparse").split()  # a sparse directory entry
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "calc.py")
    _confirm(repo)
    before = user_state(repo)
    shared = sorted(p.name for p in (repo / ".git").glob("sharedindex.*"))
    proc = review(repo, format="json")
    assert _regressions(proc) == ["tests/test_calc.py::test_add"]
    assert user_state(repo) == before
    assert sorted(p.name for p in (repo / ".git").glob("sharedindex.*")) == shared


def test_git_dir_and_work_tree_from_outside_the_work_tree(tmp_path):
    repo = python_project(tmp_path / "repo")
    write(repo, {"calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    _confirm(repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo)}
    assert "M  calc.py" in git(elsewhere, "status", "--short", env=env)  # git works there
    before = user_state(repo)
    proc = review(elsewhere, env=env, format="json")
    assert _regressions(proc) == ["tests/test_calc.py::test_add"]
    assert user_state(repo) == before
    assert list(elsewhere.iterdir()) == []


def test_help_and_readme_document_exit_code_4(tmp_path):
    text = " ".join(eyeful("-h", cwd=tmp_path).stdout.split())
    assert "4 internal error" in text
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert re.search(r"^\|\s*`?4`?\s*\|.*internal error", readme, re.MULTILINE)


# Refusals say the real reason (point 12) ---------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A checked-out tree as a reproduction or fix finds it: a file, a directory, a symlink out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    root = make_repo(tmp_path / "tree", {"calc.py": "x = 1\n", "tests/test_calc.py": "y = 1\n"})
    (root / "out").symlink_to(outside)
    return root


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../outside.txt", "'../outside.txt' leads out of the repository ('..')"),
        ("/etc/outside.txt", "'/etc/outside.txt' is absolute"),
        ("out/x.txt", "'out/x.txt' leads out of the repository through a symlink"),
        (".git/config", "'.git/config' is inside .git"),
        ("tests", "'tests' is a directory, not a file"),
        ("calc.py/test_x.py", "'calc.py/test_x.py' goes through 'calc.py', which is a file"),
    ],
)
def test_a_file_put_on_a_tree_is_refused_with_the_real_reason(tree, path, reason):
    with pytest.raises(Refused) as refused:
        Extra(files={path: "x = 1\n"}).apply(tree)
    assert str(refused.value).startswith(reason)
    assert not (tree.parent / "outside" / "x.txt").exists()


def test_a_fix_touching_dotdot_is_refused_as_leaving_not_as_a_symlink(tree):
    patch = "--- a/../outside.txt\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+x\n"
    with pytest.raises(Refused) as refused:
        Extra(patch=patch).apply(tree)
    assert str(refused.value) == "'../outside.txt' leads out of the repository ('..')"


def test_a_fix_to_a_path_holding_a_tab_is_checked_under_that_path(tree):
    """helper-58: the paths of a fix were read from `git apply --numstat -z` by the last tab of
    a record, so `__pycache__/x<TAB>calc.py` (under a directory git ignores) was checked as
    `calc.py`. A record is two counts and the path, which may hold tabs."""
    (tree / ".gitignore").write_text("__pycache__/\n", encoding="utf-8")
    patch = ('diff --git "a/__pycache__/x\\tcalc.py" "b/__pycache__/x\\tcalc.py"\n'
             "new file mode 100644\n--- /dev/null\n"
             '+++ "b/__pycache__/x\\tcalc.py"\n@@ -0,0 +1 @@\n+x = 2\n')  # fmt: skip
    assert Extra(patch=patch).patch_paths() == ["__pycache__/x\tcalc.py"]
    with pytest.raises(Refused, match="is a path git ignores"):
        Extra(patch=patch).apply(tree)
    renamed = ("diff --git a/calc.py b/renamed\tcalc.py\nsimilarity index 100%\n"
               "rename from calc.py\nrename to renamed\tcalc.py\n")  # fmt: skip
    assert Extra(patch=renamed).patch_paths() == ["renamed\tcalc.py"]  # (git names the new one)


def test_an_agent_reply_nested_too_deeply_is_an_invalid_reply_not_a_crash():
    deep = '{"a":' * 200_000 + "}" * 200_000
    with pytest.raises(ValueError, match="the reply is not valid JSON"):
        extract_json(deep)
    with pytest.raises(Unreadable, match="output is not JSON"):
        _json_values(deep)
