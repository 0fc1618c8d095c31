"""Verdicts read from the runner's own record, not guessed from its text (issue 19).

Each case is a real repository whose tests eyeful runs with its pytest probe loaded; each was a
wrong verdict when eyeful read the runner's text (grepping `def NAME` in the id's file, an
allow-list of id characters, the output's summary lines).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from eyeful.config import load_config
from eyeful.trust import shown_settings
from tests.core import review
from tests.gitrepo import (
    PYTEST,
    PYTEST_INI,
    PYTHON,
    confirm,
    eyeful_config,
    make_repo,
    run,
    stage,
)

CALC = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a - b\n"


def _review(repo: Path) -> tuple[int, dict]:
    done = review(repo, format="json")
    return done.exit_code, done.json


def _kinds(report: dict) -> dict[str, str]:
    return {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}


def _project(tmp_path: Path, files: dict[str, str], config: str | None = None) -> Path:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": config or eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "calc.py": CALC,
            **files,
        },
    )
    confirm(repo)
    return repo


ODD_IDS = """import pytest

from calc import add


@pytest.mark.parametrize("expr", ["avg(numbers)", "a b", "µ", "it's", 'say "hi"', "[x]", "\\u03bc"])
def test_expression(expr):
    assert add(1, 1) == 2, expr
"""


def test_parametrized_ids_with_any_characters_are_confirmed_each(tmp_path):
    repo = _project(tmp_path, {"tests/test_odd.py": ODD_IDS})
    stage(repo, {"calc.py": BROKEN})
    code, report = _review(repo)
    kinds = _kinds(report)
    assert len(kinds) == 7, kinds
    assert set(kinds.values()) == {"regression"}, kinds
    assert "tests/test_odd.py::test_expression[avg(numbers)]" in kinds
    assert code == 1


DOCTEST = '''def add(a, b):
    """
    >>> add(2, 2)
    4
    """
    return a + b
'''

BASE_CLASS = """from calc import add


class Checks:
    def test_add(self):
        assert add(2, 3) == 5
"""
INHERITS = """from tests.base import Checks


class TestCalc(Checks):
    pass
"""


@pytest.mark.parametrize("jobs", ["1", "4"])
def test_doctests_and_inherited_tests_exist_on_the_base(tmp_path, jobs):
    # -j 1: every run in one worktree, so a doctest's failure reads the same wherever it ran
    config = eyeful_config(
        f"{PYTEST} --doctest-modules", test_one=f"{PYTEST} --doctest-modules {{test}}"
    )
    repo = _project(
        tmp_path,
        {
            "calc.py": DOCTEST,
            "tests/__init__.py": "",
            "tests/base.py": BASE_CLASS,
            "tests/test_inherit.py": INHERITS,
        },
        config,
    )
    stage(repo, {"calc.py": DOCTEST.replace("return a + b", "return a - b")})
    code, report = _review_args(repo, jobs=int(jobs))
    kinds = _kinds(report)
    assert kinds == {
        "calc.py::calc.add": "regression",
        "tests/test_inherit.py::TestCalc::test_add": "regression",
    }, kinds
    assert code == 1


GOOD = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
IMPORTS = "import calc\n\n\ndef test_has_helper():\n    assert calc.helper() == 1\n"


def test_a_module_that_stops_collecting_is_a_regression_and_the_rest_still_runs(tmp_path):
    repo = _project(
        tmp_path,
        {
            "calc.py": CALC + "\n\ndef helper():\n    return 1\n",
            "tests/test_add.py": GOOD,
            "tests/test_helper.py": IMPORTS.replace(
                "import calc", "from calc import helper"
            ).replace("calc.helper()", "helper()"),
        },
    )
    stage(repo, {"calc.py": BROKEN})  # helper() is gone, add() is broken
    code, report = _review(repo)
    kinds = _kinds(report)
    assert kinds == {
        "tests/test_add.py::test_add": "regression",
        "tests/test_helper.py": "regression",
    }, kinds
    [module] = [f for f in report["regressions"] if f["test"] == "tests/test_helper.py"]
    assert "ImportError" in module["message"], module
    assert code == 1


EXITS = "import os\n\nfrom calc import add\n\n\ndef test_add():\n    os._exit(0)\n"


def test_a_run_that_exits_without_its_record_is_an_error_not_a_pass(tmp_path):
    repo = _project(tmp_path, {"tests/test_add.py": GOOD})
    stage(repo, {"tests/test_add.py": EXITS})
    code, report = _review(repo)
    [change] = [r for r in report["runs"] if r["side"] == "change" and r["name"] == "test"]
    assert change["status"] == "ERROR", change
    assert "never reached its end" in change["reason"]
    assert code == 3


CONFTEST_XFAIL = """import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "test_known_bug":
            item.add_marker(pytest.mark.xfail(reason="known bug"))
