"""The first ten minutes (issue 22): a minimal configuration blocks a real break, because the
single-test command is derived from a plain pytest or unittest `test` command."""

from __future__ import annotations

from pathlib import Path

from eyeful.config import load_config
from eyeful.trust import shown_settings
from tests.core import review
from tests.gitrepo import (
    PYTEST,
    PYTEST_INI,
    PYTHON,
    confirm,
    make_repo,
    stage,
)

CALC = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
UNITTESTS = (
    "import unittest\n\nfrom calc import add\n\n\nclass TestCalc(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)


def _minimal(tmp_path: Path, test: str, files: dict[str, str], extra: str = "") -> Path:
    config = f"{extra}[tool.eyeful.commands]\ntest = {test!r}\n"
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, "calc.py": CALC, **files})
    confirm(repo)
    return repo


def test_only_a_plain_pytest_command_blocks_a_break(tmp_path):
    repo = _minimal(
        tmp_path, f"{PYTEST} tests", {"pytest.ini": PYTEST_INI, "tests/test_calc.py": TESTS}
    )
    shown = dict(shown_settings(load_config(repo), repo))
    assert shown["test_one"].endswith(AT_FIRST_RUN)  # PYTEST has options: pytest's parse tells
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    done = review(repo, format="json")
    report = done.json
    assert [(r["test"], r["kind"]) for r in report["regressions"]] == [
        ("tests/test_calc.py::test_add", "regression")
    ], report
    assert report["regressions"][0]["rerun"] == f"{PYTEST} tests/test_calc.py::test_add"
    assert done.exit_code == 1


def test_only_a_plain_unittest_command_blocks_a_break(tmp_path):
    repo = _minimal(
        tmp_path,
        f"{PYTHON} -m unittest discover -s tests -t .",
        {"tests/__init__.py": "", "tests/test_calc.py": UNITTESTS},
    )
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    done = review(repo, format="json")
    report = done.json
    assert [(r["test"], r["kind"]) for r in report["regressions"]] == [
        ("tests.test_calc.TestCalc.test_add", "regression")
    ], report
    assert done.exit_code == 1


AT_FIRST_RUN = "(derived from pytest's parse of the test command at its first run)"
OPTION_CONFTEST = "def pytest_addoption(parser):\n    parser.addoption('--myopt', default=None)\n"
PLUGIN = "def pytest_addoption(parser):\n    parser.addoption('--plug-fast', action='store_true')\n"
OPTION_TESTS = (
    "from calc import add\n\n\ndef test_add(pytestconfig):\n"
    "    assert pytestconfig.getoption('myopt') == 'tests'  # the option's value, not a path\n"
    "    assert pytestconfig.getoption('plug_fast')\n"
    "    assert add(2, 3) == 5\n"
)


def test_a_project_option_and_a_plugin_option_derive_test_one_from_pytests_parse(tmp_path):
    # `--myopt` is the project's (conftest.py), `--plug-fast` a plugin's (`-p plug`): no list
    # of eyeful's knows them; pytest's own parse of the suite's run says `tests` after `--myopt`
    # is its value and the last `tests` a path, which the ids take the place of.
    test = f"{PYTEST} -p plug --plug-fast --myopt tests tests"
    files = {"pytest.ini": PYTEST_INI, "conftest.py": OPTION_CONFTEST, "plug.py": PLUGIN,
             "tests/test_calc.py": OPTION_TESTS}  # fmt: skip
    repo = _minimal(tmp_path, test, files, extra="[tool.eyeful]\nreruns = 2\n")
    shown = dict(shown_settings(load_config(repo), repo))
    assert shown["test_one"].endswith(AT_FIRST_RUN), shown  # shown and confirmed with `test`
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    done = review(repo, format="json")
    report = done.json
    (regression,) = report["regressions"]
    assert (regression["test"], regression["kind"]) == ("tests/test_calc.py::test_add",
                                                        "regression"), report  # fmt: skip
    assert regression["confirmation"] == (
        "on the change, alone: failed 2/2; on the base, alone: passed 2/2"
    )
    one = f"{PYTEST} -p plug --plug-fast --myopt tests tests/test_calc.py::test_add"
    assert regression["rerun"] == one
    assert {r["command"] for r in report["runs"] if r["name"] == "test_one"} == {one}
    assert done.exit_code == 1


