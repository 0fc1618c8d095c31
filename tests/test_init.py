"""`git eyeful init` (issue 22, point 1): a proposal read from the repository's files, written
without touching anything else of the user's, confirmed; and the README's quick start, run."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
from pathlib import Path

import pytest

from eyeful import focus
from eyeful.cli.app import main
from eyeful.config import load_config
from eyeful.projectscan import EnvironmentFacts, environment_facts, repository_files, scan
from eyeful.trust import TrustStore
from tests.conftest import seal
from tests.core import review
from tests.gitrepo import git, make_repo, stage, user_state, write

ROOT = Path(__file__).resolve().parents[1]
CALC = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
CASES = (
    "import unittest\n\nfrom calc import add\n\n\nclass TestCalc(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)
PROJECT = '[project]\nname = "calc"\nversion = "0"\n'
BUILD = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
# A pyproject.toml as users write them: comments, odd spacing, CRLF, no final newline.
USER_PYPROJECT = (
    b'# the project\r\n[project]\r\nname   =  "calc"  # spaced\r\nversion = "0"\r\n\r\n'
    b"[tool.black]\r\nline-length = 100\r\n\r\n[tool.pytest.ini_options]\r\n"
    b'addopts = "-ra"'
)

LAYOUTS: dict[str, dict[str, str | bytes]] = {
    "flat": {"pyproject.toml": PROJECT, "calc.py": CALC, "tests/test_calc.py": TESTS},
    "pytest.ini": {"pytest.ini": "[pytest]\n", "calc.py": CALC, "tests/test_calc.py": CASES},
    "tox.ini": {"tox.ini": "[tox]\n\n[pytest]\nxfail_strict = true\n", "test_calc.py": CASES},
    "setup.cfg": {"setup.cfg": "[tool:pytest]\naddopts = -ra\n", "test_calc.py": CASES},
    "pytest.toml": {"pytest.toml": '[pytest]\naddopts = ["-ra"]\n', "test_calc.py": CASES},
    "conftest": {"conftest.py": "", "calc.py": CALC, "tests/test_calc.py": CASES},
    # Doctests in the package's modules (boltons, toolz): the command is not narrowed to tests/.
    "doctests": {
        "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
        "calc.py": CALC,
        "tests/test_calc.py": CASES,
    },
    # A package, and a script that exits at import (which collecting the whole tree would
    # import: pytest's internal error on every run): the package and the tests only.
    "doctests-package": {
        "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
        "calc/__init__.py": CALC,
        "tests/test_calc.py": CASES,
        "scripts/bump.py": "import sys\n\nsys.exit(0)\n",
        "setup.py": "",
    },
    "tox-doctests": {
        "tox.ini": "[testenv]\ncommands = pytest --doctest-modules calc tests\n",
        "conftest.py": "",
        "calc.py": CALC,
        "tests/test_calc.py": CASES,
    },
    "testpaths": {
        "pyproject.toml": PROJECT + '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
        "tests/test_calc.py": TESTS,
    },
    "src": {
        "pyproject.toml": BUILD + PROJECT,
        "src/calc/__init__.py": CALC,
        "tests/test_calc.py": TESTS,
    },
    "src-extra": {
        "pyproject.toml": BUILD
        + PROJECT
        + '[project.optional-dependencies]\ntest = ["pytest>=8"]\n',
        "src/calc/__init__.py": CALC,
        "tests/test_calc.py": TESTS,
    },
    "src-group": {
        "pyproject.toml": BUILD
        + PROJECT
        + '[dependency-groups]\ndocs = ["sphinx"]\nrun = ["attrs>=22"]\n'
        + 'tests = ["freezegun", "pytest>=8", {include-group = "run"}]\n',
        "src/calc/__init__.py": CALC,
        "tests/test_calc.py": TESTS,
    },
    "src-pythonpath": {
        "pyproject.toml": PROJECT + '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
        "src/calc/__init__.py": CALC,
        "tests/test_calc.py": TESTS,
    },
    "unittest": {"calc.py": CALC, "tests/__init__.py": "", "tests/test_calc.py": CASES},
    "unittest-dir": {"calc.py": CALC, "tests/test_calc.py": CASES},
    "go": {"go.mod": "module example.com/m\n\ngo 1.21\n", "calc.go": "package m\n"},
    "nothing": {"calc.py": CALC, "README.md": "# calc\n"},
    "user-pyproject": {
        "pyproject.toml": USER_PYPROJECT,
        "calc.py": CALC,
        "tests/test_calc.py": TESTS,
    },
    "configured": {
        "pyproject.toml": PROJECT + "[tool.eyeful]\ntimeout = 60\n",
        "tests/test_calc.py": TESTS,
    },
    "dotfile": {".eyeful.toml": "timeout = 60\n", "tests/test_calc.py": TESTS},
}


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One small committed repository per layout, made once (the tests that write copy one)."""
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        where = tmp_path_factory.mktemp("layouts")
        return {name: make_repo(where / name, files) for name, files in LAYOUTS.items()}


