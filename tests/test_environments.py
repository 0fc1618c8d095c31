"""Where project commands run, and a runner that could not run.

Real virtualenvs made here stand for the user's environment; eyeful's own per-worktree
virtualenvs are made by eyeful, for real. Creating a virtualenv costs seconds: they are shared
per module and kept few.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.core import review
from tests.gitrepo import (
    BROKEN_ADD,
    CALC,
    CALC_TESTS,
    PYTEST,
    PYTHON,
    confirm,
    eyeful,
    eyeful_config,
    git,
    make_repo,
    python_project,
    report_json,
    stage,
    user_state,
    write,
)

ROOT = Path(__file__).resolve().parent.parent
USER_PYTEST = "python -m pytest -q -p no:cacheprovider"


# --- a runner that could not run is ERROR (exit 3), never FAILED --------------------------------


@pytest.fixture(scope="module")
def python_without_pytest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin directory of a real virtualenv whose `python` has no pytest."""
    venv = tmp_path_factory.mktemp("no-pytest") / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    return venv / "bin"


def test_a_python_without_pytest_is_could_not_verify_not_pre_existing(
    tmp_path, python_without_pytest
):
    repo = python_project(tmp_path / "repo", eyeful_config(USER_PYTEST))
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    env = dict(os.environ, PATH=f"{python_without_pytest}{os.pathsep}{os.environ['PATH']}")
    proc = review(repo, env=env, format="json")
    report = proc.json
    assert proc.exit_code == 3, proc.stdout
    assert report["outcome"] == "unverified"
    (run,) = report["runs"]  # nothing ran on the base: there is nothing to compare
    assert (run["side"], run["status"]) == ("change", "ERROR")
    assert "has no pytest (No module named pytest)" in run["reason"]
    assert report["other_failures"] == [] and report["regressions"] == []
    checklist = [u["text"] for u in report["uncertainty"] if u["unverified"]]
    assert any("No module named pytest" in line and "install pytest" in line for line in checklist)

    markdown = review(repo, env=env)
    assert markdown.exit_code == 3
    assert "No module named pytest" in markdown.stdout


INTERNAL_ERROR = "def pytest_collection_finish(session):\n    raise RuntimeError('plugin bug')\n"
INTERRUPT = "def pytest_collection_finish(session):\n    raise KeyboardInterrupt\n"


@pytest.mark.parametrize(
    ("test", "extra", "staged", "reason"),
    [
        ("pytst -q", "", {}, "could not start: `pytst` was not found on PATH (exit 127)"),
        (f"{PYTEST} --no-such-option", "", {}, "exit 4, usage error"),
        (f"{PYTEST} -k no_such_test", "", {}, "pytest collected no tests (exit 5)"),
        (PYTEST, "", {"conftest.py": INTERNAL_ERROR}, "internal error (exit 3)"),
        (PYTEST, "", {"conftest.py": INTERRUPT}, "interrupted before it reported any test"),
        (
            PYTEST,
            'junit = "build/junit.xml"',
            {},
            "did not write the JUnit report build/junit.xml",
        ),
    ],
    ids=["127", "usage", "no-tests", "internal", "interrupted", "junit-not-written"],
)
def test_a_runner_that_could_not_run_is_error_exit_3(tmp_path, test, extra, staged, reason):
    repo = python_project(tmp_path / "repo", eyeful_config(test, extra=extra))
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD, **staged})
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 3, proc.stdout
    (run,) = report["runs"]
    assert run["status"] == "ERROR", run
    assert reason in run["reason"], run["reason"]
    assert any(reason in u["text"] and u["unverified"] for u in report["uncertainty"])


