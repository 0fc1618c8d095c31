"""Awkward repositories and commands: each gets a clear message and the right exit code.

(Outside a repository, a bare repository and unmerged paths are rows of the bad-input corpus in
test_safety_inputs.py.)
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.core import review
from tests.gitrepo import (
    BROKEN_ADD,
    CALC,
    PYTEST_INI,
    PYTHON,
    confirm,
    eyeful_config,
    git,
    make_repo,
    python_project,
    stage,
    user_state,
    write,
)

GIT_EYEFUL = str(Path(PYTHON).parent / "git-eyeful")


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("eyeful: error: "), proc.stderr
    return lines[0]


# Unmerged paths and a merge in progress ---------------------------------------------------------


def _conflicting_project(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "ran"
    repo = python_project(tmp_path / "repo", eyeful_config(f"touch {marker}"))
    confirm(repo)
    return repo, marker


def test_a_conflicted_merge_is_exit_2(tmp_path):
    repo, marker = _conflicting_project(tmp_path)
    git(repo, "checkout", "-qb", "topic")
    write(repo, {"calc.py": "def add(a, b):\n    return 'topic'\n"})
    git(repo, "commit", "-qam", "topic")
    git(repo, "checkout", "-q", "main")
    write(repo, {"calc.py": "def add(a, b):\n    return 'main'\n"})
    git(repo, "commit", "-qam", "main")
    assert git(repo, "merge", "-q", "topic", check=False) is not None
    assert (repo / ".git" / "MERGE_HEAD").exists()
    before = user_state(repo)
    proc = review(repo)
    assert proc.exit_code == 2, proc.stdout + proc.stderr
    assert "unmerged paths" in _one_error_line(proc)
    assert not marker.exists()
    assert user_state(repo) == before


def test_a_merge_in_progress_without_conflicts_is_exit_2(tmp_path):
    repo, marker = _conflicting_project(tmp_path)
    git(repo, "checkout", "-qb", "topic")
    stage(repo, {"extra.py": "X = 1\n"})
    git(repo, "commit", "-qm", "topic")
    git(repo, "checkout", "-q", "main")
    stage(repo, {"other.py": "Y = 1\n"})
    git(repo, "commit", "-qm", "main")
    git(repo, "merge", "-q", "--no-commit", "--no-ff", "topic")
    assert (repo / ".git" / "MERGE_HEAD").exists()
    before = user_state(repo)
    proc = review(repo)
    assert proc.exit_code == 2, proc.stdout + proc.stderr
    line = _one_error_line(proc)
    assert "a merge is in progress" in line and "git merge --abort" in line
    assert not marker.exists()
    assert user_state(repo) == before


# An unborn branch -------------------------------------------------------------------------------


def _unborn(tmp_path: Path, calc: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    stage(
        repo,
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "calc.py": calc,
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
            "    assert add(2, 3) == 5\n",
        },
    )
    confirm(repo)
    return repo


def test_an_unborn_branch_reviews_the_staged_files_against_the_empty_tree(tmp_path):
    repo = _unborn(tmp_path, "def add(a, b):\n    return a + b\n")
    before = user_state(repo)
    proc = review(repo, format="json", all_tests=True)
    assert proc.exit_code == 0, proc.stdout + proc.stderr
    report = proc.json
    assert report["base"] == {
        "tree": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "commit": None,
        "label": "empty tree",
        "short": "4b825dc",
    }
    assert report["head"]["label"] == "staged"
    [run] = report["runs"]
    assert (run["side"], run["status"]) == ("change", "PASSED")
    assert run["tests"] == {"tests/test_calc.py::test_add": "passed"}
    assert git(repo, "rev-parse", "--verify", "-q", "HEAD", check=False) == ""
    assert user_state(repo) == before


def test_an_unborn_branch_failing_test_is_a_new_test_not_blocking(tmp_path):
    repo = _unborn(tmp_path, "def add(a, b):\n    return a - b\n")
    before = user_state(repo)
    proc = review(repo, format="json", all_tests=True)
    assert proc.exit_code == 0, proc.stdout + proc.stderr
    report = proc.json
    assert report["base"]["label"] == "empty tree"
    assert report["base"]["commit"] is None
    assert report["base"]["tree"] == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    assert report["regressions"] == []
    assert [(f["test"], f["kind"], f["blocking"]) for f in report["other_failures"]] == [
        ("tests/test_calc.py::test_add", "new_test", False)
    ]
    assert not [u for u in report["uncertainty"] if u["unverified"]]
    assert [(r["side"], r["status"]) for r in report["runs"]] == [
        ("change", "FAILED"),  # nothing runs on an empty base
    ]
    md = review(repo)
    assert md.exit_code == 0
    assert "`tests/test_calc.py::test_add` is new in the change and fails" in md.stdout
    assert user_state(repo) == before


def test_an_unborn_branch_with_a_suite_that_names_no_tests_does_not_block(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    check = f"{shlex.quote(sys.executable)} check.py"
    stage(repo, {"pyproject.toml": eyeful_config(check), "check.py": "raise SystemExit(1)\n"})
    confirm(repo)
    report = review(repo, format="json", all_tests=True).json
    assert report["exit_code"] == 0
    assert [(f["test"], f["kind"]) for f in report["other_failures"]] == [
        ("the test suite", "new_test")
    ]
    assert [r["side"] for r in report["runs"]] == ["change"]


# Names, contents and kinds of files -------------------------------------------------------------

READS_DATA = """from pathlib import Path