def _proposal(repo: Path, facts: EnvironmentFacts | None = None):
    return scan(repo, repository_files(repo), facts or EnvironmentFacts(has_pytest=True))


@pytest.mark.parametrize(
    ("layout", "test", "why"),
    [
        ("flat", "python -m pytest -q tests", "tests/test_calc.py has plain test functions"),
        ("pytest.ini", "python -m pytest -q tests", "pytest is configured (pytest.ini)"),
        ("tox.ini", "python -m pytest -q", "pytest is configured ([pytest] in tox.ini)"),
        ("setup.cfg", "python -m pytest -q", "([tool:pytest] in setup.cfg)"),
        ("pytest.toml", "python -m pytest -q", "pytest is configured (pytest.toml)"),
        ("conftest", "python -m pytest -q tests", "conftest.py is pytest's"),
        ("doctests", "python -m pytest -q calc.py tests", "pytest is configured (pytest.ini)"),
        ("doctests-package", "python -m pytest -q calc tests", "pytest is configured"),
        ("testpaths", "python -m pytest -q", "([tool.pytest.ini_options] in pyproject.toml)"),
        ("src-pythonpath", "python -m pytest -q tests", "pytest is configured"),
    ],
)
def test_pytest_is_proposed_from_its_configuration_or_its_tests(repos, layout, test, why):
    proposal = _proposal(repos[layout])
    assert (proposal.runner, proposal.test, proposal.setup) == ("pytest", test, None)
    assert any(why in reason for reason in proposal.reasons), proposal.reasons
    derived = focus.of(proposal.test, proposal.test_one)  # test_one needs no writing
    assert proposal.test_one is None and derived is not None and derived.derived
    assert derived.at_first_run  # `-q`: which words are paths, pytest's parse at its run says


def test_doctests_only_tox_runs_are_named_in_a_note(repos):
    proposal = _proposal(repos["tox-doctests"])
    assert proposal.test == "python -m pytest -q tests"
    assert any("tox.ini runs pytest with --doctest-modules" in note for note in proposal.notes)


def test_the_test_files_are_named_once_when_each_of_them_says_pytest(repos):
    # itsdangerous: "5 test files (...) import pytest" and then "5 test files: ..." again
    reasons = _proposal(repos["flat"]).reasons
    assert [r for r in reasons if "tests/test_calc.py" in r] == [
        "tests/test_calc.py has plain test functions (pytest's style)"
    ], reasons


def test_the_interpreter_is_the_one_path_has(repos):
    proposal = _proposal(repos["flat"], EnvironmentFacts(python="python3", has_pytest=True))
    assert proposal.test == "python3 -m pytest -q tests"


@pytest.mark.parametrize(
    ("layout", "setup"),
    [
        ("src", "pip install -e . pytest"),
        ("src-extra", "pip install -e '.[test]'"),
        # A PEP 735 test group: its requirements named (older pip has no --group), includes too.
        ("src-group", "pip install -e . freezegun 'pytest>=8' 'attrs>=22'"),
    ],
)
def test_a_src_layout_not_importable_from_a_checkout_gets_a_setup(repos, layout, setup):
    proposal = _proposal(repos[layout])
    assert (proposal.setup, proposal.test) == (setup, "python -m pytest -q tests")
    assert any("under src/ (calc)" in reason for reason in proposal.reasons), proposal.reasons
    assert load_config_of(proposal).effective_isolate == "venv"  # installs into eyeful's venv


def load_config_of(proposal):
    from eyeful.config import parse_config

    return parse_config(proposal.table(), "proposal")


def test_an_editable_install_of_the_users_tree_gets_a_setup(repos, tmp_path, monkeypatch):
    """What pip records for `pip install -e .` (PEP 610's direct_url.json), on PYTHONPATH."""
    repo = repos["flat"]
    site = tmp_path / "site"
    for name, url in (("calc", repo.as_uri()), ("other", (tmp_path / "elsewhere").as_uri())):
        info = site / f"{name}-0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0\n")
        (info / "direct_url.json").write_text(
            json.dumps({"url": url, "dir_info": {"editable": True}})
        )
    monkeypatch.setenv("PYTHONPATH", str(site))
    facts = environment_facts(repo, {"python": shutil.which("python"), "python3": None})
    assert facts == EnvironmentFacts(python="python", has_pytest=True, editable=("calc",))
    proposal = _proposal(repo, facts)
    assert proposal.setup == "pip install -e . pytest"
    assert any("calc installed editable" in reason for reason in proposal.reasons)
    monkeypatch.delenv("PYTHONPATH")
    assert environment_facts(repo, {"python": shutil.which("python")}).editable == ()