def test_a_test_one_that_cannot_be_derived_says_why_at_confirm_and_in_the_report(tmp_path):
    repo = _minimal(
        tmp_path, f"{PYTEST} tests && true", {"pytest.ini": PYTEST_INI, "tests/test_calc.py": TESTS}
    )
    why = "is a shell command line"
    shown = dict(shown_settings(load_config(repo), repo))
    assert shown["test_one"].startswith("none: ") and why in shown["test_one"], shown
    assert "set commands.test_one" in shown["test_one"]
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    done = review(repo, format="json")
    report = done.json
    assert [(f["test"], f["kind"]) for f in report["other_failures"]] == [
        ("tests/test_calc.py::test_add", "unconfirmed")
    ], report
    (line,) = [u["text"] for u in report["uncertainty"] if why in u["text"]]
    assert line.startswith("no test_one, as the test command") and line in done.markdown
    assert done.exit_code == 3


def test_help_and_the_hook_say_how_to_install_from_the_repository(tmp_path):
    import shutil
    import subprocess

    from tests.gitrepo import run

    script = shutil.which("git-eyeful")
    assert script is not None
    help_text = " ".join(run(script, "-h", cwd=tmp_path).stdout.split())  # as wrapped
    assert "pypi.org" not in help_text and "pip install eyeful" not in help_text
    assert "pipx install git+URL" in help_text and "pip install ./eyeful" in help_text
    hook = Path(__file__).resolve().parents[1] / "hooks" / "pre-push"
    proc = subprocess.run(
        ["/bin/sh", str(hook), "origin", "url"], env={"PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "pip install eyeful)" not in proc.stderr
    assert "pipx install git+URL" in proc.stderr


MAYBE_CONFTEST = (
    "def pytest_addoption(parser):\n"
    "    parser.addoption('--maybe', nargs='?', const='on', default=None)\n"
)
MAYBE_TESTS = (
    "from calc import add\n\n\ndef test_add(pytestconfig):\n"
    "    assert pytestconfig.getoption('maybe') == 'on'\n"
    "    assert add(2, 3) == 5\n"
)


def test_an_option_with_an_optional_value_last_never_takes_the_ids(tmp_path):
    # `--maybe` (like pytest-cov's `--cov`) takes the next word when there is one: the ids put
    # after it were its value, the suite ran with another option and the break read as
    # pre-existing (clean). No path word (testpaths): the ids go first.
    files = {"pytest.ini": PYTEST_INI + "testpaths = tests\n", "conftest.py": MAYBE_CONFTEST,
             "tests/test_calc.py": MAYBE_TESTS}  # fmt: skip
    repo = _minimal(tmp_path, f"{PYTEST} --maybe", files, extra="[tool.eyeful]\nreruns = 1\n")
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    done = review(repo, format="json")
    report = done.json
    assert [(r["test"], r["kind"]) for r in report["regressions"]] == [
        ("tests/test_calc.py::test_add", "regression")
    ], report
    one = PYTEST.replace(" -q", " tests/test_calc.py::test_add -q", 1)
    assert report["regressions"][0]["rerun"] == f"{one} --maybe"
    assert done.exit_code == 1


def test_the_ids_take_the_place_of_the_first_path_word():
    from eyeful.focus import of
    from eyeful.records import Invocation

    args = ["tests", "--maybe"]
    how = of("pytest tests --maybe", None, Invocation(args=args, paths=[0]))
    assert how is not None and how.template == "pytest {test} --maybe"
    args = ["-q", "tests", "--maybe", "x", "tests/b"]
    how = of(f"pytest {' '.join(args)}", None, Invocation(args=args, paths=[1, 4]))
    assert how is not None and how.template == "pytest -q {test} --maybe x"
    # A record the code under test wrote over the probe's: an option is never a path to drop.
    forged = Invocation(args=args, paths=[0, 1])
    assert of(f"pytest {' '.join(args)}", None, forged) is None
    # Positions no word of the command stands at: no parse of it (not a crash, nor a path kept).
    for paths in ([5], [-1]):
        assert of(f"pytest {' '.join(args)}", None, Invocation(args=args, paths=paths)) is None


def test_a_run_reframed_to_the_test_commands_rootdir_renames_every_id_it_holds():
    """A one-test run under another rootdir (a change that adds `sub/pytest.ini`): each record
    of it keyed by test id, the change's lines each test ran included, names the test as the
    test command's records do."""
    from eyeful.focus import Alone
    from eyeful.records import Invocation
    from eyeful.runs import Run

    alone = Alone("pytest tests", None)
    alone.learn(Invocation(args=["tests"], paths=[0]), "", rootdir="")
    run = Run(side="change", name="test_one", command="pytest tests/t.py::x", tree="0" * 40,
              status="FAILED", exit_code=1, duration=0.1, rootdir="sub",
              tests={"tests/t.py::x": "failed"}, ran={"tests/t.py::x": {"m.py": [2]}})  # fmt: skip
    alone.reframe(run)
    assert run.tests == {"sub/tests/t.py::x": "failed"}
    assert run.ran == {"sub/tests/t.py::x": {"m.py": [2]}}