def test_a_base_without_tests_is_still_no_tests_there_not_an_error(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        # No test_one (none derived behind `env`): the base's whole suite runs, and pytest finds
        # no test there (exit 5).
        {"pyproject.toml": eyeful_config(f"env {PYTEST} -rA"),
         "pytest.ini": "[pytest]\npythonpath = .\n", "calc.py": BROKEN_ADD},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
                  "    assert add(2, 3) == 5\n"})  # fmt: skip
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 0, proc.stdout
    assert [(r["side"], r["status"]) for r in report["runs"]] == [
        ("change", "FAILED"),
        ("base", "FAILED"),
    ]
    assert [(f["test"], f["kind"]) for f in report["other_failures"]] == [
        ("tests/test_calc.py::test_add", "new_test")
    ]


# --- project commands run in eyeful's own virtualenv, never the user's ---------------------------

TINY_PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tinypkg"
version = "0.1"

[tool.setuptools.packages.find]
where = ["src"]

"""
# A src layout: the tests can only import tinypkg through an install, never from the checkout.
TINY = "def double(x):\n    return 2 * x\n"
TINY_TESTS = """import tinypkg


def test_double():
    assert tinypkg.double(3) == 6


def test_imported_from_the_checkout_under_test():
    import os
    assert tinypkg.__file__.startswith(os.getcwd()), tinypkg.__file__
"""


def _readme_config() -> str:
    """The README's configuration example, as a user copies it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1]
    return section.split("```toml\n", 1)[1].split("```", 1)[0]


def _fingerprint(venv: Path) -> dict[str, object]:
    """The user's environment: what pip says of it, and every file in it."""
    pip = str(venv / "bin" / "pip")
    files: dict[str, str] = {}
    for path in sorted(venv.rglob("*")):
        if "__pycache__" in path.parts or path.is_dir():
            continue
        files[str(path.relative_to(venv))] = (
            "link:" + os.readlink(path)
            if path.is_symlink()
            else hashlib.sha256(path.read_bytes()).hexdigest()
        )
    freeze = subprocess.run([pip, "freeze"], capture_output=True, text=True, check=True).stdout
    listed = subprocess.run(
        [pip, "list", "-v", "--format", "json"], capture_output=True, text=True, check=True
    ).stdout
    return {"freeze": freeze, "list": listed, "files": files}


def test_setup_installs_into_eyefuls_virtualenv_and_the_base_imports_the_base(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": TINY_PYPROJECT + _readme_config(),
            "src/tinypkg/__init__.py": TINY,
            "tests/test_tiny.py": TINY_TESTS,
        },
    )
    # The user's own environment: a virtualenv with the project installed editable from the
    # working tree, the way a developer works, and active on PATH.
    user = tmp_path / "user-venv"
    subprocess.run([PYTHON, "-m", "virtualenv", "-q", str(user)], check=True)
    subprocess.run(
        [str(user / "bin" / "pip"), "install", "-q", "--no-build-isolation", "-e", str(repo)],
        check=True,
        capture_output=True,
    )
    env = dict(
        os.environ,
        VIRTUAL_ENV=str(user),
        PATH=f"{user / 'bin'}{os.pathsep}{os.environ['PATH']}",
    )
    (repo / ".gitignore").write_text("src/*.egg-info/\n")  # what the user's install left
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore")
    assert eyeful("confirm", "--yes", cwd=repo, env=env).returncode == 0
    stage(repo, {"src/tinypkg/__init__.py": "def double(x):\n    return x + x + 1\n"})
    before = _fingerprint(user)

    proc = review(repo, env=env, jobs=1, format="json")
    report = proc.json
    assert _fingerprint(user) == before  # setup's `pip install -e .` went elsewhere
    assert proc.exit_code == 1, proc.stdout
    ran = [(r["side"], r["name"], r["status"]) for r in report["runs"]]
    assert ran[:2] == [("change", "setup", "PASSED"), ("change", "test", "FAILED")]
    # The live confirmation: the test alone fails on the change and passes on the base, which
    # imports the base's code (the same virtualenv, re-checked-out).
    alone = {(side, status) for side, name, status in ran[2:] if name == "test_one"}
    assert alone == {("change", "FAILED"), ("base", "PASSED")}, ran
    assert all(status == "PASSED" for _, name, status in ran[2:] if name == "setup"), ran
    # (Read from the configured JUnit report, which pytest writes as xunit2: node ids all the same.)
    assert [(r["test"], r["kind"]) for r in report["regressions"]] == [
        ("tests/test_tiny.py::test_double", "regression")
    ]
    assert report["other_failures"] == []
    assert (repo / ".git" / "eyeful" / "venvs" / "wt-0" / "bin" / "python").exists()

    # A second change on the same worktree: its virtualenv is kept and setup is not rerun.
    stage(repo, {"src/tinypkg/__init__.py": "def double(x):\n    return 2 * x  # same\n"})
    proc = review(repo, env=env, jobs=1, format="json")
    report = proc.json
    assert proc.exit_code == 0, proc.stdout
    assert [(r["side"], r["name"], r["status"]) for r in report["runs"]] == [
        ("change", "test", "PASSED")
    ]
    assert _fingerprint(user) == before