from mödule import load


def test_reads_the_data_file():
    assert load() == "expected"


def test_sees_every_awkward_name():
    root = Path(__file__).resolve().parent.parent
    assert (root / "data dir" / "input file é.txt").is_file()
    assert (root / "tests ü" / "test_dätä.py").is_file()
"""


def test_paths_with_spaces_and_non_ascii_names(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "mödule.py": "from pathlib import Path\n\n\ndef load():\n"
            "    here = Path(__file__).resolve().parent\n"
            "    return (here / 'data dir' / 'input file é.txt').read_text('utf-8').strip()\n",
            "data dir/input file é.txt": "expected\n",
            "tests ü/test_dätä.py": READS_DATA,
        },
    )
    confirm(repo)
    stage(repo, {"data dir/input file é.txt": "changed\n", "notes ñ/read me.txt": "x\n"})
    before = user_state(repo)
    proc = review(repo, format="json", all_tests=True)
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    report = proc.json
    assert [r["test"] for r in report["regressions"]] == [
        "tests ü/test_dätä.py::test_reads_the_data_file"
    ]
    change = report["runs"][0]
    base = next(r for r in report["runs"] if r["side"] == "base")
    assert change["tests"]["tests ü/test_dätä.py::test_sees_every_awkward_name"] == "passed"
    # The failing test alone on the base, its awkward id passed to test_one as it is.
    assert base["tests"] == {"tests ü/test_dätä.py::test_reads_the_data_file": "passed"}
    md = review(repo).stdout
    assert "`tests ü/test_dätä.py::test_reads_the_data_file` fails on the change" in md
    assert user_state(repo) == before


BINARY = bytes(range(256)) * 64 + b"\x00\xff\xfe\r\n\x1a"
READS_BINARY = f"""import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_binary_file_is_intact():
    data = (ROOT / "blob.bin").read_bytes()
    assert hashlib.sha256(data).hexdigest() == {__import__("hashlib").sha256(BINARY).hexdigest()!r}


def test_line_endings_are_kept():
    assert (ROOT / "crlf.txt").read_bytes() == b"one\\r\\ntwo\\r\\n"
