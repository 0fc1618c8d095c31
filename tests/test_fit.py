"""Fits real projects on the first run (issue 35).

Versions from git: eyeful's worktrees check out a commit whose parent is the base, for each side
(the base's own tree too), so `git describe` and the tags work there as in the user's clone, and
alike on both sides: a setuptools-scm project installs with its real version, not `0.1.dev1`. A
changed setup command gets a virtualenv made anew. Real repositories, a real pip install.
"""

from __future__ import annotations

import json
import subprocess
import sysconfig
from pathlib import Path

import pytest

from eyeful.projectscan import EnvironmentFacts, repository_files, scan
from tests.core import review
from tests.gitrepo import confirm, eyeful_config, git, make_repo, stage, write

SCM_PYPROJECT = """[build-system]
requires = ["setuptools>=64", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "scmpkg"
dynamic = ["version"]

[tool.setuptools_scm]

[tool.setuptools.packages.find]
where = ["src"]

"""
SCM_TESTS = """from importlib.metadata import version

import scmpkg


def test_double():
    assert scmpkg.double(3) == 6


def test_the_version_comes_from_the_tags():
    assert version("scmpkg").startswith("1.2."), version("scmpkg")
"""


def test_a_setuptools_scm_project_installs_with_the_version_of_its_tags(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": SCM_PYPROJECT,
            ".gitignore": "*.egg-info/\n",
            "src/scmpkg/__init__.py": "def double(x):\n    return 2 * x\n",
            "tests/test_scm.py": SCM_TESTS,
        },
    )
    git(repo, "tag", "v1.2.3")
    # The first-run flow (issue 35's done-when): init proposes the setup a src layout needs and
    # confirms it, the break is staged, the review blocks it.
    write(repo, {"src/scmpkg/__init__.py": "def double(x):\n    return x + x + 1\n"})
    script = "git eyeful init --yes && git add src && git eyeful --format json"
    proc = subprocess.run(
        ["/bin/sh", "-c", script], cwd=repo, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=900,
    )  # fmt: skip
    assert "pip install -e ." in proc.stderr, proc.stderr
    report = json.loads(proc.stdout[proc.stdout.index("{") :])
    kinds = [(f["test"], f["kind"]) for f in report["regressions"] + report["other_failures"]]
    # Without the tags the version is 0.1.dev1 on both trees: a pre-existing failure.
    assert kinds == [("tests/test_scm.py::test_double", "regression")], json.dumps(kinds)
    assert proc.returncode == 1, proc.stderr
    installed = sorted(
        p.name for p in (repo / ".git" / "eyeful" / "venvs").glob("*/lib/*/site-packages/scmpkg-*")
    )
    assert installed and all(name.startswith("scmpkg-1.2.") for name in installed), installed


def _setup_config(setup: str) -> str:
    return (
        "[tool.eyeful.commands]\n"
        f"setup = {json.dumps(setup)}\n"
        'test = "python -m pytest -q -p no:cacheprovider"\n'
    )


# The virtualenv finds this interpreter's pytest through a .pth file (quicker than installing it).
PTH = (
    "python -c \"import sysconfig, os; open(os.path.join(sysconfig.get_paths()['purelib'], "
    f"'zz_eyeful_tests.pth'), 'w').write({sysconfig.get_paths()['purelib']!r})\""
)
MARKER_TEST = """import os


def test_the_old_setup_left_nothing():
    assert not os.path.exists(os.path.join(os.environ["VIRTUAL_ENV"], "old-setup-was-here"))
"""


def test_a_changed_setup_command_starts_from_a_fresh_virtualenv(tmp_path: Path) -> None:
    old = f"{PTH} && touch $VIRTUAL_ENV/old-setup-was-here"
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": _setup_config(old),
            "calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_marker.py": MARKER_TEST,
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": "def add(a, b):\n    return b + a\n"})
    first = review(repo, format="json", jobs=1).json
    assert [f["test"] for f in first["other_failures"]] == [
        "tests/test_marker.py::test_the_old_setup_left_nothing"
    ]
    write(repo, {"pyproject.toml": _setup_config(PTH)})
    git(repo, "commit", "-qm", "setup without the marker", "pyproject.toml")
    confirm(repo)
    second = review(repo, format="json", jobs=1)
    assert [r["name"] for r in second.json["runs"]][:2] == ["setup", "test"], second.json["runs"]
    assert second.json["other_failures"] == [], second.json["other_failures"]
    assert second.exit_code == 0


# Setup survives the clean after untrusted code (issue 35, point 5): only what a reproduction
# created or changed among the ignored files is removed; what setup built stays, and the next
# review does not run setup again. What the reproduction changed is removed, and setup runs.
# What any pytest run leaves (a new .pytest_cache, bytecode written again) is no change to
# setup's files: pluggy paid its 10 s setup before each reproduction run for it (bench_real.py).
PYC = "__pycache__/stale.cpython-311.pyc"
NODEIDS = ".pytest_cache/v/nodeids"  # as a trusted run leaves it