def test_a_pythonpath_into_your_tree_points_into_the_worktree_instead(tmp_path, monkeypatch):
    """`export PYTHONPATH=$PWD/src` (a src layout) must not make the worktrees import your tree.

    Otherwise the base's run imports your working tree's (changed) code, fails as the change
    does, and a real regression reads as pre-existing.
    """
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "src/calc.py": CALC,
            "tests/test_calc.py": CALC_TESTS,
        },
    )
    confirm(repo)
    monkeypatch.setenv("PYTHONPATH", f"{repo / 'src'}{os.pathsep}relative/stays")
    write(repo, {"src/calc.py": BROKEN_ADD})
    git(repo, "add", "-A")
    proc = review(repo, format="json")
    report = json.loads(proc.stdout)
    assert proc.exit_code == 1, proc.stdout + proc.stderr
    assert [f["test"] for f in report["regressions"]] == ["tests/test_calc.py::test_add"]


def test_the_files_a_run_imported_from_your_tree_are_found_through_symlinks(tmp_path):
    # Resolved a directory at a time (eyeful/imports.py): the same answer as each file resolved.
    from eyeful.imports import from_user_tree

    tree, elsewhere = tmp_path / "tree", tmp_path / "elsewhere"
    for path in (tree / "pkg" / "mod.py", tree / ".git" / "eyeful" / "wt" / "mod.py",
                 elsewhere / "lib" / "other.py"):  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
    (elsewhere / "into").symlink_to(tree / "pkg")  # a directory linked into your tree
    (elsewhere / "lib" / "linked.py").symlink_to(tree / "pkg" / "mod.py")  # a file linked
    (elsewhere / "lib" / "dangling.py").symlink_to(tmp_path / "gone.py")
    imported = [
        str(tree / "pkg" / "mod.py"),
        str(tree / ".git" / "eyeful" / "wt" / "mod.py"),  # eyeful's worktrees: not your tree
        str(elsewhere / "lib" / "other.py"),
        str(elsewhere / "into" / "mod.py"),
        str(elsewhere / "lib" / "linked.py"),
        str(elsewhere / "lib" / "dangling.py"),
        str(elsewhere / "lib" / ".." / ".." / "tree" / "pkg" / "mod.py"),
        "<frozen importlib._bootstrap>",
    ]
    expected = [imported[0], imported[3], imported[4], imported[6]]
    assert from_user_tree(imported, tree) == [Path(name) for name in expected]
    assert from_user_tree(imported, elsewhere) == [Path(imported[2])]  # the others lead out


# --- the cache key covers the interpreter, its distributions and PYTHONPATH ----------------------

DEP_CALC = "import tinydep\n\n\ndef answer():\n    return tinydep.answer()\n"
DEP_CALC_CHANGED = "import tinydep\n\n\ndef answer():\n    return tinydep.answer() + 1\n"
DEP_TESTS = "from calc import answer\n\n\ndef test_answer():\n    assert answer() == 42\n"