"""


def test_binary_files_in_the_change(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "blob.bin": BINARY,
            "crlf.txt": b"one\r\ntwo\r\n",
            "tests/test_files.py": READS_BINARY,
        },
    )
    confirm(repo)
    # The change flips one byte in the middle of the binary and adds another binary file.
    broken = bytearray(BINARY)
    broken[1000] ^= 0xFF
    stage(repo, {"blob.bin": bytes(broken), "image.png": b"\x89PNG\r\n\x1a\n\x00\x00" * 100})
    before = user_state(repo)
    proc = review(repo, format="json", all_tests=True)
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    report = proc.json
    assert [r["test"] for r in report["regressions"]] == [
        "tests/test_files.py::test_binary_file_is_intact"
    ]
    # Both sides' files arrived byte for byte: CRLF untouched, and the base's binary intact.
    change = report["runs"][0]
    base = next(r for r in report["runs"] if r["side"] == "base")
    assert change["tests"]["tests/test_files.py::test_line_endings_are_kept"] == "passed"
    assert base["status"] == "PASSED"
    assert user_state(repo) == before


READS_LINKS = """import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_current_is_good():
    assert os.path.islink(ROOT / "current.txt")
    assert (ROOT / "current.txt").read_text().strip() == "good"


def test_directory_link():
    assert os.path.islink(ROOT / "lib")
    assert (ROOT / "lib" / "good.txt").read_text().strip() == "good"