def _built_repo(tmp_path: Path) -> Path:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(
                setup=f"echo built > built.marker && mkdir -p __pycache__ && echo x > {PYC} "
                f"&& mkdir -p .pytest_cache/v && echo [] > {NODEIDS}",
                extra='isolate = "none"\n',
            ),
            ".gitignore": "*.marker\n__pycache__/\n.pytest_cache/\n",
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "README.md": "add returns the sum of its arguments\n",
            "calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_calc.py": (
                "from calc import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n"
            ),
        },
    )
    confirm(repo)
    return repo


def _finding(code: str) -> dict:
    return {
        "id": "f1", "expert": "correctness", "severity": "error", "evidence": "test",
        "path": "calc.py", "line": 2, "title": "add broke", "body": "add no longer sums.",
        "oracle": {"kind": "specified", "quote": "add returns the sum of its arguments",
                   "source": "README.md"},
        "repro": {"path": "tests/test_repro.py", "code": code, "fails": "add no longer sums"},
    }  # fmt: skip


REPRO = """from pathlib import Path

from calc import add


def test_sum():
    TOUCH
    assert add(2, 3) == 5, "add no longer sums"
"""


def _setups(report: dict) -> list[str]:
    return [r["side"] for r in report["runs"] if r["name"] == "setup"]


def test_what_setup_built_stays_after_a_findings_run(tmp_path: Path) -> None:
    repo = _built_repo(tmp_path)
    stage(repo, {"calc.py": "def add(a, b):\n    return a - b\n"})
    # What a pytest run leaves: new files, its caches and bytecode written again.
    touch = (
        "Path('.pytest_cache/v').mkdir(parents=True, exist_ok=True); "
        f"Path({NODEIDS!r}).write_text('[1]'); Path('.coverage').write_text(''); "
        "Path('new.marker').write_text(''); "
        "Path('__pycache__').mkdir(exist_ok=True); "
        f"Path({PYC!r}).unlink(missing_ok=True); Path({PYC!r}).write_text('y')"
    )
    finding = _finding(REPRO.replace("TOUCH", touch))
    first = review(repo, format="json", jobs=1, findings=[finding])
    runs = first.json["findings"][0]["runs"]
    assert len(runs) > 2, "the reproduction ran on the change and on the base"
    assert [r for r in runs if r["name"] == "setup"] == [], "setup ran once, before it"
    stage(repo, {"calc.py": "def add(a, b):\n    return b + a\n"})
    second = review(repo, format="json", jobs=1)
    assert _setups(second.json) == [], second.json["runs"]
    assert second.exit_code == 0
    (worktree,) = (repo / ".git" / "eyeful" / "worktrees").glob("wt-*")
    assert not (worktree / NODEIDS).exists()  # the untrusted run's files are gone
    assert not (worktree / ".coverage").exists()
    assert not (worktree / "new.marker").exists()
    assert (worktree / "built.marker").read_text() == "built\n"
    assert not (worktree / PYC).exists()  # a cache it rewrote goes, and Python writes it again


def test_what_a_reproduction_changed_among_setups_files_is_built_again(tmp_path: Path) -> None:
    repo = _built_repo(tmp_path)
    stage(repo, {"calc.py": "def add(a, b):\n    return a - b\n"})
    touch = "Path('built.marker').write_text('tampered')"
    review(repo, format="json", jobs=1, findings=[_finding(REPRO.replace("TOUCH", touch))])
    worktrees = repo / ".git" / "eyeful" / "worktrees"
    stage(repo, {"calc.py": "def add(a, b):\n    return b + a\n"})
    second = review(repo, format="json", jobs=1)
    assert _setups(second.json), second.json["runs"]  # built again where it was tampered with
    markers = [p.read_text() for p in worktrees.glob("*/built.marker")]
    assert markers and all(text == "built\n" for text in markers), markers


# init reads what pytest's configuration needs (issue 35, point 2): plugins named by addopts'
# options and by `-p`, and required_plugins, each shown with its reason. tinydb's addopts pass
# --cov: a proposal of `pip install -e . pytest` exited 4 on every run.
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
ADDOPTS_PROJECT = """[project]
name = "calc"
version = "0.1"

[tool.pytest.ini_options]
addopts = "--cov=calc --cov-append -p pytest_randomly --timeout=30"
required_plugins = ["pytest-mock>=3"]
"""