def _wheel(where: Path, version: str, answer: int) -> Path:
    """A wheel of `tinydep` VERSION whose answer() is ANSWER, written here (no build, no index)."""
    import base64
    import zipfile

    files = {
        "tinydep.py": f"def answer():\n    return {answer}\n",
        f"tinydep-{version}.dist-info/METADATA": (
            f"Metadata-Version: 2.1\nName: tinydep\nVersion: {version}\n"
        ),
        f"tinydep-{version}.dist-info/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = ""
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record += f"{name},sha256={digest.decode()},{len(text.encode())}\n"
    record += f"tinydep-{version}.dist-info/RECORD,,\n"
    path = where / f"tinydep-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in {**files, f"tinydep-{version}.dist-info/RECORD": record}.items():
            wheel.writestr(name, text)
    return path


def _pip_install(venv: Path, wheel: Path) -> None:
    """`pip install` into ``venv`` (pip runs from this interpreter: the venv has no pip)."""
    subprocess.run(
        [PYTHON, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
         "--no-index", "--no-deps", "--disable-pip-version-check", str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip


def _user_venv(where: Path) -> Path:
    """The user's environment: a real virtualenv whose `python` finds pytest (through a `.pth`
    naming this interpreter's site-packages, quicker than installing it)."""
    import sysconfig

    venv = where / "user-venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = (venv / "lib").glob("python*/site-packages")
    (site / "zz_eyeful_tests.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def _kinds(report: dict) -> list[tuple[str, str]]:
    return [(f["test"], f["kind"]) for f in report["regressions"] + report["other_failures"]]


def test_a_distribution_installed_since_is_not_served_from_the_cache(tmp_path):
    """`pip install -U` in the interpreter the tests use changes what they do: the runs cached
    before it are not served, and the verdict follows the environment as it is now."""
    repo = make_repo(
        tmp_path / "repo",
        {
            # No test_one (none derived behind `env`): the base's whole suite runs, and is cached.
            "pyproject.toml": eyeful_config(f"env {USER_PYTEST}"),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": DEP_CALC,
            "tests/test_calc.py": DEP_TESTS,
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": DEP_CALC_CHANGED})
    venv = _user_venv(tmp_path)
    _pip_install(venv, _wheel(tmp_path, "1.0", 42))
    env = dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")

    first = review(repo, format="json", env=env).json
    assert [(r["side"], r["status"], r["cached"]) for r in first["runs"]] == [
        ("change", "FAILED", False),
        ("base", "PASSED", False),
    ]
    assert _kinds(first) == [("tests/test_calc.py::test_answer", "unconfirmed")]
    again = review(repo, format="json", env=env).json
    # The key is stable: the change's run is served; the base's decides, so it always runs.
    assert [r["cached"] for r in again["runs"]] == [True, False]

    _pip_install(venv, _wheel(tmp_path, "2.0", 43))  # an upgrade: the base fails as well now
    after = review(repo, format="json", env=env).json
    assert [(r["side"], r["status"], r["cached"]) for r in after["runs"]] == [
        ("change", "FAILED", False),
        ("base", "FAILED", False),
    ]
    assert _kinds(after) == [("tests/test_calc.py::test_answer", "pre_existing")]


def test_a_pythonpath_changed_since_is_not_served_from_the_cache(tmp_path):
    """PYTHONPATH is part of the key, for the runs and for the review given again unchanged."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": DEP_CALC,
            "tests/test_calc.py": DEP_TESTS,
        },
    )
    confirm(repo)
    stage(repo, {"tests/test_more.py": "def test_more():\n    pass\n"})
    good, bad = tmp_path / "good", tmp_path / "bad"
    write(good, {"tinydep.py": "def answer():\n    return 42\n"})
    write(bad, {"tinydep.py": "def answer():\n    return 41\n"})
    with_good = dict(os.environ, PYTHONPATH=str(good))
    with_bad = dict(os.environ, PYTHONPATH=str(bad))

    ran = eyeful(cwd=repo, env=with_good)  # the quick path
    assert ran.returncode == 0, ran.stdout + ran.stderr
    clean = eyeful(cwd=repo, env=with_good)  # all served from the cache: remembered
    assert "(cached: ran" in clean.stdout and "test_answer" not in clean.stdout
    assert eyeful(cwd=repo, env=with_good).stdout == clean.stdout  # given again
    served = report_json(eyeful("--format", "json", cwd=repo, env=with_good))
    assert [(r["side"], r["status"], r["cached"]) for r in served["runs"]] == [
        ("change", "PASSED", True)
    ]

    changed = eyeful(cwd=repo, env=with_bad)
    assert "test_answer" in changed.stdout, changed.stdout  # not the remembered review
    report = report_json(eyeful("--format", "json", cwd=repo, env=with_bad))
    assert (report["runs"][0]["side"], report["runs"][0]["status"]) == ("change", "FAILED")
    assert _kinds(report) == [("tests/test_calc.py::test_answer", "pre_existing")]


def test_a_runners_variable_changed_since_is_not_served_from_the_cache(tmp_path, monkeypatch):
    """helper-53: a review under `PYTEST_ADDOPTS=--ignore=tests/integration` (clean: the broken
    test was not collected), then one without, as the hook runs it: it was served the first's
    run, clean. The variables the runners read are in the key (and so in the fingerprint of a
    review given again), and the go command's own environment file too."""
    from eyeful.environment import environment_key

    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": CALC,
            "tests/unit/test_mul.py": "from calc import mul\n\n\ndef test_mul():\n"
            "    assert mul(2, 3) == 6\n",
            "tests/integration/test_add.py": "from calc import add\n\n\ndef test_add():\n"
            "    assert add(2, 3) == 5\n",
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    narrowed = dict(os.environ, PYTEST_ADDOPTS="--ignore=tests/integration")
    assert review(repo, env=narrowed, format="json").exit_code == 0
    again = review(repo, format="json")
    assert not any(r["cached"] for r in again.json["runs"]), again.json["runs"]
    assert _kinds(again.json) == [("tests/integration/test_add.py::test_add", "regression")]
    assert again.exit_code == 1, again.markdown

    keys = [environment_key([], repo)]
    monkeypatch.setenv("LC_ALL", "C")
    keys.append(environment_key([], repo))
    monkeypatch.setenv("PYTHONOPTIMIZE", "1")  # asserts stripped (helper-55)
    keys.append(environment_key([], repo))
    monkeypatch.setenv("PYTEST_CURRENT_TEST", "tests/test_x.py::test_y (call)")  # pytest's own
    keys.append(environment_key([], repo))
    go_env = Path(os.environ["XDG_CONFIG_HOME"]) / "go" / "env"
    go_env.parent.mkdir(parents=True)
    go_env.write_text("GOFLAGS=-failfast\n", encoding="utf-8")  # what `go env -w` writes
    keys.append(environment_key([], repo))
    # What go builds (helper-57: a file under `//go:build !cgo` the change broke, its clean run
    # under CGO_ENABLED=1 served to a review under CGO_ENABLED=0; GOARCH=386 the same).
    for name, value in [("CGO_ENABLED", "0"), ("GOARCH", "386"), ("GOEXPERIMENT", "rangefunc"),
                        ("GODEBUG", "panicnil=1"), ("CC", "clang")]:  # fmt: skip
        monkeypatch.setenv(name, value)
        keys.append(environment_key([], repo))
    assert len({json.dumps(key, sort_keys=True) for key in keys}) == 9, keys
    assert keys[3] == keys[2]


def test_an_interpreter_that_cannot_run_is_a_stable_marker_in_the_key(tmp_path, monkeypatch):
    from eyeful.environment import environment_key

    bin_dir = tmp_path / "bin"
    write(bin_dir, {"python": "#!/bin/sh\nexit 3\n", "python3": "#!/bin/sh\necho hello\n"})
    for name in ("python", "python3"):
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    key = environment_key([], tmp_path)
    assert key["interpreters"] == {
        "python": {"unusable": "exit 3"},
        "python3": {"unusable": "exit 0"},  # it ran, but did not say what it is
    }
    assert environment_key([], tmp_path) == key
    (bin_dir / "python").unlink()
    assert environment_key([], tmp_path)["interpreters"] == {"python3": {"unusable": "exit 0"}}


def test_an_interpreter_is_asked_without_importing_json_or_hashlib(tmp_path):
    # One process per interpreter on every review and replay: json and hashlib would double its
    # CPU (issue 37). It says what it read; eyeful makes the digest, the same one as before.
    import ast
    import sys

    from eyeful.environment import _PROBE, _Probe, environment_key

    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", _PROBE], cwd=tmp_path,
                          capture_output=True, text=True, check=True)  # fmt: skip
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()}
    assert "os" in imported  # the trace is there
    assert not imported & {"json", "hashlib", "_hashlib", "re"}, sorted(imported)
    said = _Probe(sys.executable, os.environ, tmp_path, site=True).result()
    assert said["executable"] == sys.executable and said["version"] == sys.version
    path = subprocess.run(
        [sys.executable, "-c", "import sys; print(repr(sys.path))"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    digest = hashlib.sha256()
    for entry in ast.literal_eval(path):  # what the probe reads, as its digest covered it before
        if not entry or not os.path.isabs(entry):
            continue
        digest.update(f"path {entry}".encode("utf-8", "surrogateescape") + b"\0")
        if not os.path.isdir(entry):  # a zip file, or none
            st = _stat(entry)
            digest.update((f"{st.st_mtime_ns}:{st.st_size}" if st else "-").encode() + b"\0")
            continue
        for name in sorted(os.listdir(entry)):
            if name.endswith((".dist-info", ".egg-info", ".egg-link", ".egg", ".pth")):
                stamps = [
                    f"{st.st_mtime_ns}:{st.st_size}" if st else "-"
                    for st in (
                        _stat(os.path.join(entry, name, sub))
                        for sub in ("", "METADATA", "PKG-INFO")
                    )
                ]
                digest.update(" ".join([name, *stamps]).encode("utf-8", "surrogateescape") + b"\0")
    assert said["distributions"] == digest.hexdigest()
    assert environment_key([], tmp_path) == environment_key([], tmp_path)


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path.rstrip(os.sep))
    except OSError:
        return None


def test_pytest_configuration_in_your_tree_is_not_the_reviewed_trees(tmp_path):
    """Neither side has a pytest configuration; the working tree has one, untracked. pytest,
    looking upward from eyeful's worktree (under `.git`), found it and ran both sides with it:
    ids like `.git/eyeful/worktrees/wt-0/tests/...`, and whatever it says (`-k`) decided. Each
    side now runs as in a clone of its tree, where nothing lies above: with no configuration."""
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(), "calc.py": CALC,
                                         "tests/test_calc.py": CALC_TESTS})  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": BROKEN_ADD})
    write(repo, {"pytest.ini": '[pytest]\naddopts = -k "not test_add"\n'})
    before = user_state(repo)
    done = review(repo, format="json")
    assert done.exit_code == 1, done.markdown
    assert [f["test"] for f in done.json["regressions"]] == ["tests/test_calc.py::test_add"]
    assert user_state(repo) == before


def test_a_change_that_adds_the_pytest_configuration_the_base_lacks_compares_alike(tmp_path):
    """The change adds `[tool.pytest.ini_options]` to a pyproject.toml whose base has none, and a
    test fails on both sides alike (helper-47, toolz af7f85a): the base's run, finding no
    configuration in its tree, went up to the working tree's and was lost (exit 3)."""
    pyproject = '[project]\nname = "calc"\nversion = "0"\n\n' + eyeful_config()
    failing = CALC_TESTS + "\n\ndef test_installed():\n    import calc_plugin  # noqa: F401\n"
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": pyproject, "calc.py": CALC,
                                         "tests/test_calc.py": failing})  # fmt: skip
    confirm(repo)
    with_config = pyproject.replace(
        'version = "0"\n', 'version = "0"\n\n[tool.pytest.ini_options]\npythonpath = ["."]\n'
    )
    stage(repo, {"pyproject.toml": with_config})
    done = review(repo, format="json")
    assert done.exit_code == 0, done.markdown
    kinds = {f["test"]: f["kind"] for f in done.json["other_failures"]}
    assert kinds == {"tests/test_calc.py::test_installed": "pre_existing"}, done.json


PKG = "def add(a, b):\n    return a + b\n"
PKG_TESTS = "from mypkg import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.mark.parametrize("stale", [True, False], ids=["code-changed", "tests-only"])
def test_an_installed_copy_of_the_project_unlike_the_tree_is_no_result(
    tmp_path, monkeypatch, stale
):
    """The tests import `mypkg` from a copy outside the tree (installed once, not editable: here
    a directory on PYTHONPATH), the base's: the change breaks `src/mypkg` and the tests never
    run it. It said clean, exit 0. A copy like the tree's (a change to the tests alone) is no
    matter: clean."""
    copy = tmp_path / "installed"
    write(copy, {"mypkg/__init__.py": PKG})
    monkeypatch.setenv("PYTHONPATH", str(copy))
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(),
                                         "src/mypkg/__init__.py": PKG,
                                         "tests/test_mypkg.py": PKG_TESTS})  # fmt: skip
    confirm(repo)
    if stale:
        stage(repo, {"src/mypkg/__init__.py": PKG.replace("a + b", "a - b")})
    else:
        stage(repo, {"tests/test_more.py": "def test_more():\n    pass\n"})
    done = review(repo, format="json")
    if stale:
        assert done.exit_code == 3, done
        [incomplete] = done.json["incomplete"]
        assert "an installed copy that differs from this tree: `mypkg`" in incomplete["why"]
        assert "unlike src/mypkg/__init__.py" in incomplete["why"], incomplete
    else:
        assert done.exit_code == 0, done