"""
KNOWN_BUG = GOOD + "\n\ndef test_known_bug():\n    assert add(1, 1) == 3\n"


def test_an_xfail_on_the_base_unmarked_by_the_change_is_no_regression(tmp_path):
    repo = _project(tmp_path, {"conftest.py": CONFTEST_XFAIL, "tests/test_add.py": KNOWN_BUG})
    stage(repo, {"conftest.py": ""})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_known_bug": "pre_existing"}, report
    assert code == 0


STRICT = """import pytest

from calc import add


@pytest.mark.xfail(strict=True, reason="add is broken for negatives")
def test_negative():
    assert add(-1, -1) == -2
"""


def test_a_strict_xpass_is_a_question_not_a_block(tmp_path):
    repo = _project(
        tmp_path,
        {"calc.py": "def add(a, b):\n    return abs(a) + abs(b)\n", "tests/test_neg.py": STRICT},
    )
    stage(repo, {"calc.py": CALC})  # the change fixes the known bug
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_neg.py::test_negative": "xpass_strict"}, report
    assert report["regressions"] == []
    assert code != 1


PLANTS = """from pathlib import Path


def test_plants_a_conftest():
    root = Path(__file__).resolve().parents[1]
    (root / "conftest.py").write_text("import calc\\ncalc.add = lambda a, b: a + b\\n")
    assert False, "planted"
"""


def test_nothing_a_reproduction_wrote_weighs_on_a_later_review(tmp_path):
    repo = _project(
        tmp_path,
        {
            ".gitignore": "conftest.py\n",
            "README.md": "add returns the sum of its arguments\n",
            "tests/test_add.py": GOOD,
        },
    )
    finding = {
        "id": "plant",
        "expert": "correctness",
        "severity": "error",
        "evidence": "test",
        "path": "calc.py",
        "line": 2,
        "title": "t",
        "body": "b",
        "oracle": {"kind": "human"},
        "repro": {"path": "tests/test_plant.py", "code": PLANTS, "fails": "planted"},
    }
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([finding]), encoding="utf-8")
    stage(repo, {"README.md": "add returns the sum of its arguments.\n"})
    first = review(repo, format="json", findings=findings)
    assert first.exit_code in (0, 3), first.stderr
    stage(repo, {"calc.py": BROKEN})
    code, report = _review_args(repo, no_cache=True)
    assert _kinds(report) == {"tests/test_add.py::test_add": "regression"}, report
    assert code == 1


def _review_args(repo: Path, **options: object) -> tuple[int, dict]:
    done = review(repo, format="json", **options)
    return done.exit_code, done.json


PKG = "def add(a, b):\n    return a + b\n"
PKG_TEST = "from pkg import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.mark.parametrize("forced", [False, True], ids=["path", "inserted-first"])
def test_an_editable_install_of_the_users_tree_does_not_hide_a_regression(tmp_path, forced):
    """The user's environment imports `pkg` from their working tree (a src layout installed
    with `pip install -e .`: a .pth file). Followed as it is, the base's run tests the change's
    code, and the regression reads as pre-existing."""
    import site
    import subprocess
    import sys

    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    [site_dir] = env_dir.glob("lib/python*/site-packages")
    ours = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (site_dir / "outer.pth").write_text("\n".join(ours) + "\n")  # pytest, from eyeful's venv
    repo_dir = tmp_path / "repo"
    src = str(repo_dir / "src")
    # A .pth line that runs code can put the user's tree ahead of anything eyeful sets.
    pth = f"import sys; sys.path.insert(0, {src!r})" if forced else src
    (site_dir / "editable.pth").write_text(pth + "\n")
    python = env_dir / "bin" / "python"
    config = eyeful_config(
        f"{python} -m pytest -q -p no:cacheprovider",
        test_one=f"{python} -m pytest -q -p no:cacheprovider {{test}}",
    )
    repo = make_repo(
        repo_dir,
        {"pyproject.toml": config, "src/pkg/__init__.py": PKG, "tests/test_pkg.py": PKG_TEST},
    )
    confirm(repo)
    stage(repo, {"src/pkg/__init__.py": PKG.replace("a + b", "a - b")})
    code, report = _review(repo)
    if forced:  # never a verdict from the wrong code: no result, naming the file and the fix
        [change] = [r for r in report["runs"] if r["name"] == "test"]
        assert change["status"] == "ERROR", change
        assert str(repo_dir / "src" / "pkg" / "__init__.py") in change["reason"]
        assert 'isolate = "venv"' in change["reason"]
        assert code == 3
        return
    assert _kinds(report) == {"tests/test_pkg.py::test_add": "regression"}, report
    assert code == 1


UT_TESTS = """import unittest