def test_init_proposes_the_plugins_pytests_configuration_needs(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": ADDOPTS_PROJECT,
            "calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_calc.py": TESTS,
        },
    )
    # What the user's python has: pytest and pytest-timeout, none of the others.
    facts = EnvironmentFacts(
        has_pytest=True, installed=frozenset({"pytest", "pytest-timeout", "pluggy"})
    )
    proposal = scan(repo, repository_files(repo), facts)
    assert proposal.setup == (
        "pip install -e . pytest pytest-cov pytest-randomly pytest-timeout 'pytest-mock>=3'"
    )
    where = "[tool.pytest.ini_options] in pyproject.toml"
    assert (
        f"setup: addopts in {where} passes --cov, and pytest-cov is not installed for python"
        in proposal.reasons
    )
    assert f"setup installs pytest-timeout: addopts in {where} passes --timeout" in (
        proposal.reasons
    )
    assert any("required_plugins" in r and "pytest-mock>=3" in r for r in proposal.reasons)


def test_init_proposes_nothing_more_where_the_plugins_are_installed(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": ADDOPTS_PROJECT.replace("-p pytest_randomly ", ""),
            "calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_calc.py": TESTS,
        },
    )
    installed = frozenset({"pytest", "pytest-cov", "pytest-timeout", "pytest-mock"})
    proposal = scan(
        repo, repository_files(repo), EnvironmentFacts(has_pytest=True, installed=installed)
    )
    assert proposal.setup is None, proposal


def test_the_first_run_blocks_a_break_with_pytest_cov_in_addopts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first-run flow on a project whose addopts pass --cov, where the python on PATH has
    no pytest-cov: init's setup installs it in eyeful's virtualenv, and the break blocks."""
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD")  # the project's pytest-cov must load
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": ADDOPTS_PROJECT.replace(
                "-p pytest_randomly --timeout=30", ""
            ).replace('required_plugins = ["pytest-mock>=3"]\n', ""),
            "calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_calc.py": TESTS,
        },
    )
    write(repo, {"calc.py": "def add(a, b):\n    return a - b\n"})
    script = "git eyeful init --yes && git add calc.py && git eyeful"
    proc = subprocess.run(
        ["/bin/sh", "-c", script], cwd=repo, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=900,
    )  # fmt: skip
    assert "pytest-cov" in proc.stderr + proc.stdout, proc.stderr
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "tests/test_calc.py::test_add" in proc.stdout


def test_a_usage_error_quotes_pytests_error_line_not_its_header(tmp_path: Path) -> None:
    # Issue 35, point 4: `addopts` naming a plugin's option that is not installed. pytest prints
    # its usage, the error, then `inifile:` and `rootdir:` lines: the first line of the report
    # quotes the error, never the header.
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(),
         "pytest.ini": "[pytest]\npythonpath = .\naddopts = --cov-append\n",
         "calc.py": "def add(a, b):\n    return a + b\n", "tests/test_calc.py": TESTS},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": "def add(a, b):\n    return a - b\n"})
    result = review(repo)
    assert result.exit_code == 3, result
    first = result.stdout.splitlines()[0]
    assert "unrecognized arguments: --cov-append" in first, first
    assert "rootdir" not in first and "inifile" not in first, first


def test_a_nested_repository_untrusted_code_touched_or_made_among_ignored_files_goes(
    tmp_path: Path,
) -> None:
    """git lists an ignored nested repository as one entry (`vendor/dep/`), whose directory's
    inode, size and ctime a write to a file inside it does not change: neither what untrusted
    code wrote into one setup made, nor one it made itself, may outlive the clean after it."""
    from eyeful.gitutil import find_repo
    from eyeful.snapshot import open_repository
    from eyeful.worktrees import WorktreePool

    repo = make_repo(tmp_path / "repo", {".gitignore": "vendor/\n", "a.py": "A = 1\n"})
    paths = find_repo(repo)
    pygit = open_repository(paths)
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    with WorktreePool(paths, pygit, size=1).acquire() as worktree:
        worktree.checkout(pygit, tree)
        dep = worktree.path / "vendor" / "dep"  # what setup cloned (pip install -e git+...)
        git(worktree.path, "init", "-q", str(dep))
        write(dep, {"mod.py": "GOOD = 1\n"})
        worktree.taint()
        write(dep, {"mod.py": "EVIL = 1\n"})  # untrusted code
        made = worktree.path / "vendor" / "new"
        git(worktree.path, "init", "-q", str(made))
        write(made, {"x.py": "EVIL = 1\n"})
        whole = worktree.checkout(pygit, tree)
        assert not (dep / "mod.py").exists() or "EVIL" not in (dep / "mod.py").read_text()
        assert not made.exists()
        assert whole is False  # setup's clone is gone: setup runs again


LAST_COMMIT = """import subprocess
import time
from pathlib import Path

from calc import add

HERE = Path(__file__).parent