def test_no_pytest_where_the_tests_need_it_gets_a_setup(repos):
    proposal = _proposal(repos["flat"], EnvironmentFacts(has_pytest=False))
    assert proposal.setup == "pip install -e . pytest"
    assert "setup: pytest is not installed for python" in proposal.reasons


def test_unittest_only(repos):
    proposal = _proposal(repos["unittest"])
    assert (proposal.runner, proposal.test, proposal.test_one) == (
        "unittest", "python -m unittest", None,
    )  # fmt: skip
    assert focus.of(proposal.test, None).shown == "python -m unittest {test}"
    # A test directory that is no package: discovery starts there, and its ids need test_one.
    loose = _proposal(repos["unittest-dir"])
    assert (loose.test, loose.test_one) == (
        "python -m unittest discover -s tests", "python -m unittest discover -s tests -k {test}",
    )  # fmt: skip
    load_config_of(loose)


def test_go_mod(repos):
    proposal = _proposal(repos["go"])
    assert (proposal.runner, proposal.test, proposal.setup) == ("go", "go test ./...", None)
    assert focus.of(proposal.test, None).go_flags == ()  # derived: -run '^Name$' per package


# --- the command ---------------------------------------------------------------------------


def _init(repo: Path, monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(repo)
    code = main(["init", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _copy(repos: dict[str, Path], layout: str, tmp_path: Path) -> Path:
    target = tmp_path / layout
    shutil.copytree(repos[layout], target, symlinks=True)
    return target


def _confirmed(repo: Path) -> bool:
    config = load_config(repo)
    return bool(config.source) and TrustStore().is_confirmed(repo, config)


def test_init_appends_to_the_users_pyproject_and_keeps_every_byte(
    repos, tmp_path, monkeypatch, capsys
):
    repo = _copy(repos, "user-pyproject", tmp_path)
    before = user_state(repo)
    code, out, err = _init(repo, monkeypatch, capsys, "--yes")
    assert (code, out) == (0, ""), err
    written = (repo / "pyproject.toml").read_bytes()
    assert written == USER_PYPROJECT + (
        b'\r\n\r\n[tool.eyeful.commands]\r\ntest = "python -m pytest -q tests"\r\n'
    )
    assert load_config(repo).commands.test == "python -m pytest -q tests"
    assert _confirmed(repo)
    assert f"test_one       {focus.AT_FIRST_RUN}" in err
    # Nothing else of the user's moved: the index, HEAD, refs, the rest of the tree.
    after = user_state(repo)
    assert after["worktree"].pop("pyproject.toml") != before["worktree"].pop("pyproject.toml")
    assert git(repo, "status", "--porcelain") == " M pyproject.toml\n"
    for key in ("worktree", "index", "HEAD", "refs", "for-each-ref", "stash", "HEAD-log"):
        assert after[key] == before[key], key


def test_without_pyproject_init_writes_a_new_eyeful_toml(repos, tmp_path, monkeypatch, capsys):
    repo = _copy(repos, "unittest", tmp_path)
    code, _, err = _init(repo, monkeypatch, capsys, "-y")
    assert code == 0, err
    assert (repo / ".eyeful.toml").read_text() == '[commands]\ntest = "python -m unittest"\n'
    assert not (repo / "pyproject.toml").exists()
    assert _confirmed(repo)


@pytest.mark.parametrize(
    ("layout", "where"),
    [("configured", "pyproject.toml [tool.eyeful]"), ("dotfile", ".eyeful.toml")],
)
def test_init_never_overwrites_a_configuration(repos, layout, where, monkeypatch, capsys):
    repo = repos[layout]
    before = user_state(repo)
    code, out, err = _init(repo, monkeypatch, capsys, "--yes")
    assert (code, out) == (2, "")
    [line] = err.splitlines()
    assert line.startswith(f"eyeful: error: eyeful is already configured in {where};"), line
    assert user_state(repo) == before and not _confirmed(repo)


def test_print_writes_nothing(repos, monkeypatch, capsys):
    repo = repos["src"]
    before = user_state(repo)
    code, out, err = _init(repo, monkeypatch, capsys, "--print")
    assert code == 0, err
    assert out == (
        '[tool.eyeful.commands]\nsetup = "pip install -e . pytest"\n'
        'test = "python -m pytest -q tests"\n'
    )
    assert "under src/ (calc)" in err
    assert user_state(repo) == before and not (Path.home() / ".config" / "eyeful").exists()


def test_without_a_terminal_or_yes_init_writes_nothing(repos, monkeypatch, capsys):
    repo = repos["flat"]
    before = user_state(repo)
    code, out, err = _init(repo, monkeypatch, capsys)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        "eyeful: error: not a terminal: pass --yes to write and confirm this configuration "
        "(or --print to see it only); nothing written"
    )
    assert 'test = "python -m pytest -q tests"' in err  # shown all the same
    assert user_state(repo) == before


def test_no_tests_found_writes_nothing(repos, monkeypatch, capsys):
    repo = repos["nothing"]
    before = user_state(repo)
    code, _, err = _init(repo, monkeypatch, capsys, "--yes")
    assert code == 2
    assert err == (
        "eyeful: error: found no tests eyeful knows how to run (pytest, unittest, go test): "
        "write [tool.eyeful.commands] test yourself; see the README's Configuration\n"
    )
    assert user_state(repo) == before


# --- the quick start, as a newcomer runs it ------------------------------------------------


def _normalised(text: str) -> str:
    text = re.sub(r"`HEAD` \([0-9a-f]{7,}\)", "`HEAD` (ID)", text)
    return re.sub(r"\d+\.\d+s\b", "Ts", text)


QUICK_TESTS = (
    "import pytest\n\nfrom calc import add\n\n\n"
    "@pytest.mark.parametrize(('a', 'b', 'total'), [(2, 3, 5), (1, 1, 2), (0, 4, 4)])\n"
    "def test_add(a, b, total):\n    assert add(a, b) == total\n"
)


def test_the_quick_start_blocks_a_staged_break(tmp_path):
    """The README's quick start (`git eyeful init --yes`, then its staging line) on a fresh
    pytest project with no configuration and a virtualenv in the tree that .gitignore does not
    name (two of three real projects): the staged break is blocked, one item for its one cause
    (three tests), the report is the README's, and nothing of the virtualenv is staged."""
    repo = make_repo(
        tmp_path / "calc",
        {"pyproject.toml": PROJECT, "calc.py": CALC, "tests/test_calc.py": QUICK_TESTS},
    )
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "activate").write_text("# a virtualenv\n")
    write(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    readme_sh = (ROOT / "README.md").read_text(encoding="utf-8").split("## Quick start")[1]
    lines = readme_sh.split("```sh\n")[1].split("```")[0].splitlines()
    staging = next(line.split("#")[0].strip() for line in lines if "git add" in line)
    script = f"git eyeful init --yes && {staging}"
    proc = subprocess.run(
        ["/bin/sh", "-c", script], cwd=repo, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 blocking issue (3 failing tests)" in proc.stdout, proc.stdout
    assert "tests/test_calc.py::test_add[0-4-4]" in proc.stdout
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split("## Quick start")[1].split("~~~markdown\n")[1].split("~~~\n")[0]
    assert _normalised(proc.stdout) == _normalised(shown)
    assert git(repo, "diff", "--cached", "--name-only").split() == ["calc.py", "pyproject.toml"]


def test_a_unittest_directory_that_is_no_package_blocks_a_break(
    repos, tmp_path, monkeypatch, capsys
):
    """Its ids are relative to the directory discovery starts in: init writes the test_one
    that takes them (`-k`), and the regression is confirmed alone."""
    repo = _copy(repos, "unittest-dir", tmp_path)
    assert _init(repo, monkeypatch, capsys, "--yes")[0] == 0
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    done = review(repo, format="json")
    assert [(r["test"], r["kind"]) for r in done.json["regressions"]] == [
        ("test_calc.TestCalc.test_add", "regression")
    ], done
    assert done.exit_code == 1


def _answer_on_a_terminal(repo: Path, answer: str) -> tuple[int, str]:
    """`git eyeful init` with stdin and stderr on a terminal, answering its question."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        ["git", "eyeful", "init"], cwd=repo, stdin=slave, stderr=slave,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    os.close(slave)
    shown = b""
    answered = False
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            shown += data
            if not answered and b"[y/N]" in shown:
                os.write(master, answer.encode() + b"\n")
                answered = True
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=60), shown.decode(errors="replace")


def test_init_asks_on_a_terminal_and_writes_only_on_yes(repos, tmp_path):
    repo = _copy(repos, "flat", tmp_path)
    before = user_state(repo)
    code, shown = _answer_on_a_terminal(repo, "n")
    assert code == 1 and "Write this to pyproject.toml and run these commands here? [y/N]" in shown
    assert "Nothing written." in shown and user_state(repo) == before
    code, shown = _answer_on_a_terminal(repo, "y")
    assert code == 0, shown
    assert _confirmed(repo) and load_config(repo).commands.test == "python -m pytest -q tests"