from calc import add


class TestCalc(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_zero(self):
        self.assertEqual(add(0, 0), 0)
"""


def test_unittest_outcomes_are_read_per_test(tmp_path):
    unittest = f"{PYTHON} -m unittest"
    repo = _project(
        tmp_path,
        {"tests/__init__.py": "", "tests/test_calc.py": UT_TESTS},
        eyeful_config(unittest, test_one=f"{unittest} {{test}}"),
    )
    stage(repo, {"calc.py": BROKEN})
    code, report = _review(repo)
    assert _kinds(report) == {"tests.test_calc.TestCalc.test_add": "regression"}, report
    assert report["runs"][0]["tests_from"] == "unittest"
    assert code == 1


def test_a_run_read_from_text_says_so(tmp_path):
    bare = f"env -u PYTEST_PLUGINS -u PYTEST_ADDOPTS {PYTEST}"  # eyeful's probe unloaded
    repo = _project(tmp_path, {"tests/test_add.py": GOOD}, eyeful_config(bare))
    stage(repo, {"calc.py": BROKEN})
    code, report = _review(repo)
    assert report["runs"][0]["tests_from"] == "output"
    texts = [u["text"] for u in report["uncertainty"]]
    assert any("read from the runner's output (a fallback" in t for t in texts), texts
    assert code == 3  # no test_one: unconfirmed


def test_a_command_that_sets_pythonpath_itself_still_loads_the_probe(tmp_path):
    own = f"PYTHONPATH=. {PYTEST}"  # the command's PYTHONPATH replaces the probe's entry
    config = eyeful_config(own, test_one=f"{own} {{test}}")
    repo = _project(tmp_path, {"tests/test_add.py": GOOD}, config)
    stage(repo, {"calc.py": BROKEN})
    code, report = _review(repo)
    change = report["runs"][0]
    # `python -m pytest` finds the loader eyeful put in the worktree's root for the run
    assert change["status"] == "FAILED" and change["tests_from"] == "probe", change
    assert _kinds(report) == {"tests/test_add.py::test_add": "regression"}, report
    assert code == 1
    worktrees = repo / ".git" / "eyeful" / "worktrees"
    assert not list(worktrees.glob("*/eyeful_probe.py"))  # removed after each run
    assert not list(worktrees.glob("*/__pycache__/eyeful_probe.*"))


@pytest.fixture(scope="module")
def old_pytest(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python whose pytest is older than the probe supports (6.2)."""
    venv = tmp_path_factory.mktemp("pytest6") / "venv"
    run(PYTHON, "-m", "venv", str(venv), cwd=venv.parent)
    python = str(venv / "bin" / "python")
    run(python, "-m", "pip", "install", "-q", "pytest==6.2.5", cwd=venv.parent)
    return python


def test_a_pytest_older_than_the_probe_supports_is_read_from_text_and_says_why(
    tmp_path, old_pytest
):
    old = f"{old_pytest} -m pytest -q -p no:cacheprovider"
    config = eyeful_config(old, test_one=f"{old} {{test}}")
    repo = _project(tmp_path, {"tests/test_add.py": GOOD}, config)
    stage(repo, {"calc.py": BROKEN})
    code, report = _review(repo)
    change = report["runs"][0]
    assert change["tests_from"] == "output", change
    assert change["read_from_text"].startswith("pytest 6.2.5 is older than 7.0"), change
    assert _kinds(report) == {"tests/test_add.py::test_add": "regression"}, report
    assert code == 1


GO_MOD = "module example.com/m\n\ngo 1.19\n"
GO_PARSE = "package {pkg}\n\nfunc Parse(s string) int {{ return len(s) }}\n"
GO_TEST = """package {pkg}

import "testing"

func TestParse(t *testing.T) {{
	if got := Parse("ab"); got != {want} {{
		t.Fatalf("Parse(ab) = %d, want {want}", got)
	}}
}}
"""


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed (.ci/run installs it)")
def test_go_tests_of_one_name_in_two_packages_are_two_tests(tmp_path, monkeypatch):
    # a.TestParse fails on the base already; the change breaks b.TestParse: a regression of b's,
    # not hidden behind a's old failure. No test_one: derived from the plain `go test`.
    monkeypatch.setenv("GOCACHE", str(Path.home().parent / "go-build"))
    monkeypatch.setenv("GOTOOLCHAIN", "local")
    monkeypatch.setenv("GOFLAGS", "-mod=mod")
    files = {
        "go.mod": GO_MOD,
        "a/a.go": GO_PARSE.format(pkg="a"),
        "a/a_test.go": GO_TEST.format(pkg="a", want=3),
        "b/b.go": GO_PARSE.format(pkg="b"),
        "b/b_test.go": GO_TEST.format(pkg="b", want=2),
    }
    config = eyeful_config("go test ./...")
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, **files})
    confirm(repo)
    derived = ("test_one", "go test -json -run '^NAME$' PACKAGE  (derived from test)")
    assert derived in shown_settings(load_config(repo), repo)  # what confirming showed
    stage(repo, {"b/b.go": "package b\n\nfunc Parse(s string) int { return 0 }\n"})
    code, report = _review(repo)
    assert report["runs"][0]["tests_from"] == "go-json"
    assert _kinds(report) == {
        "example.com/m/b.TestParse": "regression",
        "example.com/m/a.TestParse": "pre_existing",
    }, report
    (regression,) = report["regressions"]
    assert regression["rerun"] == "go test -json -run '^TestParse$' example.com/m/b"
    alone = [r for r in report["runs"] if r["name"] == "test_one"]
    assert {r["command"] for r in alone} == {
        "go test -json -run '^TestParse$' example.com/m/a",  # one package each
        "go test -json -run '^TestParse$' example.com/m/b",
    }
    assert code == 1