def _last(fmt):
    return subprocess.run(["git", "log", "-1", f"--format={fmt}"], cwd=HERE, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_a_build_stamped_with_the_last_commits_time():
    assert time.gmtime(int(_last("%ct"))).tm_year >= 1980, "zip stamps start in 1980"
    assert add(2, 3) == 5


def test_the_last_commit_is_the_authors():
    assert _last("%an <%ae>") == "Ada <ada@example.org>"


def test_the_tag_describes_the_tree():
    assert subprocess.run(["git", "describe", "--tags"], cwd=HERE, capture_output=True,
                          text=True).stdout.startswith("v1")
"""


def test_what_tests_read_of_the_last_commit_is_alike_on_both_sides(tmp_path: Path) -> None:
    """Every checkout is a commit on the base with its author, committer and dates: a test that
    reads the last commit (a build's timestamp, its author, `git describe`) sees the same on both
    sides. Dated 1970 by
    eyeful (a zip cannot hold that) and without the tags, a docstring blocked, and a break of
    the code on the base's side with the change's tests failed there by another cause."""
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": "[pytest]\npythonpath = .\n",
         "calc.py": "def add(a, b):\n    return a + b\n", "tests/test_last.py": LAST_COMMIT},
    )  # fmt: skip
    git(repo, "commit", "-q", "--amend", "--no-edit", "--author", "Ada <ada@example.org>")
    git(repo, "tag", "v1")
    confirm(repo)
    stage(repo, {"calc.py": 'def add(a, b):\n    """The sum."""\n    return a + b\n'})
    done = review(repo, format="json")
    assert done.exit_code == 0, done.json["regressions"] + done.json["other_failures"]
    # The change edits the tests (the base runs them: a checkout of the base with them) and
    # breaks add: one regression, the others pass on both sides.
    more = LAST_COMMIT + "\n\ndef test_more():\n    assert True\n"
    stage(repo, {"calc.py": "def add(a, b):\n    return a - b\n", "tests/test_last.py": more})
    done = review(repo, format="json")
    kinds = {f["test"]: f["kind"] for f in done.json["regressions"] + done.json["other_failures"]}
    assert kinds == {
        "tests/test_last.py::test_a_build_stamped_with_the_last_commits_time": "regression"
    }
    assert done.exit_code == 1


EXACT_TAG = """import subprocess
from pathlib import Path


def test_released_from_a_tag():
    described = subprocess.run(["git", "describe", "--tags"], cwd=Path(__file__).parent,
                               capture_output=True, text=True).stdout.strip()
    assert "-" not in described, f"not a release: {described}"
"""


def test_a_test_of_the_exact_tag_is_alike_on_both_sides(tmp_path: Path) -> None:
    """HEAD is tagged and the change edits only the README: the base ran at HEAD itself
    (`v1.2.3`), the change on a commit on top (`v1.2.3-1-g…`), and the test blocked. Both sides
    are now a commit on the base."""
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(), "README.md": "x\n",
                                         "tests/test_tag.py": EXACT_TAG})  # fmt: skip
    git(repo, "tag", "v1.2.3")
    confirm(repo)
    stage(repo, {"README.md": "more\n"})
    done = review(repo, format="json")
    assert done.exit_code == 0, done.markdown
    assert done.json["regressions"] == []


# A manifest in a directory setup names is setup's input (helper-53) ----------------------------

RECORD_MANIFEST = (
    "import sys\nfrom pathlib import Path\n\n"
    "package = sys.argv[1].split('[')[0]  # without its extras, as pip reads it\n"
    "Path('installed.txt').write_text(Path(package, 'pyproject.toml').read_text())\n"
)
MANIFEST_TEST = (
    "from pathlib import Path\n\n\ndef test_installed_metadata_is_the_trees():\n"
    "    manifest = Path('packages/calc/pyproject.toml').read_text()\n"
    "    assert Path('installed.txt').read_text() == manifest\n"
)


@pytest.mark.parametrize("named", ["by the command", "by a script it runs"])
def test_a_manifest_in_a_directory_setup_names_runs_setup_again(tmp_path: Path, named: str) -> None:
    """`pip install -e packages/calc`: the default setup inputs are top-level manifests, so a
    change to packages/calc/pyproject.toml (an entry point removed) kept the last install's
    metadata: here a false block, with an entry point a false clean. The files and directories
    the setup command names are setup's inputs too, and those a file it names names (a script,
    a requirements file: helper-55)."""
    install = "python record.py packages/calc[dev]"
    setup = install if named == "by the command" else "sh scripts/setup.sh"
    config = eyeful_config(setup=setup, extra='isolate = "none"\n')
    manifest = '[project]\nname = "calc"\nversion = "1.0"\n'
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": config, "record.py": RECORD_MANIFEST, ".gitignore": "installed.txt\n",
        "packages/calc/pyproject.toml": manifest, "tests/test_manifest.py": MANIFEST_TEST,
        "scripts/setup.sh": f"#!/bin/sh\nset -e\n{install}  # the package\n",
    })  # fmt: skip
    confirm(repo)
    stage(repo, {"README.md": "calc\n"})  # an earlier review: the worktrees are set up
    assert review(repo).exit_code == 0
    git(repo, "reset", "-q", "README.md")
    stage(repo, {"packages/calc/pyproject.toml": manifest.replace("1.0", "1.1")})
    done = review(repo, format="json")
    assert done.exit_code == 0, done.stdout
    assert [r["side"] for r in done.json["runs"] if r["name"] == "setup"] == ["change"]


# What setup installs from the tree is its input (helper-57) --------------------------------------

GEN = (
    "import os\n\nrows = open({}).read().split()\n"
    "with open('calc_rates.py', 'w') as out:\n    out.write(f'RATES = {{rows!r}}\\n')\n"
)

SETUP_CASES = {
    # (setup, files besides the package, setup_inputs, the file the change edits, installs again)
    "a copy: its code": ("pip install -q ./packages/calc", {}, None, "calc/__init__.py", True),
    "editable: not its code": ("pip install -e ./packages/calc", {}, None, "calc/__init__.py",
                               False),
    "a script's copy": ("bash scripts/setup.sh",
                        {"scripts/setup.sh": "pip install ./packages/calc\n"}, None,
                        "calc/__init__.py", True),
    "-r two deep": ("pip install -r requirements.txt",
                    {"requirements.txt": "-r reqs/dev.txt\n",
                     "reqs/dev.txt": "-e ./packages/calc\n"}, None, "pyproject.toml", True),
    "--requirement= two deep": ("pip install -r requirements.txt",
                                {"requirements.txt": "--requirement=reqs/dev.txt\n",
                                 "reqs/dev.txt": "-e ./packages/calc\n"}, None, "pyproject.toml",
                                True),
    "-r relative to its file": ("pip install -r reqs/all.txt",
                                {"reqs/all.txt": "-r dev.txt\n",
                                 "reqs/dev.txt": "-e packages/calc\n"}, None, "pyproject.toml",
                                True),
    "a loop over a pattern": ("for p in packages/*; do pip install -q -e $p; done", {}, None,
                              "pyproject.toml", True),
    "your own setup_inputs": ("pip install -e packages/calc", {}, ["requirements*.txt"],
                              "pyproject.toml", True),
    # helper-59: the root copied (package data too), and what installs nothing whole
    "the root copied": ("pip install --no-build-isolation .[test]", {}, None,
                        "calc/__init__.py", True),
    "cd, then editable": ("cd packages/calc && pip install -e .", {}, None, "calc/__init__.py",
                          False),
    "-e before an option": ("pip install -e --no-deps packages/calc", {}, None,
                            "calc/__init__.py", False),
    "a marker's ;": ("pip install -r packages/calc/requirements.txt",
                     {"packages/calc/requirements.txt": 'tomli ; python_version < "3.11"\n'},
                     None, "calc/__init__.py", False),
    # helper-60: a list's line copies as an install's word does; a command in quotes; a
    # script's later lines and glued separators end the install
    "a list's copy": ("pip install -q -r requirements.txt",
                      {"requirements.txt": "./packages/calc\npytest\n"}, None,
                      "calc/__init__.py", True),
    "sh -c": ("sh -c 'pip install -q ./packages/calc pytest'", {}, None, "calc/__init__.py",
              True),
    "a script's later cd": ("sh setup.sh",
                            {"setup.sh": "pip install -q -e ./packages/calc pytest\n"
                                         "cd packages/calc\npython -c pass\n"}, None,
                            "calc/__init__.py", False),
    "a subshell's cd, then a copy of .": ("(cd packages/calc && pip install .)", {}, None,
                                          "calc/__init__.py", True),
    "a cd's copy of . is not the root's": ("cd packages/calc && pip install .", {}, None,
                                           "/README.md", False),
    "glued ;": ("pip install -e ./packages/calc;cd packages/calc", {}, None, "calc/__init__.py",
                False),
    # helper-66: a Python script setup runs reads data by a path written in it, and writes an
    # ignored module from it; a change to the data kept the module a last setup wrote
    "a script's open()": ("python tools/gen.py",
                          {"tools/gen.py": GEN.format("'data/rates.csv'"),
                           "data/rates.csv": "usd,1\n"}, None, "/data/rates.csv", True),
    "a script's glob": ("python tools/gen.py",
                        {"tools/gen.py": "import glob\n\nfor name in glob.glob('data/*.csv'):\n"
                                         "    print(open(name).read())\n",
                         "data/rates.csv": "usd,1\n"}, None, "/data/rates.csv", True),
    "a script's file beside it": ("python tools/gen.py",
                                  {"tools/gen.py": GEN.format(
                                      "os.path.join(os.path.dirname(__file__), 'rates.csv')"),
                                   "tools/rates.csv": "usd,1\n"}, None, "/tools/rates.csv",
                                  True),
    "a script's other files are not": ("python tools/gen.py",
                                       {"tools/gen.py": GEN.format("'data/rates.csv'"),
                                        "data/rates.csv": "usd,1\n"}, None, "/README.md", False),
    # helper-68: a module run with -m; paths joined from parts; and what is no input: a
    # setup.py's long description (a changelog edited on every change), a glob of everything
    "a module run with -m": ("python -m tools.gen",
                             {"tools/__init__.py": "",
                              "tools/gen.py": GEN.format("'data/rates.csv'"),
                              "data/rates.csv": "usd,1\n"}, None, "/data/rates.csv", True),
    "a pathlib join": ("python tools/gen.py",
                       {"tools/gen.py": "from pathlib import Path\n\nROOT = Path('.')\n"
                                        + GEN.format("ROOT / 'data' / 'rates.csv'"),
                        "data/rates.csv": "usd,1\n"}, None, "/data/rates.csv", True),
    "an os.path.join": ("python tools/gen.py",
                        {"tools/gen.py": GEN.format(
                            "os.path.join(os.getcwd(), 'data', 'rates.csv')"),
                         "data/rates.csv": "usd,1\n"}, None, "/data/rates.csv", True),
    "setup.py's long description": ("python setup.py build_ext --inplace",
                                    {"setup.py": "from setuptools import setup\n\n"
                                                 "setup(long_description=open('README.md').read())\n"},
                                    None, "/README.md", False),
    # helper-69: a module the script imports (its table), from the root
    "a module the script imports": ("python -m tools.gen",
                                    {"tools/__init__.py": "", "tools/rates.py": "RATE = 3\n",
                                     "tools/gen.py": "from tools.rates import RATE\n\n"
                                                     "print(RATE)\n"}, None, "/tools/rates.py",
                                    True),
    # helper-70: a relative import; a src layout; data named like prose
    "a relative import": ("python -m tools.gen",
                          {"tools/__init__.py": "", "tools/rates.py": "RATE = 3\n",
                           "tools/gen.py": "from .rates import RATE\n\nprint(RATE)\n"}, None,
                          "/tools/rates.py", True),
    "a module of a src layout": ("python scripts/gen.py",
                                 {"scripts/gen.py": "from mypkg.rates import RATE\n",
                                  "src/mypkg/__init__.py": "", "src/mypkg/rates.py": "R = 3\n"},
                                 None, "/src/mypkg/rates.py", True),
    # helper-71: a file's name alone, its directory joined to it elsewhere
    "a directory in a variable": ("python tools/gen.py",
                                  {"tools/gen.py": "from pathlib import Path\n\n"
                                                   "DATA = Path('.') / 'data'\n"
                                                   "print((DATA / 'rates.csv').read_text())\n",
                                   "data/rates.csv": "usd,1\n"}, None, "/data/rates.csv", True),
    # helper-72: ... where a file of that name is beside the script too, or several elsewhere
    "a directory in a variable, a namesake beside": ("python tools/gen.py",
        {"tools/gen.py": "from pathlib import Path\n\nDATA = Path('.') / 'data'\n"
                         "print((DATA / 'rates.csv').read_text())\n",
         "tools/rates.csv": "sample\n", "archive/a/rates.csv": "1\n",
         "archive/b/rates.csv": "2\n", "archive/c/rates.csv": "3\n",
         "data/rates.csv": "usd,1\n"}, None, "/data/rates.csv", True),
    "data named like prose": ("python tools/gen.py",
                              {"tools/gen.py": "print(open('data/history.csv').read())\n",
                               "data/history.csv": "close\n3\n"}, None, "/data/history.csv",
                              True),
    # helper-69: what a setup.py names for its build is its input (an extension's depends)
    "setup.py's depends": ("python setup.py build_ext --inplace",
                           {"setup.py": "from setuptools import Extension, setup\n\n"
                                        "setup(ext_modules=[Extension('calc._fast',"
                                        " ['calc/fast.c'], depends=['calc/table.inc'])])\n",
                            "calc/table.inc": "#define VALUE 3\n"}, None, "/calc/table.inc",
                           True),
    "a glob of everything": ("python tools/gen.py",
                             {"tools/gen.py": "import glob\n\nprint(glob.glob('*'))\n"}, None,
                             "/README.md", False),
}  # fmt: skip


@pytest.mark.parametrize("case", SETUP_CASES)
def test_what_setup_installs_from_the_tree_is_its_input(tmp_path: Path, case: str) -> None:
    """A non-editable install copies the package's code into the virtualenv, a requirements file
    may name another that names the package, and your own `setup_inputs` replace the default
    top-level ones, not the manifest of a package setup installs: a change there kept the last
    install, and a change breaking the package said clean (helper-57)."""
    import pygit2

    from eyeful.config import parse_config
    from eyeful.runs import setup_key

    setup, files, inputs, edited, again = SETUP_CASES[case]
    package = {"packages/calc/pyproject.toml": '[project]\nname = "calc"\nversion = "1.0"\n',
               "packages/calc/calc/__init__.py": "def add(a, b):\n    return a + b\n"}  # fmt: skip
    repo = make_repo(tmp_path / "repo", {"README.md": "calc\n", **package, **files})
    table: dict[str, object] = {"commands": {"setup": setup, "test": "pytest"}}
    if inputs is not None:
        table["setup_inputs"] = inputs
    config = parse_config(table, "pyproject.toml")
    before = git(repo, "rev-parse", "HEAD^{tree}").strip()
    path = edited[1:] if edited.startswith("/") else f"packages/calc/{edited}"
    text = {"README.md": "calc\n", **package, **files}[path]
    stage(repo, {path: text.replace("a + b", "a - b").replace("1.0", "1.1") + "# edited\n"})
    after = git(repo, "write-tree").strip()
    opened = pygit2.Repository(str(repo))
    keys = (setup_key(opened, before, config), setup_key(opened, after, config))
    assert (keys[0] != keys[1]) is again, keys


# A version bump installs again (helper-45) -----------------------------------------------------

RECORD_VERSION = (
    "import runpy\n"
    "said = runpy.run_path('src/verpkg/__init__.py')\n"
    "open('installed-version.txt', 'w').write(said['__version__'])\n"
)
VERSION_TEST = (
    "import verpkg\n\n\ndef test_installed_metadata_is_the_trees():\n"
    "    assert open('installed-version.txt').read() == verpkg.__version__\n"
)


@pytest.mark.parametrize("made", ["written", "built from version_info"])
def test_a_change_to_the_version_source_runs_setup_again(tmp_path: Path, made: str) -> None:
    # setup records the version an install would (a `*.dist-info`); the version comes from the
    # package's `__version__` (setuptools' dynamic attr). Bumping it must install again: a
    # worktree keeping the last install's version blocked a plain version bump.
    pyproject = (
        '[project]\nname = "verpkg"\ndynamic = ["version"]\n\n'
        '[tool.setuptools.dynamic]\nversion = {attr = "verpkg.__version__"}\n\n'
        '[tool.pytest.ini_options]\npythonpath = ["src"]\n\n'
        + eyeful_config(setup="python record.py", extra='isolate = "none"\n')
    )
    init = '__version__ = "1.0.0"\n\n\ndef double(x):\n    return 2 * x\n'
    bump = ("1.0.0", "1.1.0")
    if made != "written":  # a bump edits version_info alone
        init = init.replace('"1.0.0"', '".".join(map(str, version_info))')
        init = "version_info = (1, 0, 0)\n" + init
        bump = ("(1, 0, 0)", "(1, 1, 0)")
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": pyproject, "record.py": RECORD_VERSION,
        ".gitignore": "installed-version.txt\n", "src/verpkg/__init__.py": init,
        "tests/test_version.py": VERSION_TEST,
    })  # fmt: skip
    confirm(repo)
    stage(repo, {"README.md": "verpkg\n"})  # an earlier review: the worktrees are set up
    assert review(repo).exit_code == 0
    git(repo, "reset", "-q", "README.md")
    stage(repo, {"src/verpkg/__init__.py": init.replace(*bump)})
    done = review(repo, format="json")
    assert done.exit_code == 0, done.stdout
    # An edit of the module's code, its version alone kept, does not install again.
    git(repo, "commit", "-qam", "1.1.0")
    stage(repo, {"src/verpkg/__init__.py": init.replace(*bump).replace("2 *", "2*")})
    again = review(repo, format="json")
    assert again.exit_code == 0, again.stdout
    assert [r["name"] for r in again.json["runs"]].count("setup") == 0, again.json["runs"]


VERSION_LAYOUTS = {
    # helper-83: setup.py reads the version out of the package's `__init__.py`
    "setup.py reads it": {
        "setup.py": "import re\nfrom setuptools import setup\n\n"
        "with open('pkg/__init__.py') as f:\n"
        "    version = re.search(r'__version__ = \"(.*?)\"', f.read()).group(1)\n\n"
        "setup(name='pkg', version=version, packages=['pkg'])\n",
        "pkg/__init__.py": '__version__ = "1.0"\n\n\ndef double(x):\n    return 2 * x\n',
    },
    "setup.cfg's attr": {
        "setup.py": "from setuptools import setup\n\nsetup()\n",
        "setup.cfg": "[metadata]\nname = pkg\nversion = attr: pkg.__version__\n",
        "pkg/__init__.py": '__version__ = "1.0"\n\n\ndef double(x):\n    return 2 * x\n',
    },
    # helper-84: pathlib's `/`, a VERSION file, re-exports under another name, in a `try`, by `*`
    "pathlib": {
        "setup.py": "import re\nfrom pathlib import Path\nfrom setuptools import setup\n\n"
        "text = (Path(__file__).parent / 'pkg' / '__init__.py').read_text()\n"
        "setup(name='pkg', version=re.search(r'\"(.*?)\"', text).group(1))\n",
        "pkg/__init__.py": '__version__ = "1.0"\n\n\ndef double(x):\n    return 2 * x\n',
    },
    "a VERSION file": {
        "setup.py": "from setuptools import setup\n\nsetup(version=open('VERSION').read())\n",
        "VERSION": "1.0\n",
        "pkg/__init__.py": "def double(x):\n    return 2 * x\n",
    },
    "re-exported as": {
        "setup.py": "from setuptools import setup\n\nsetup()\n",
        "setup.cfg": "[metadata]\nname = pkg\nversion = attr: pkg.__version__\n",
        "pkg/__init__.py": "try:\n    from pkg._version import VERSION as __version__\n"
        "except ImportError:\n    __version__ = 'unknown'\n\n\ndef double(x):\n    return 2 * x\n",
        "pkg/_version.py": 'VERSION = "1.0"\n',
    },
    "a re-export": {
        "pyproject.toml": '[project]\nname = "pkg"\ndynamic = ["version"]\n\n'
        '[tool.setuptools.dynamic]\nversion = {attr = "pkg.__version__"}\n',
        "pkg/__init__.py": "from pkg._version import __version__  # noqa: F401\n\n\n"
        "def double(x):\n    return 2 * x\n",
        "pkg/_version.py": '__version__ = "1.0"\n',
    },
}


@pytest.mark.parametrize("layout", VERSION_LAYOUTS)
def test_where_an_install_reads_its_version_is_setups_input(tmp_path: Path, layout: str) -> None:
    """helper-83: a version bump in a file setup.py reads, one setup.cfg's `attr:` names, or the
    module pyproject's `attr` re-exports it from, kept the last install (its `*.dist-info` of
    the old version) and a test of the installed version blocked. The code's own edits (a
    function's body) still install nothing again."""
    import pygit2

    from eyeful.config import parse_config
    from eyeful.runs import setup_key

    files = VERSION_LAYOUTS[layout]
    repo = make_repo(tmp_path / "repo", {"README.md": "pkg\n", **files})
    table = {"commands": {"setup": "pip install -e .", "test": "pytest"}}
    config = parse_config(table, "pyproject.toml")
    opened = pygit2.Repository(str(repo))
    before = git(repo, "rev-parse", "HEAD^{tree}").strip()
    where = {"a re-export": "pkg/_version.py", "re-exported as": "pkg/_version.py",
             "a VERSION file": "VERSION"}.get(layout, "pkg/__init__.py")  # fmt: skip
    stage(repo, {where: files[where].replace("1.0", "1.1")})
    bumped = git(repo, "write-tree").strip()
    git(repo, "reset", "-q", "--hard")
    stage(repo, {"pkg/__init__.py": files["pkg/__init__.py"].replace("2 * x", "x + x")})
    edited = git(repo, "write-tree").strip()
    key = {tree: setup_key(opened, tree, config) for tree in (before, bumped, edited)}
    assert key[bumped] != key[before]
    assert key[edited] == key[before]