def test_an_installed_copy_whose_version_file_a_build_wrote_is_the_trees(tmp_path, monkeypatch):
    """A build rewrites `_version.py` (versioneer, setuptools_scm): the copy is the tree's code
    otherwise, as a command that installs before it tests (`pip install . && pytest`) makes it.
    It was an ERROR (exit 3) on a healthy project."""
    copy = tmp_path / "installed"
    write(copy, {"mypkg/__init__.py": PKG, "mypkg/_version.py": "version = '1.2.3'\n"})
    monkeypatch.setenv("PYTHONPATH", str(copy))
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(),
                                         "src/mypkg/__init__.py": PKG,
                                         "src/mypkg/_version.py": "version = '0+unknown'\n",
                                         "tests/test_mypkg.py": PKG_TESTS})  # fmt: skip
    confirm(repo)
    stage(repo, {"tests/test_more.py": "def test_more():\n    pass\n"})
    done = review(repo, format="json")
    assert done.json["incomplete"] == [], done
    assert done.exit_code == 0, done


def test_an_interpreter_asked_again_in_one_process_is_read_not_started(tmp_path):
    """A second review in the same process (the suite's, an eval's) reads what the interpreter
    read before instead of starting it again, and asks it again as soon as anything installed
    on it differs: a distribution added in its site-packages."""
    import venv

    from eyeful.environment import _Probe

    venv.EnvBuilder(with_pip=False).create(tmp_path / "venv")
    python = str(tmp_path / "venv" / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    first = _Probe(python, env, tmp_path, site=True)
    assert first.proc is not None
    said = first.result()
    again = _Probe(python, env, tmp_path, site=True)
    assert again.proc is None and again.result() == said  # read, not started
    [site] = (tmp_path / "venv" / "lib").glob("python*/site-packages")
    (site / "extra-1.0.dist-info").mkdir()
    (site / "extra-1.0.dist-info" / "METADATA").write_text("Name: extra\nVersion: 1.0\n")
    after = _Probe(python, env, tmp_path, site=True)
    assert after.proc is not None  # asked again
    assert after.result()["distributions"] != said["distributions"]