GREETS = "def greet():\n    return 'hello, world'\n"
GREET_TEST = (
    "from greet import greet\n\n\ndef test_greet():\n    assert greet() == 'hello, world'\n"
)


def test_a_project_that_asks_pytest_for_colour_gets_its_failure_without_colour_codes(tmp_path):
    """humanize's `addopts = ["--color=yes"]`: pytest writes its assertion explanation (a diff
    in pygments' colours) into the exception's message; the report shows the words, not
    escaped colour codes."""
    repo = _project(
        tmp_path,
        {"greet.py": GREETS, "tests/test_greet.py": GREET_TEST},
        config=eyeful_config(),
    )
    (repo / "pytest.ini").write_text(PYTEST_INI + "addopts = --color=yes\n", encoding="utf-8")
    run("git", "commit", "-qam", "colour", cwd=repo)
    stage(repo, {"greet.py": GREETS.replace("hello", "hallo")})
    done = review(repo, format="json")
    assert done.exit_code == 1, done
    [regression] = done.json["regressions"]
    assert regression["test"] == "tests/test_greet.py::test_greet"
    shown = done.markdown + json.dumps(done.json)
    assert "hallo" in done.markdown, done.markdown
    assert "\x1b" not in shown and "\\x1b" not in shown and "\\u001b" not in shown, shown