NOT_VERSIONS = {
    # helper-85: a module the version's module imports, a script setup.py installs
    "an imported module's constant": (
        {
            "pyproject.toml": '[project]\nname = "pkg"\ndynamic = ["version"]\n\n'
            '[tool.setuptools.dynamic]\nversion = {attr = "pkg.__version__"}\n',
            "pkg/__init__.py": '__version__ = "1.0"\nfrom . import settings  # noqa\n',
            "pkg/settings.py": "TIMEOUT = 5\n",
        },
        "pkg/settings.py", ("TIMEOUT = 5", "TIMEOUT = 6"),
    ),
    "a script's constant": (
        {
            "setup.py": "from setuptools import setup\n\nsetup(version='1.0', "
            "scripts=['tools/run.py'])\n",
            "tools/run.py": "LIMIT = 3\n",
        },
        "tools/run.py", ("LIMIT = 3", "LIMIT = 4"),
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", NOT_VERSIONS)
def test_what_no_version_is_made_of_installs_nothing_again(tmp_path: Path, case: str) -> None:
    """helper-85: following what the version's module imports took every module-level
    constant of `pkg/settings.py` into setup's inputs, and every file setup.py names (a script
    it installs) the same: an edit of a constant ran setup again (a whole install)."""
    import pygit2

    from eyeful.config import parse_config
    from eyeful.runs import setup_key

    files, where, (was, now) = NOT_VERSIONS[case]
    repo = make_repo(tmp_path / "repo", {"README.md": "pkg\n", **files})
    config = parse_config({"commands": {"setup": "pip install -e .", "test": "pytest"}}, "x")
    before = git(repo, "rev-parse", "HEAD^{tree}").strip()
    stage(repo, {where: files[where].replace(was, now)})
    after = git(repo, "write-tree").strip()
    opened = pygit2.Repository(str(repo))
    assert setup_key(opened, before, config) == setup_key(opened, after, config)