"""


def test_symlinks_in_the_change(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "data/good.txt": "good\n",
            "data/bad.txt": "bad\n",
            "tests/test_links.py": READS_LINKS,
        },
    )
    confirm(repo)
    # The change adds a directory link and a file link, pointing the file link at the wrong file.
    (repo / "lib").symlink_to("data")
    (repo / "current.txt").symlink_to("data/bad.txt")
    git(repo, "add", "-A")
    before = user_state(repo)
    proc = review(repo, format="json", all_tests=True)
    # The base lacks the link: the test fails there by another cause (no link), a question that
    # leaves the change unverified (exit 3), never pre-existing.
    assert proc.exit_code == 3, proc.stdout + proc.stderr
    report = proc.json
    assert [(f["test"], f["kind"]) for f in report["other_failures"]] == [
        ("tests/test_links.py::test_current_is_good", "fails_otherwise")
    ]
    change = report["runs"][0]
    assert change["tests"] == {
        "tests/test_links.py::test_current_is_good": "failed",
        "tests/test_links.py::test_directory_link": "passed",
    }
    assert user_state(repo) == before
    # Committed and then retargeted, the same link is a regression.
    (repo / "current.txt").unlink()
    (repo / "current.txt").symlink_to("data/good.txt")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "links")
    (repo / "current.txt").unlink()
    (repo / "current.txt").symlink_to("data/bad.txt")
    git(repo, "add", "-A")
    before = user_state(repo)
    proc = review(repo, format="json", all_tests=True)
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    assert [r["test"] for r in proc.json["regressions"]] == [
        "tests/test_links.py::test_current_is_good"
    ]
    assert user_state(repo) == before


@pytest.mark.parametrize("recurse", [False, True], ids=["plain", "submodule.recurse"])
def test_a_submodule_is_left_out_and_the_uncertainty_checklist_says_so(tmp_path, recurse):
    library = make_repo(tmp_path / "library", {"README": "library\n"})
    repo = python_project(tmp_path / "repo")
    confirm(repo)
    git(
        repo,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(library),
        "vendor/lib",
    )
    git(repo, "commit", "-q", "-m", "vendor the library")  # the change does not move it
    if recurse:
        # helper-63: git's checkout in eyeful's worktree then went into the submodule, which
        # eyeful never fills, and failed: every review ended with exit 2.
        git(repo, "config", "submodule.recurse", "true")
    # The project's test proves the submodule's files are not there in eyeful's worktree.
    stage(
        repo,
        {
            "tests/test_vendor.py": "from pathlib import Path\n\n\ndef test_no_submodule_files():\n"
            "    root = Path(__file__).resolve().parent.parent\n"
            "    assert not (root / 'vendor' / 'lib' / 'README').exists()\n"
        },
    )
    before = user_state(repo)
    proc = review(repo, format="json", all_tests=True)
    assert proc.exit_code == 0, proc.stdout + proc.stderr
    report = proc.json
    assert report["runs"][0]["tests"]["tests/test_vendor.py::test_no_submodule_files"] == "passed"
    submodule_lines = [u for u in report["uncertainty"] if "submodule" in u["text"]]
    assert submodule_lines == [
        {
            "text": "submodule `vendor/lib` was left out: eyeful does not check out submodules",
            "unverified": False,
            "finding": None,
        }
    ]
    assert not [u for u in report["uncertainty"] if u["unverified"]]
    md = review(repo).stdout
    uncertainty = md.split("### Uncertainty")[1]
    assert "- [ ] submodule `vendor/lib` was left out" in uncertainty
    assert user_state(repo) == before


def test_a_change_that_points_a_link_out_of_the_repository_cannot_be_clean(tmp_path):
    # vendor/mathlib leads out of the repository (`../../ext/...`): in eyeful's worktrees, which
    # lie elsewhere, it dangles on both sides, so the import fails alike there; the change
    # points it at a broken version. Not tested, so not clean (helper-46).
    ext = tmp_path / "ext"
    for version, body in (("1.0", CALC), ("2.0", BROKEN_ADD)):
        (ext / version / "mathlib").mkdir(parents=True)
        (ext / version / "mathlib" / "__init__.py").write_text(body)
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(), "pytest.ini": "[pytest]\npythonpath = . vendor\n",
        "tests/test_calc.py": "from mathlib import add\n\n\ndef test_add():\n"
        "    assert add(2, 3) == 5\n",
    })  # fmt: skip
    (repo / "vendor").mkdir()
    (repo / "vendor" / "mathlib").symlink_to("../../ext/1.0/mathlib")
    git(repo, "add", "vendor")
    git(repo, "commit", "-q", "-m", "vendor mathlib 1.0")
    confirm(repo)
    (repo / "vendor" / "mathlib").unlink()
    (repo / "vendor" / "mathlib").symlink_to("../../ext/2.0/mathlib")
    git(repo, "add", "vendor")
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.stdout
    notes = [
        u for u in proc.json["uncertainty"] if "points a link out of the repository" in u["text"]
    ]
    assert [u["unverified"] for u in notes] == [True], proc.json["uncertainty"]


def test_a_change_that_moves_a_submodule_cannot_be_clean(tmp_path):
    # The code lives in a submodule; the change only points it at a commit that breaks `add`.
    # eyeful does not check submodules out, so the tests fail alike on both sides: what the bump
    # changes was never tested, and that is no clean (helper-44's case).
    library = make_repo(tmp_path / "library", {"mathlib.py": CALC})
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(), "pytest.ini": "[pytest]\npythonpath = . vendor/lib\n",
        "tests/test_calc.py": "from mathlib import add\n\n\ndef test_add():\n"
        "    assert add(2, 3) == 5\n",
    })  # fmt: skip
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library),
        "vendor/lib")  # fmt: skip
    git(repo, "commit", "-q", "-m", "vendor the library")
    confirm(repo)
    (library / "mathlib.py").write_text(BROKEN_ADD)
    git(library, "commit", "-q", "-am", "break add")
    git(repo / "vendor" / "lib", "pull", "-q")
    git(repo, "add", "vendor/lib")
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.stdout
    moved = [u for u in proc.json["uncertainty"] if "moves submodule `vendor/lib`" in u["text"]]
    assert [u["unverified"] for u in moved] == [True]
    assert not [u for u in proc.json["uncertainty"] if "was left out" in u["text"]]


# Moved and copied repositories, and what a killed git leaves behind ------------------------------


@pytest.mark.parametrize("how", ["moved", "copied"])
def test_a_moved_or_copied_repository_still_reviews(tmp_path, how):
    repo = python_project(tmp_path / "repo")
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    assert review(repo).exit_code == 1  # eyeful's worktrees now exist inside .git
    elsewhere = tmp_path / "elsewhere"
    if how == "moved":
        shutil.move(repo, elsewhere)
    else:
        shutil.copytree(repo, elsewhere, symlinks=True)
    confirm(elsewhere)  # confirmations are per repository path
    stage(elsewhere, {"calc.py": BROKEN_ADD + "\n# a new tree, so not from the cache\n"})
    before = user_state(elsewhere)
    proc = review(elsewhere, format="json")
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    assert [r["test"] for r in proc.json["regressions"]] == ["tests/test_calc.py::test_add"]
    assert user_state(elsewhere) == before
    if how == "copied":
        # The original is untouched by the copy's review and still reviews on its own.
        original = user_state(repo)
        stage(repo, {"calc.py": BROKEN_ADD + "\n# the original's own change\n"})
        proc = review(repo, format="json", all_tests=True)
        assert proc.exit_code == 1, proc.stdout + proc.stderr
        assert original["HEAD"] == user_state(repo)["HEAD"]


def _eyeful_admin_dirs(repo: Path) -> list[Path]:
    return [p for p in (repo / ".git" / "worktrees").iterdir() if (p / "gitdir").is_file()]


def test_a_lock_file_left_by_a_killed_git_does_not_break_later_runs(tmp_path):
    repo = python_project(tmp_path / "repo")
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    assert review(repo).exit_code == 1
    admins = _eyeful_admin_dirs(repo)
    assert admins
    for admin in admins:
        # What a git killed in the middle of a checkout leaves in the worktree's admin directory.
        (admin / "index.lock").write_bytes(b"")
        (admin / "HEAD.lock").write_bytes(b"")
    stage(repo, {"calc.py": BROKEN_ADD + "\n# again\n"})
    proc = review(repo, format="json", all_tests=True)
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    assert [r["test"] for r in proc.json["regressions"]] == ["tests/test_calc.py::test_add"]


def test_sigterm_during_a_large_checkout_leaves_the_next_run_working(tmp_path):
    # 1,000 files, 24 MB: the checkout takes long enough to be caught (every try caught it,
    # exit 130), and costs a fraction of 20,000 small files' git add and tree walks.
    files: dict[str, str | bytes] = {
        f"data/d{i}/f{j}.txt": f"{i} {j}\n" * 4000 for i in range(20) for j in range(50)
    }
    files["pyproject.toml"] = eyeful_config("true")
    repo = make_repo(tmp_path / "repo", files)
    confirm(repo)
    stage(repo, {"new.txt": "x\n"})
    before = user_state(repo)
    proc = subprocess.Popen(
        [GIT_EYEFUL],
        cwd=repo,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    admin_area = repo / ".git" / "worktrees"
    deadline = time.monotonic() + 60
    try:
        # SIGTERM (a hook runner's or CI's timeout) while git writes the worktree's index.
        while not list(admin_area.glob("*/index.lock")) and proc.poll() is None:
            assert time.monotonic() < deadline, "the checkout never started"
            time.sleep(0.002)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode in (0, 130), out + err  # 0 only if it finished before the signal
    assert user_state(repo) == before
    again = review(repo)
    assert again.exit_code == 0, again.stdout + again.stderr
    assert user_state(repo) == before


# A command that prints megabytes ----------------------------------------------------------------

SPAM = """import sys
if open("mode.txt").read().strip() == "quiet":
    sys.exit(0)
out = sys.stdout
if {one_line}:
    piece = "x" * 100_000
    for _ in range(200):  # 20 MB without a newline
        out.write(piece)
    out.write("\\n")
else:
    chunk = ("spam " * 19 + "\\n") * 10_000  # 96-byte lines
    for _ in range(26):  # 25 MB: more than the 16 MiB over its baseline eyeful may take
        out.write(chunk)
out.write("AssertionError: the end of the output\\n")
sys.exit(1)
"""

MEASURE = """import json, resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    proc = subprocess.run(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"rc": proc.returncode, "peak_kb": peak}))
"""


def _measured(repo: Path, out: Path, *args: str) -> tuple[int, int]:
    """Exit code and peak RSS (KiB) of eyeful and everything it waited for, from a fresh process."""
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, str(out), GIT_EYEFUL, *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    data = json.loads(proc.stdout)
    return data["rc"], data["peak_kb"]


@pytest.mark.parametrize("one_line", [False, True], ids=["25MB-of-lines", "20MB-line"])
def test_a_command_printing_megabytes_keeps_output_and_memory_bounded(tmp_path, one_line):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(f"{shlex.quote(PYTHON)} spam.py", extra="reruns = 1"),
            "spam.py": SPAM.format(one_line=one_line),
            "mode.txt": "quiet\n",
        },
    )
    confirm(repo)
    stage(repo, {"mode.txt": "loud\n"})
    before = user_state(repo)
    out = tmp_path / "report.json"
    code, peak_kb = _measured(repo, out, "--format", "json")
    assert code == 1, out.read_text()
    report = json.loads(out.read_text())
    assert out.stat().st_size < 100_000
    change, base = report["runs"]
    assert change["status"] == "FAILED" and base["status"] == "PASSED"
    assert len(change["tail"]) <= 8000
    printed_last = "x" * 2000 + "\n" if one_line else ("spam " * 19 + "\n") * 20
    assert change["tail"].endswith(printed_last + "AssertionError: the end of the output\n")
    [regression] = report["regressions"]
    assert regression["test"] == "the test suite"
    assert regression["excerpt"].endswith("AssertionError: the end of the output")
    assert len(regression["excerpt"]) <= 8000
    # A review that runs no command: eyeful's own baseline.
    code_idle, baseline_kb = _measured(repo, tmp_path / "idle.json", "--level", "read_only")
    assert code_idle == 0
    assert peak_kb < 200 * 1024, f"peak RSS {peak_kb} KiB"
    # Flat: the output costs next to nothing over eyeful's own footprint (~50 MiB).
    assert peak_kb - baseline_kb < 16 * 1024, f"peak {peak_kb} KiB, baseline {baseline_kb} KiB"
    md = review(repo)
    assert md.exit_code == 1
    assert len(md.stdout) < 20_000
    assert user_state(repo) == before


def test_a_file_added_with_intent_to_add_is_not_in_the_change(tmp_path):
    """helper-58: `git add -N` records a path without its content; git leaves it out of the tree
    it writes (a commit now would not have it), and so does eyeful. It reviewed it as an empty
    file, which shadowed the standard library's `fractions` and blocked on an ImportError."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "tests/test_frac.py": "from fractions import Fraction\n\n\ndef test_half():\n"
            "    assert Fraction(1, 2) * 2 == 1\n",
        },
    )
    confirm(repo)
    write(repo, {"fractions.py": "# work in progress\n"})
    git(repo, "add", "-N", "fractions.py")
    before = user_state(repo)
    proc = review(repo, format="json")
    assert proc.exit_code == 0 and not proc.json["runs"], proc.markdown  # nothing to review
    assert user_state(repo) == before
    write(repo, {"tests/test_more.py": "def test_more():\n    pass\n"})
    git(repo, "add", "tests/test_more.py")
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.markdown
    [run] = proc.json["runs"]
    assert (run["status"], run["counts"]) == ("PASSED", {"passed": 2}), run


def test_a_work_tree_apart_from_its_git_dir_is_reviewed(tmp_path):
    """helper-63: GIT_DIR and GIT_WORK_TREE (a "dotfiles" repository, a bare one used with a
    work tree): the work tree has no `.git`, and eyeful's `git worktree add`, run there without
    the variables hooks must not pass on, failed: every review ended with exit 2."""
    repo = python_project(tmp_path / "repo")
    confirm(repo)
    (repo / ".git").rename(tmp_path / "repo.git")
    env = {**os.environ, "GIT_DIR": str(tmp_path / "repo.git"), "GIT_WORK_TREE": str(repo)}
    write(repo, {"calc.py": (repo / "calc.py").read_text() + "\n\ndef neg(a):\n    return -a\n"})
    git(repo, "add", "calc.py", env=env)
    index = tmp_path / "repo.git" / "index"
    before = (index.read_bytes(), git(repo, "status", "--porcelain", env=env))
    done = review(repo, env=env, format="json")
    assert done.exit_code == 0, done.stdout + done.stderr
    assert [(r["side"], r["status"]) for r in done.json["runs"]] == [("change", "PASSED")]
    assert (index.read_bytes(), git(repo, "status", "--porcelain", env=env)) == before
