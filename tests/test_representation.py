"""A regression blocks on what the changed code does, never on how it is written: a test that
fails because the change moved a line, added a comment or a docstring, or edited only the tests'
configuration, is a question (`unconfirmed`, exit 3), and says why. Each case blocked (exit 1)
before; each control beside it still blocks.

Real repositories reviewed through the core (tests/core.py), with real pytest.
"""

from __future__ import annotations

import pytest

from tests.core import review
from tests.gitrepo import PYTEST, PYTEST_INI, confirm, eyeful_config, git, make_repo, stage

CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
LOOKS = {
    "source": "import inspect\n\nimport calc\n\n\ndef test_looks():\n"
    "    assert len(inspect.getsource(calc.add).splitlines()) <= 2\n",
    "size": "import os\n\nimport calc\n\n\ndef test_looks():\n"
    "    assert os.path.getsize(calc.__file__) < len(calc.__name__) + 64\n",
    "code-object": "import calc\n\n\ndef test_looks():\n"
    "    assert calc.add.__code__.co_firstlineno < calc.mul.__code__.co_firstlineno\n",
}
RUNS = "import calc\n\n\ndef test_runs():\n    assert calc.add(2, 3) == 5\n"
REORDERED = "def mul(a, b):\n    return a * b\n\n\ndef add(a, b):\n    return a + b\n"
COMMENTED = 'def add(a, b):\n    """The sum."""\n    # plain addition\n    return a + b\n' + (
    "\n\ndef mul(a, b):\n    return a * b\n"
)


def _repo(tmp_path, files: dict[str, str]):
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(),
                                         "pytest.ini": PYTEST_INI, "calc.py": CALC,
                                         "tests/test_runs.py": RUNS, **files})  # fmt: skip
    confirm(repo)
    return repo


def _kinds(report: dict) -> dict[str, str]:
    return {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}


def _notes(report: dict) -> str:
    return "\n".join(u["text"] for u in report["uncertainty"])


@pytest.mark.parametrize("looks", list(LOOKS))
def test_a_test_that_looks_at_the_code_without_running_the_change_is_a_question(tmp_path, looks):
    """The test reads the module's source, takes its size, or compares its functions' code
    objects; the change adds a comment and a docstring (its syntax is the base's) or, for the
    code objects, swaps two functions (its syntax is not: the test ran none of the change's
    lines and looked at the code object)."""
    repo = _repo(tmp_path, {"tests/test_looks.py": LOOKS[looks]})
    stage(repo, {"calc.py": REORDERED if looks == "code-object" else COMMENTED})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_looks.py::test_looks": "unconfirmed"}, done
    why = "looked at the code object" if looks == "code-object" else "parses to the base's syntax"
    assert why in _notes(done.json), done
    assert "how the code is written, not what it does, so it does not block" in done.markdown
    assert "test_one" not in done.markdown, done  # it ran alone: not for want of test_one
    assert done.exit_code == 3, done


def test_a_test_that_runs_the_changed_line_and_reads_the_source_still_blocks(tmp_path):
    """The control: the change's code does otherwise (`a - b`), and the test runs it; that its
    run also read the module's source says nothing against that."""
    looks = RUNS.replace("import calc\n", "import inspect\n\nimport calc\n").replace(
        "== 5\n", '== 5 and "return" in inspect.getsource(calc.add)\n'
    )
    repo = _repo(tmp_path, {"tests/test_runs.py": looks})
    stage(repo, {"calc.py": COMMENTED.replace("a + b", "a - b")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_runs.py::test_runs": "regression"}, done
    assert done.exit_code == 1, done


WARNS = "import warnings\n\n\ndef area(w, h):\n" + (
    '    warnings.warn("deprecated", DeprecationWarning)\n    return w * h\n'
)
WARNS_TEST = """import warnings

from shapes import area


def test_where():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        area(1, 1)
    assert caught[0].lineno == 5
"""


@pytest.mark.parametrize("doc", [True, False], ids=["module-docstring", "a-constant"])
def test_a_test_pinning_a_line_number_the_layout_moved_is_a_question(tmp_path, doc):
    """A module docstring moves the line a warning is attributed to: the change's syntax is the
    base's, docstrings aside. The control: a line added that runs (a constant) blocks."""
    repo = _repo(tmp_path, {"shapes.py": WARNS, "tests/test_shapes.py": WARNS_TEST})
    top = '"""Shapes."""\n\n' if doc else "UNITS = 1\n\n"
    stage(repo, {"shapes.py": top + WARNS})
    done = review(repo, format="json")
    kind = "unconfirmed" if doc else "regression"
    assert _kinds(done.json) == {"tests/test_shapes.py::test_where": kind}, done
    assert done.exit_code == (3 if doc else 1), done


def test_a_change_to_the_tests_configuration_alone_is_a_question(tmp_path):
    """Only pytest.ini changed (`--import-mode=importlib`, which pytest cannot carry to the
    base: it says where the code is imported from): the tests' sibling helper no longer
    imports. No code changed, so nothing the code does broke."""
    helper = {
        "tests/helpers.py": "def expect(v):\n    return v\n",
        "tests/test_runs.py": RUNS.replace("== 5", "== __import__('helpers').expect(5)"),
    }
    repo = _repo(tmp_path, helper)  # fmt: skip
    stage(repo, {"pytest.ini": PYTEST_INI + "addopts = --import-mode=importlib\n"})
    done = review(repo, format="json")
    kinds = _kinds(done.json)
    assert "regression" not in kinds.values(), done
    assert "only its tests and their configuration" in _notes(done.json), done
    assert done.exit_code == 3, done


TREE = "class _Node:\n    def __init__(self, value):\n        self.value = value\n\n\n" + (
    "def leaf(value):\n    return _Node(value)\n"
)
TREE_TEST = "from tree import leaf\n\n\ndef test_leaf():\n    node = leaf(1)\n" + (
    "    assert node.value == 1\n"
)


def test_an_edited_test_whose_new_assertion_fails_on_both_codes_is_a_question(tmp_path):
    """The change renames a private class and adds to the test an assertion both codes fail
    (`'_TreeNode'` and `'_Node'` are not `'Node'`); the base's own version of the test passes
    on both. "Causes differ" blocked it; what the test asked before still holds."""
    repo = _repo(tmp_path, {"tree.py": TREE, "tests/test_tree.py": TREE_TEST})
    asks = TREE_TEST + "    assert type(node).__name__ == 'Node'\n"
    stage(repo, {"tree.py": TREE.replace("_Node", "_TreeNode"), "tests/test_tree.py": asks})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_tree.py::test_leaf": "fails_otherwise"}, done
    assert done.exit_code == 3, done


NET = "RETRIES = 3\n\n\ndef fetch(url):\n    return url\n\n\ndef attempts():\n    return RETRIES\n"
SCRIPT = "import sys\n\n\ndef count(text):\n    return len(text.split())\n\n\n" + (
    "if __name__ == '__main__':\n    print(count(sys.argv[1]))\n"
)
TEMPLATE = "DEBUG = False\n"
RENDER = "import pathlib\n\n\ndef render():\n" + (
    "    return (pathlib.Path(__file__).parent / 'template.py').read_text()\n"
)
HOOK = "print('built')\n"
RUNS_HOOK = "import os\nimport subprocess\n\n\ndef build():\n" + (
    "    here = os.path.dirname(os.path.abspath(__file__))\n"
    "    return subprocess.run([os.path.join(here, 'hook.py')], check=True).returncode\n"
)
CLI = 'import click\n\n\n@click.command()\ndef main():\n    """Count the words."""\n'
BEHAVES = {
    "mock-patch": (
        {"net.py": NET, "tests/test_net.py": "from unittest import mock\n\nimport net\n\n\n"
         "def test_net():\n    with mock.patch('net.fetch', return_value='x'):\n"
         "        assert net.attempts() == 3\n"},
        {"net.py": NET.replace("RETRIES = 3", "RETRIES = 1")},
    ),
    "a-script": (
        {"wc.py": SCRIPT, "tests/test_wc.py": "import os\nimport subprocess\nimport sys\n\n\n"
         "def test_wc():\n    script = os.path.join(os.path.dirname(__file__), '..', 'wc.py')\n"
         "    assert os.path.isfile(script)\n"
         "    out = subprocess.run([sys.executable, script, 'a b c'], capture_output=True,"
         " text=True)\n    assert out.stdout.strip() == '3'\n"},
        {"wc.py": SCRIPT.replace("text.split()", "text.split(' b ')")},
    ),
    "code-reads-a-template": (
        {"gen/__init__.py": "", "gen/render.py": RENDER, "gen/template.py": TEMPLATE,
         "tests/test_gen.py": "from gen.render import render\n\n\ndef test_gen():\n"
         "    assert 'DEBUG = False' in render()\n"},
        {"gen/template.py": TEMPLATE.replace("False", "True")},
    ),
    "executable-bit": (
        {"build.py": RUNS_HOOK, "hook.py": "#!/usr/bin/env python3\n" + HOOK,
         "tests/test_build.py": "import build\n\n\ndef test_build():\n"
         "    assert build.build() == 0\n"},
        {},
    ),
    "a-copy-run-in-a-child": (
        {"tool/__init__.py": "", "tool/__main__.py": "import sys\n\nprint(int(sys.argv[1]) * 2)\n",
         "tests/test_tool.py": "import os\nimport shutil\nimport subprocess\nimport sys\n\n\n"
         "def test_tool(tmp_path):\n"
         "    here = os.path.join(os.path.dirname(__file__), '..', 'tool')\n"
         "    shutil.copytree(here, tmp_path / 'tool')\n"
         "    out = subprocess.run([sys.executable, '-m', 'tool', '21'], cwd=tmp_path,"
         " capture_output=True, text=True)\n    assert out.stdout.strip() == '42'\n"},
        {"tool/__main__.py": "import sys\n\nprint(int(sys.argv[1]) * 3)\n"},
    ),
    "cmd-help": (
        {"shell.py": "import cmd\n\n\nclass Shell(cmd.Cmd):\n    def do_greet(self, arg):\n"
         '        """Say hello."""\n',
         "tests/test_shell.py": "import io\n\nfrom shell import Shell\n\n\ndef test_help():\n"
         "    out = io.StringIO()\n    Shell(stdout=out).onecmd('help greet')\n"
         "    assert 'Say hello.' in out.getvalue()\n"},
        {"shell.py": "import cmd\n\n\nclass Shell(cmd.Cmd):\n    def do_greet(self, arg):\n"
         '        """Greet."""\n'},
    ),
    "a-comment-the-code-reads": (
        {"plug.py": "import inspect\n\n\n# priority: 5\ndef fast():\n    return 1\n\n\n"
         "def priority():\n    return int(inspect.getcomments(fast).split(':')[1])\n",
         "tests/test_plug.py": "from plug import priority\n\n\ndef test_priority():\n"
         "    assert priority() == 5\n"},
        {"plug.py": "import inspect\n\n\n# priority: 50\ndef fast():\n    return 1\n\n\n"
         "def priority():\n    return int(inspect.getcomments(fast).split(':')[1])\n"},
    ),
    "the-code-reads-its-own-source": (
        {"plug.py": "import inspect\n\n\ndef fast():\n    return 1\n\n\n"
         "def weight():\n    return len(inspect.getsource(fast).splitlines())\n",
         "tests/test_plug.py": "from plug import weight\n\n\ndef test_weight():\n"
         "    assert weight() == 2\n"},
        {"plug.py": "import inspect\n\n\ndef fast():\n    one = 1\n    return one\n\n\n"
         "def weight():\n    return len(inspect.getsource(fast).splitlines())\n"},
    ),
    "click-help": (
        {"cli.py": CLI, "tests/test_cli.py": "from click.testing import CliRunner\n\n"
         "from cli import main\n\n\ndef test_help():\n"
         "    assert 'Count the words.' in CliRunner().invoke(main, ['--help']).output\n"},
        {"cli.py": CLI.replace("Count the words.", "Tally the words.")},
    ),
}  # fmt: skip


@pytest.mark.parametrize("how", list(BEHAVES))
def test_a_break_of_what_the_code_does_still_blocks(tmp_path, how):
    """What looks like representation and is not: `mock.patch` reads the patched function's
    code object to choose its mock; a test runs the changed script (after a stat of it); the
    code reads a changed `.py` template as its data; a test copies the package and runs the copy
    in a child process; the change drops a hook's executable bit; `cmd` and click print a
    docstring as a command's help; the code reads a comment, or weighs a function by its own
    source. Each was a question (exit 3); each is a break (exit 1)."""
    files, change = BEHAVES[how]
    repo = _repo(tmp_path, files)
    if how == "executable-bit":
        (repo / "hook.py").chmod(0o755)
        git(repo, "add", "hook.py")
        git(repo, "commit", "-qm", "an executable hook")
        git(repo, "update-index", "--chmod=-x", "hook.py")
    else:
        stage(repo, change)
    done = review(repo, format="json")
    assert list(_kinds(done.json).values()) == ["regression"], done
    assert done.exit_code == 1, done


SOURCE_CHECKS = """import subprocess

import calc


def test_no_todo():
    assert "TODO" not in open(calc.__file__).read()


def test_no_print():
    assert "print(" not in open(calc.__file__).read()


def test_grep():
    found = subprocess.run(["grep", "-c", "TODO", calc.__file__], capture_output=True, text=True)
    assert found.stdout.strip() == "0"
"""


def test_several_tests_that_look_at_the_source_are_each_a_question(tmp_path):
    """Three tests read the module's text (two themselves, one through `grep` in a child
    process) and the change adds a function no test runs: run alone together, which of them
    looked was not known, and all three blocked. Each runs once more on its own: questions."""
    repo = _repo(tmp_path, {"tests/test_source.py": SOURCE_CHECKS})
    stage(repo, {"calc.py": CALC + "\n\ndef debug(x):\n    print(x)  # TODO\n"})
    done = review(repo, format="json")
    kinds = _kinds(done.json)
    assert set(kinds.values()) == {"unconfirmed"} and len(kinds) == 3, done
    assert done.exit_code == 3, done


# The change's pytest configuration, which the base does not run with (helper-45) --------------

SHOP_B = (
    "import warnings\n\n\ndef discount(price, pct):\n    return round(price * (1 - pct / 100), 2)\n"
    "\n\ndef apply_discount(price, pct):\n"
    "    warnings.warn('apply_discount is deprecated', DeprecationWarning, stacklevel=2)\n"
    "    return discount(price, pct)\n"
)
SHOP_A = "def total(prices):\n    return round(sum(prices), 2)\n"
OLD_SHOP_A = (
    "import warnings\n\n\ndef _old_round(x):\n"
    "    warnings.warn('_old_round is deprecated', DeprecationWarning, stacklevel=2)\n"
    "    return round(x, 2)\n\n\ndef total(prices):\n    return _old_round(sum(prices))\n"
)
SHOP_TESTS = {
    "tests/test_a.py": "from shop.a import total\n\n\ndef test_total():\n"
    "    assert total([1, 2]) == 3\n",
    "tests/test_b.py": "from shop.b import apply_discount\n\n\ndef test_alias():\n"
    "    assert apply_discount(100, 10) == 90\n",
}
STRICT = '[tool.pytest.ini_options]\ntestpaths = ["tests"]\nfilterwarnings = ["error"]\n'


@pytest.mark.parametrize("control", [False, True])
def test_a_test_failing_on_the_changes_new_options_and_none_of_its_lines_is_a_question(
    tmp_path, control
):
    """The change tightens pytest's options (the base keeps its own: testpaths changed too) and
    edits one module; a test of another, untouched module fails on its old warning, now an
    error. Control: a test that runs the changed lines and fails on them still blocks."""
    shop_a = "def total(prices):\n    return round(sum(prices), 2) + 1\n" if control else SHOP_A
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = [\".\"]\n\n" + eyeful_config(),
        "shop/__init__.py": "", "shop/a.py": OLD_SHOP_A, "shop/b.py": SHOP_B, **SHOP_TESTS,
    })  # fmt: skip
    confirm(repo)
    strict = STRICT.replace(
        "[tool.pytest.ini_options]\n", '[tool.pytest.ini_options]\npythonpath = ["."]\n'
    )
    stage(repo, {"pyproject.toml": strict + "\n" + eyeful_config(), "shop/a.py": shop_a})
    done = review(repo, format="json")
    if control:
        assert done.exit_code == 1, done
        assert "tests/test_a.py::test_total" in {f["test"] for f in done.json["regressions"]}
        return
    assert done.exit_code == 3, done
    assert _kinds(done.json) == {"tests/test_b.py::test_alias": "unconfirmed"}, done
    assert "the configuration, not the code, may be what fails it" in _notes(done.json)


# A table of cases the tests read, which the change extends (helper-45) -------------------------

SLUG = "def slugify(text):\n    return '-'.join(text.lower().split())\n"
SPEC_TEST = (
    "import json\nfrom pathlib import Path\n\nfrom slug import slugify\n\n\n"
    "def test_conformance():\n"
    "    cases = json.loads((Path(__file__).parent.parent / 'spec' / 'cases.json').read_text())\n"
    "    for given, want in cases:\n        assert slugify(given) == want, given\n"
)
CASES = '[["Hello World", "hello-world"]]\n'


@pytest.mark.parametrize("control", [False, True])
def test_a_new_case_in_the_tests_data_failing_on_old_code_is_a_question(tmp_path, control):
    """The change adds one case to a table only the tests read: the base's code has always
    failed it (no transliteration), but the base ran with its own table. Control: a change to
    the code that breaks the table's old case still blocks."""
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "slug.py": SLUG,
        "spec/cases.json": CASES, "tests/test_spec.py": SPEC_TEST,
    })  # fmt: skip
    confirm(repo)
    if control:
        stage(repo, {"slug.py": SLUG.replace("'-'", "'_'")})
    else:
        stage(repo, {"spec/cases.json": '[["Hello World", "hello-world"], ["Crème", "creme"]]\n'})
    done = review(repo, format="json")
    if control:
        assert done.exit_code == 1, done
        return
    assert done.exit_code == 3, done
    assert _kinds(done.json) == {"tests/test_spec.py::test_conformance": "unconfirmed"}, done
    assert "the new data, not the code, may be what fails it" in _notes(done.json)


def test_a_change_to_the_codes_own_data_or_import_time_value_still_blocks(tmp_path):
    """Controls for the two questions above (helper-48): data inside the code's package that the
    code opens by a name its caller gives, and a module constant (run at import, not in the
    test's phases) edited with the pytest options: each is a break of what the code does."""
    rates = "import json\nfrom pathlib import Path\n\nRATE = 0.9\n\n\ndef table(name):\n" + (
        "    return json.loads((Path(__file__).parent / 'data' / name).read_text())\n\n\n"
        "def convert(x):\n    return x * RATE\n"
    )
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n\n' + eyeful_config(),
        "mypkg/__init__.py": rates, "mypkg/data/rates.json": '{"eur": 0.9}\n',
        "tests/test_rates.py": "import mypkg\n\n\ndef test_table():\n"
        "    assert mypkg.table('rates.json')['eur'] == 0.9\n\n\ndef test_convert():\n"
        "    assert mypkg.convert(10) == 9\n",
    })  # fmt: skip
    confirm(repo)
    stage(repo, {"mypkg/data/rates.json": '{"eur": 9.0}\n'})
    done = review(repo, format="json")
    assert done.exit_code == 1, done
    assert _kinds(done.json) == {"tests/test_rates.py::test_table": "regression"}, done
    git(repo, "reset", "-q", "--hard")
    strict = '[tool.pytest.ini_options]\npythonpath = ["."]\ntestpaths = ["tests"]\n\n'
    stage(repo, {"mypkg/__init__.py": rates.replace("RATE = 0.9", "RATE = 9.0"),
                 "pyproject.toml": strict + eyeful_config()})  # fmt: skip
    done = review(repo, format="json")
    assert done.exit_code == 1, done
    assert _kinds(done.json) == {"tests/test_rates.py::test_convert": "regression"}, done


def test_a_test_counting_the_packages_files_is_no_block_of_a_split_module(tmp_path):
    """helper-62: the change moves add's body into a new module of the package; a test counting
    the package's files (a listing: glob) fails, having run none of the change's lines. A
    listing of a directory holding a changed file is a look at it, as a reading is."""
    counts = (
        "import pathlib\n\nimport pkg\n\n\ndef test_add():\n    assert pkg.add(1, 2) == 3\n\n\n"
        "def test_modules():\n"
        "    assert len(list(pathlib.Path(pkg.__file__).parent.glob('*.py'))) == 2\n"
    )
    repo = _repo(tmp_path, {"pkg/__init__.py": "from pkg.core import add\n",
                            "pkg/core.py": "def add(a, b):\n    return a + b\n",
                            "tests/test_pkg.py": counts})  # fmt: skip
    split = "from pkg._ops import plus\n\n\ndef add(a, b):\n    return plus(a, b)\n"
    stage(repo, {"pkg/core.py": split, "pkg/_ops.py": "def plus(a, b):\n    return a + b\n"})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_pkg.py::test_modules": "unconfirmed"}, done.markdown
    assert "listed the directory of" in done.markdown, done.markdown
    assert done.exit_code == 3, done.markdown


# A line number the change moved without running any of its lines (helper-67 left open) --------

SHAPES = "import warnings\n\nSCALE = 1\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n\n\n" + (
    "def area(w, h):\n"
    '    warnings.warn("deprecated", DeprecationWarning)\n    return w * h * SCALE\n'
)
PINS = """import warnings

from shapes import area


def test_where():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert area(2, 3) == 6
    assert caught[0].lineno == 11
"""
LONGER = SHAPES.replace("    return 2 * (w + h)\n", "    total = w + h\n    return 2 * total\n")
CONFTEST_IMPORTS = "import shapes  # noqa: F401\n"


@pytest.mark.parametrize("conftest", [False, True], ids=["plain", "conftest-imports-it"])
def test_a_line_number_moved_by_lines_no_test_ran_is_a_question(tmp_path, conftest):
    """The change edits the body of a function no test calls, which moves the line a warning
    of another is attributed to: the test ran none of the change's lines, not even at import,
    and looked at none of its files, so what it saw differ is where a line is, not what the
    code does. With a conftest.py importing the module before any test module, its import is
    traced too (the initial conftest files' loading is)."""
    extra = {"conftest.py": CONFTEST_IMPORTS} if conftest else {}
    repo = _repo(tmp_path, {"shapes.py": SHAPES, "tests/test_shapes.py": PINS, **extra})
    stage(repo, {"shapes.py": LONGER})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_shapes.py::test_where": "unconfirmed"}, done
    assert "ran none of the change's lines, not even at import" in _notes(done.json), done
    assert done.exit_code == 3, done


FORKS = """import multiprocessing

from shapes import perimeter


def test_forked():
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(perimeter, (2, 3)) == 10
"""
IMPORT_TIME = """from shapes import area


def test_scaled():
    assert area(2, 3) == 6
"""


PRIMES = "PRIMES = (\n    2,\n    3,\n    5,\n)\n\n\ndef small_prime(n):\n" + (
    "    return n in PRIMES\n"
)
ASKS_PRIMES = "from primes import small_prime\n\n\ndef test_five():\n" + (
    "    assert small_prime(5)\n"
)


@pytest.mark.parametrize(
    "how",
    ["constant-run-by-a-conftest", "run-in-a-forked-child", "a-line-of-a-constant",
     "a-function-removed"],
)  # fmt: skip
def test_changed_lines_run_where_the_tracer_does_not_look_still_block(tmp_path, how):
    """Controls: the change's lines run, but not in the test's own phases: at the import a
    conftest.py makes before any test module (a constant the tested function reads), in a
    child a multiprocessing pool forks, or as a line of a constant spanning several (a tracer
    sees its first line only). Each is what the code does: a block, never a question for want
    of a traced line."""
    if how == "constant-run-by-a-conftest":
        files = {"conftest.py": CONFTEST_IMPORTS, "tests/test_shapes.py": IMPORT_TIME}
        change = SHAPES.replace("SCALE = 1", "SCALE = 2")
    elif how == "a-function-removed":
        # (the last one: no line after it, and the blank line before it never runs)
        files = {"tests/test_shapes.py": "import shapes\n\n\ndef test_api():\n"
                 "    assert shapes.volume(1, 2, 3) == 6\n"}  # fmt: skip
        change = SHAPES
        shapes = SHAPES + "\n\ndef volume(w, h, d):\n    return w * h * d\n"
        repo = _repo(tmp_path, {"shapes.py": shapes, **files})
        stage(repo, {"shapes.py": change})
        done = review(repo, format="json")
        assert list(_kinds(done.json).values()) == ["regression"], done
        assert done.exit_code == 1, done
        return
    elif how == "a-line-of-a-constant":
        # (one constant spanning lines: a tracer sees its first line run, never the changed one)
        repo = _repo(tmp_path, {"primes.py": PRIMES, "tests/test_primes.py": ASKS_PRIMES})
        stage(repo, {"primes.py": PRIMES.replace("5,", "7,")})
        done = review(repo, format="json")
        assert list(_kinds(done.json).values()) == ["regression"], done
        assert done.exit_code == 1, done
        return
    else:
        files = {"tests/test_shapes.py": FORKS}
        change = SHAPES.replace("2 * (w + h)", "2 * w + h")
    repo = _repo(tmp_path, {"shapes.py": SHAPES, **files})
    stage(repo, {"shapes.py": change})
    done = review(repo, format="json")
    assert list(_kinds(done.json).values()) == ["regression"], done
    assert done.exit_code == 1, done


# What a tracer of lines cannot see (helper-74): each a break of what the code does -----------

UNSEEN = {
    "a-yield-made-it-a-generator": (
        {"mod.py": "def value():\n    return 1\n",
         "tests/test_mod.py": "from mod import value\n\n\ndef test_value():\n"
         "    assert value() == 1\n"},
        {"mod.py": "def value():\n    return 1\n    yield\n"},
    ),
    "an-assignment-made-a-name-local": (
        {"mod.py": "LIMIT = 10\n\n\ndef clamp(x):\n    if x > LIMIT:\n        return LIMIT\n"
         "    return x\n",
         "tests/test_mod.py": "from mod import clamp\n\n\ndef test_clamp():\n"
         "    assert clamp(50) == 10\n"},
        {"mod.py": "LIMIT = 10\n\n\ndef clamp(x):\n    if x > LIMIT:\n        return LIMIT\n"
         "    if x < 0:\n        LIMIT = 0\n    return x\n"},
    ),
    "a-raw-thread": (
        {"mod.py": "def compute():\n    return 1\n",
         "tests/test_mod.py": "import _thread\n\nfrom mod import compute\n\n\n"
         "def test_compute():\n    out, done = [], _thread.allocate_lock()\n    done.acquire()\n\n"
         "    def work():\n        out.append(compute())\n        done.release()\n\n"
         "    _thread.start_new_thread(work, ())\n    done.acquire()\n    assert out == [1]\n"},
        {"mod.py": "def compute():\n    return 2\n"},
    ),
    "a-hook-between-phases": (
        {"mod.py": "def healthy():\n    return True\n",
         "tests/conftest.py": "import pytest\n\nfrom mod import healthy\n\n\n"
         "@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
         "    outcome = yield\n    report = outcome.get_result()\n"
         "    if call.when == 'call' and report.passed and not healthy():\n"
         "        report.outcome = 'failed'\n        report.longrepr = 'unhealthy'\n",
         "tests/test_mod.py": "def test_it():\n    assert True\n"},
        {"mod.py": "def healthy():\n    return False\n"},
    ),
    "a-plugin-that-ran-first": (
        {"mod.py": "def compute():\n    return 1\n",
         "early_plugin.py": "import sys\n\nimport mod\n\nRESULT = mod.compute()\n"
         "del sys.modules['mod']\n",
         "pytest.ini": "[pytest]\npythonpath = .\naddopts = -p early_plugin\n",
         "tests/test_mod.py": "import early_plugin\n\n\ndef test_compute():\n"
         "    assert early_plugin.RESULT == 1\n"},
        {"mod.py": "def compute():\n    return 2\n"},
    ),
    "a-plugins-thread": (
        {"mod.py": "def compute():\n    return 1\n",
         "worker_plugin.py": "import queue\nimport threading\n\nJOBS = queue.Queue()\n\n\n"
         "def _serve():\n    while True:\n        fn, box, done = JOBS.get()\n"
         "        box.append(fn())\n        done.set()\n\n\n"
         "threading.Thread(target=_serve, daemon=True).start()\n\n\ndef run(fn):\n"
         "    box, done = [], threading.Event()\n    JOBS.put((fn, box, done))\n"
         "    done.wait()\n    return box[0]\n",
         "pytest.ini": "[pytest]\npythonpath = .\naddopts = -p worker_plugin\n",
         "tests/test_mod.py": "import worker_plugin\nfrom mod import compute\n\n\n"
         "def test_compute():\n    assert worker_plugin.run(compute) == 1\n"},
        {"mod.py": "def compute():\n    return 2\n"},
    ),
    "the-same-code-in-another-file": (
        {"mod.py": "def compute():\n    return 1\n",
         "tests/reference.py": "def compute():\n    return 2\n",
         "tests/test_mod.py": "import mod\nfrom reference import compute as doubled\n\n\n"
         "def test_compute():\n    assert doubled() == 2\n    assert mod.compute() == 1\n"},
        {"mod.py": "def compute():\n    return 2\n"},
    ),
    "a-source-read-by-dir-fd": (
        {"pkg/__init__.py": "", "pkg/mod.py": "def compute():\n    return 1\n",
         "pkg/loader.py": "import os\n\n\ndef load(name):\n"
         "    here = os.open(os.path.dirname(os.path.abspath(__file__)), os.O_RDONLY)\n"
         "    try:\n        fd = os.open(name + '.py', os.O_RDONLY, dir_fd=here)\n"
         "    finally:\n        os.close(here)\n    with os.fdopen(fd) as f:\n"
         "        ns = {}\n        exec(compile(f.read(), '<plugin>', 'exec'), ns)\n"
         "    return ns\n",
         "tests/test_mod.py": "from pkg.loader import load\n\n\ndef test_compute():\n"
         "    assert load('mod')['compute']() == 1\n"},
        {"pkg/mod.py": "def compute():\n    return 2\n"},
    ),
    "a-profile-function": (
        {"mod.py": "def compute():\n    return 1\n",
         "tests/test_mod.py": "import sys\n\nfrom mod import compute\n\n\ndef test_compute():\n"
         "    seen = []\n\n    def prof(frame, event, arg):\n"
         "        if event == 'call' and frame.f_code.co_name == 'marker':\n"
         "            seen.append(compute())\n\n    def marker():\n        pass\n\n"
         "    sys.setprofile(prof)\n    try:\n        marker()\n    finally:\n"
         "        sys.setprofile(None)\n    assert seen == [1]\n"},
        {"mod.py": "def compute():\n    return 2\n"},
    ),
}  # fmt: skip


UNSEEN_MORE = {
    "a-trailing-return-deleted": (
        {"mod.py": "def total(prices):\n    result = sum(prices)\n\n    return result\n",
         "tests/test_mod.py": "import mod\n\n\ndef test_total():\n"
         "    assert mod.total([1, 2]) == 3\n"},
        {"mod.py": "def total(prices):\n    result = sum(prices)\n\n"},
    ),
    "an-audit-hook": (
        {"guard.py": "import sys\n\n\ndef _hook(event, args):\n"
         "    if event == 'open' and str(args[0]).endswith('.secret'):\n"
         "        raise PermissionError('off limits')\n\n\ndef install():\n"
         "    sys.addaudithook(_hook)\n",
         "tests/test_guard.py": "import pytest\n\nimport guard\n\n\n"
         "def test_refused(tmp_path):\n    guard.install()\n"
         "    with pytest.raises(PermissionError):\n        open(tmp_path / 'key.secret', 'w')\n"},
        {"guard.py": "import sys\n\n\ndef _hook(event, args):\n"
         "    if event == 'open' and str(args[0]).endswith('.secrets'):\n"
         "        raise PermissionError('off limits')\n\n\ndef install():\n"
         "    sys.addaudithook(_hook)\n"},
    ),
    "a-tracer-put-back": (
        {"mod.py": "def f():\n    return 1\n",
         "tests/test_mod.py": "import sys\n\nimport mod\n\n\ndef test_f():\n"
         "    previous = sys.gettrace()\n    sys.settrace(lambda frame, event, arg: None)\n"
         "    try:\n        result = mod.f()\n    finally:\n        sys.settrace(previous)\n"
         "    assert result == 1\n"},
        {"mod.py": "def f():\n    return 2\n"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("how", [*UNSEEN, *UNSEEN_MORE])
def test_a_body_edit_the_line_tracer_cannot_see_run_still_blocks(tmp_path, how):
    """helper-74: the change edits only a function's body, and the test fails by it though no
    changed line ran where the tracer looked: how the body compiles (a `yield`, a name made
    local), code run in a thread `_thread` started, a hook between a test's phases, a plugin
    pytest loaded before the probe (its module gone from sys.modules, or a thread of its), an
    equal function of another file run first, the source read through `dir_fd`, a profile
    function; helper-76: a `return` deleted after a blank line (no changed line left in the
    function it ended), an audit hook (run with tracing off), code run while the test's own
    tracer stood in for the probe's, put back since. Each gave exit 3 ("ran none of the
    change's lines"); each is a block."""
    files, change = {**UNSEEN, **UNSEEN_MORE}[how]
    repo = _repo(tmp_path, files)
    stage(repo, change)
    done = review(repo, format="json")
    assert set(_kinds(done.json).values()) == {"regression"}, done  # (the hook fails each test)
    assert done.exit_code == 1, done


@pytest.mark.parametrize("how", ["imports-multiprocessing", "a-comment-in-the-edited-body"])
def test_a_line_number_moved_beside_what_is_harmless_is_still_a_question(tmp_path, how):
    """helper-74's converse: a module that imports multiprocessing and starts no process, or a
    comment the change writes inside the body it edits (no `getcomments` reads it), leaves a
    test pinning a warning's line a question, not a block."""
    top = "import multiprocessing.pool  # noqa: F401\n" if how == "imports-multiprocessing" else ""
    shapes = top + SHAPES
    pins = PINS.replace("lineno == 11", f"lineno == {11 + bool(top)}")
    repo = _repo(tmp_path, {"shapes.py": shapes, "tests/test_shapes.py": pins})
    note = "  # the sum first" if how == "a-comment-in-the-edited-body" else ""
    stage(repo, {"shapes.py": top + LONGER.replace("total = w + h\n", f"total = w + h{note}\n")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_shapes.py::test_where": "unconfirmed"}, done
    assert done.exit_code == 3, done


OLD_API = "import warnings\n\n\ndef old_api():\n" + (
    '    warnings.warn("old_api is deprecated", DeprecationWarning, stacklevel=2)\n    return 0\n'
    "\n\ndef total(xs):\n    return sum(xs) + old_api()\n"
)


@pytest.mark.parametrize("how", ["added", "removed"])
def test_a_pytest_configuration_file_added_or_removed_alone_is_a_question(tmp_path, how):
    """helper-75: the change adds a `pytest.ini` that makes warnings errors (or removes one
    that forgave them), and a test of code that has always warned fails: no code changed. A
    configuration file on one side only counted as code: a block."""
    strict = "[pytest]\npythonpath = .\nfilterwarnings =\n    error\n"
    lenient = "[pytest]\npythonpath = .\n"
    files = {"pyproject.toml": eyeful_config(), "calc.py": OLD_API,
             "tests/test_calc.py": "import calc\n\n\ndef test_total():\n"
             "    assert calc.total([1, 2]) == 3\n"}  # fmt: skip
    if how == "removed":  # (the base's tox.ini forgives, the change's pytest.ini is gone)
        files |= {"pytest.ini": lenient, "tox.ini": strict}
    else:
        files |= {"setup.cfg": "[tool:pytest]\npythonpath = .\n"}
    repo = make_repo(tmp_path / "repo", files)
    confirm(repo)
    if how == "removed":
        git(repo, "rm", "-q", "pytest.ini")
    else:
        stage(repo, {"pytest.ini": strict})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_calc.py::test_total": "unconfirmed"}, done
    assert done.exit_code == 3, done


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("tox.ini", "[tox]\nenvlist = py311\n\n[testenv]\ncommands = pytest\n\n"
                    "[pytest]\npythonpath = .\nfilterwarnings =\n    error\n"),
        ("setup.cfg", "[flake8]\nmax-line-length = 100\n\n[mypy-calc.*]\nstrict = True\n\n"
                      "[tool:pytest]\npythonpath = .\nfilterwarnings =\n    error\n"),
    ],
)  # fmt: skip
def test_a_configuration_file_with_other_tools_sections_added_alone_is_a_question(
    tmp_path, name, text
):
    """helper-78: the change adds a `tox.ini` (or `setup.cfg`) whose pytest section makes
    warnings errors, beside sections only developers' tools read (tox's, flake8's, mypy's); a
    test of code that has always warned fails. Those sections counted as code: a block."""
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(), "calc.py": OLD_API,
                                         "pytest.ini": "[pytest]\npythonpath = .\n",
                                         "tests/test_calc.py": "import calc\n\n\n"
                                         "def test_total():\n"
                                         "    assert calc.total([1, 2]) == 3\n"})  # fmt: skip
    confirm(repo)
    git(repo, "rm", "-q", "pytest.ini")
    stage(repo, {name: text})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_calc.py::test_total": "unconfirmed"}, done
    assert done.exit_code == 3, done


HOWTO = """# How add works

```
>>> import inspect, calc
>>> print(inspect.getsource(calc.add))
def add(a, b):
    return a + b
<BLANKLINE>

```
"""


@pytest.mark.parametrize("change", ["body", "a-function-added"])
def test_a_doctest_that_shows_the_source_is_the_tests_look(tmp_path, change):
    """helper-80: a documentation page's doctest (`--doctest-glob=*.md`) prints `add`'s source;
    the change swaps the sum's terms (and adds a function). The look, asked from a `<doctest>`
    frame, was no one's, and doctest putting back the tracer it found counted as code run
    unseen: the failure blocked; as a test function's, a question. (A conftest imports the
    module first: a `def` line the change adds, run in the test, would count as running it.)"""
    test = f"{PYTEST} --doctest-glob=*.md"
    config = eyeful_config(test, test_one=f"{test} {{test}}")
    repo = _repo(tmp_path, {"pyproject.toml": config, "docs/howto.md": HOWTO,
                            "conftest.py": "import calc  # noqa\n"})  # fmt: skip
    swapped = CALC.replace("return a + b", "return b + a")
    if change == "a-function-added":
        swapped += "\n\ndef sub(a, b):\n    return a - b\n"
    stage(repo, {"calc.py": swapped})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"docs/howto.md::howto.md": "unconfirmed"}, done
    assert done.exit_code == 3, done


USAGE = 'Drop calc.py in anywhere:\n\n>>> ns = {}\n>>> exec(open("calc.py").read(), ns)\n' + (
    '>>> ns["add"](1, 2)\n3\n'
)


def test_a_doctest_that_runs_the_codes_text_still_blocks(tmp_path):
    """helper-81: a page's doctest reads `calc.py` and runs its text (`exec`): the code so run
    says `<string>`, so the tracer saw none of the change's lines run, and the reading was the
    tests' look: a real break was a question. Compiled, the text of a changed file read before
    runs unseen."""
    test = f"{PYTEST} --doctest-glob=*.md"
    config = eyeful_config(test, test_one=f"{test} {{test}}")
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, "USAGE.md": USAGE,
                                         "calc.py": CALC, "pytest.ini": PYTEST_INI})  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": CALC.replace("return a + b", "return a - b")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"USAGE.md::USAGE.md": "regression"}, done
    assert done.exit_code == 1, done


LISTS = {
    "grep": "import subprocess\n\n\ndef test_lines_fit():\n    found = subprocess.run(\n"
            "        ['grep', '-rnE', '--include=*.py', '.{80,}', 'pkg'], capture_output=True,"
            " text=True\n    )\n    assert found.stdout == ''\n",
    "git": "import subprocess\n\n\ndef test_documented():\n    listed = subprocess.run(\n"
           "        ['git', 'ls-files', 'pkg'], capture_output=True, text=True, check=True\n"
           "    ).stdout.split()\n"
           "    assert len([p for p in listed if not p.endswith('__init__.py')]) == 1\n",
}  # fmt: skip


@pytest.mark.parametrize("reader", list(LISTS))
def test_a_reader_started_on_the_codes_directory_is_the_tests_look(tmp_path, reader):
    """helper-80: a test greps the package's directory for long lines (or lists it with `git
    ls-files`); the change adds a function no test runs, with a long line (or a module). A
    reader named the changed file nowhere on its command line: no look, a block; `os.listdir`
    of the same directory is a question."""
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(),
                                         "pytest.ini": PYTEST_INI, "pkg/__init__.py": "",
                                         "pkg/calc.py": CALC, "tests/test_runs.py":
                                         RUNS.replace("import calc", "from pkg import calc"),
                                         "tests/test_look.py": LISTS[reader]})  # fmt: skip
    confirm(repo)
    if reader == "grep":
        long = "\n\ndef describe(a, b):\n    return f'{a} plus {b} makes, " + (
            "as anyone at all can check by hand on paper, {a + b}'\n"
        )
        stage(repo, {"pkg/calc.py": CALC + long})
    else:
        stage(repo, {"pkg/more.py": "def sub(a, b):\n    return a - b\n"})
    done = review(repo, format="json")
    test = "tests/test_look.py::" + ("test_lines_fit" if reader == "grep" else "test_documented")
    assert _kinds(done.json) == {test: "unconfirmed"}, done
    assert done.exit_code == 3, done


PLUGIN_TEST = """import subprocess
import sys


def test_plugin_types(tmp_path):
    tool = tmp_path / "mypy"  # (a type checker that loads the repository's plugin)
    tool.write_text(
        f"#!{sys.executable}\\nimport sys\\nsys.path.insert(0, '.')\\nimport myplugin\\n"
        "sys.exit(0 if myplugin.TYPE == 'int' else 1)\\n"
    )
    tool.chmod(0o755)
    assert subprocess.run([str(tool), "--no-incremental"]).returncode == 0
"""


def test_a_checker_that_runs_the_repositorys_plugin_still_blocks(tmp_path):
    """helper-81: a test runs `mypy` on the repository, which loads the repository's plugin;
    the change breaks the plugin. A reader started on no path counted as the tests' look at
    every changed file below it: a real break was a question. mypy, flake8, pylint and isort
    may run the repository's code: their runs are no look."""
    repo = _repo(tmp_path, {"myplugin.py": "TYPE = 'int'\n", "tests/test_plugin.py": PLUGIN_TEST})
    stage(repo, {"myplugin.py": "TYPE = 'str'\n"})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_plugin.py::test_plugin_types": "regression"}, done
    assert done.exit_code == 1, done


LINT_TEST = (
    "import configparser\nimport tomllib\nfrom pathlib import Path\n\n\n"
    "def _limit():\n    flake8 = configparser.ConfigParser()\n    flake8.read('.flake8')\n"
    "    if flake8.has_option('flake8', 'max-line-length'):\n"
    "        return flake8.getint('flake8', 'max-line-length')\n"
    "    data = tomllib.loads(Path('pyproject.toml').read_text())\n"
    "    return data['tool']['ruff']['line-length']\n\n\n"
    "def test_lines_fit():\n    limit = _limit()\n"
    "    assert all(len(line) <= limit for line in Path('calc.py').read_text().splitlines())\n"
)


@pytest.mark.parametrize("where", ["pyproject", "flake8"])
def test_a_linters_configuration_made_stricter_alone_is_a_question(tmp_path, where):
    """helper-80: the change only tightens a linter's settings (`[tool.ruff]` of pyproject.toml,
    or a `.flake8` it adds) and a test that lints the code fails on code that has not changed:
    another tool's section counted as code, a block."""
    config = eyeful_config() + "\n[tool.ruff]\nline-length = 100\n"
    long = "def total(xs):\n    return sum(x for x in xs if x is not None and x == x)  # all\n"
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, "calc.py": long,
                                         "tests/test_lint.py": LINT_TEST})  # fmt: skip
    confirm(repo)
    if where == "pyproject":
        stage(repo, {"pyproject.toml": config.replace("line-length = 100", "line-length = 60")})
    else:
        stage(repo, {".flake8": "[flake8]\nmax-line-length = 60\n"})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_lint.py::test_lines_fit": "unconfirmed"}, done
    assert done.exit_code == 3, done


def test_a_template_the_code_ships_edited_in_a_linters_section_still_blocks(tmp_path):
    """helper-81: a scaffolder returns its `templates/pyproject.toml`; the change edits that
    file's `[tool.ruff]` and a test of what the code returns fails. A file below the root may
    be the code's data: only its pytest section alone is the tests' configuration there."""
    scaffold = (
        "from pathlib import Path\n\n\ndef new_config():\n"
        "    return (Path(__file__).parent / 'templates' / 'pyproject.toml').read_text()\n"
    )
    template = "[project]\nname = 'x'\n\n[tool.ruff]\nline-length = 88\n"
    test = "import scaffold\n\n\ndef test_it():\n" + (
        "    assert 'line-length = 88' in scaffold.new_config()\n"
    )
    repo = _repo(tmp_path, {"scaffold/__init__.py": scaffold, "tests/test_scaffold.py": test,
                            "scaffold/templates/pyproject.toml": template})  # fmt: skip
    stage(repo, {"scaffold/templates/pyproject.toml": template.replace("88", "120")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_scaffold.py::test_it": "regression"}, done
    assert done.exit_code == 1, done


def test_a_configuration_file_with_a_section_the_code_reads_added_still_blocks(tmp_path):
    """The converse: the `setup.cfg` the change adds has, beside its pytest section, one the
    code reads at run time; what the code does may have changed with it: still code."""
    reads = (
        "import configparser\nfrom pathlib import Path\n\n\ndef limit():\n"
        "    parser = configparser.ConfigParser()\n"
        "    parser.read(Path(__file__).parent / 'setup.cfg')\n"
        "    return parser.getint('calc', 'limit', fallback=10)\n"
    )
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(), "calc.py": reads,
                                         "pytest.ini": "[pytest]\npythonpath = .\n",
                                         "tests/test_calc.py": "import calc\n\n\n"
                                         "def test_limit():\n"
                                         "    assert calc.limit() == 10\n"})  # fmt: skip
    confirm(repo)
    git(repo, "rm", "-q", "pytest.ini")
    stage(repo, {"setup.cfg": "[calc]\nlimit = 3\n\n[flake8]\nmax-line-length = 100\n\n"
                              "[tool:pytest]\npythonpath = .\n"})  # fmt: skip
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_calc.py::test_limit": "regression"}, done
    assert done.exit_code == 1, done


def test_a_shipped_file_named_pytest_ini_removed_still_blocks(tmp_path):
    """helper-77: the code ships a template named `pytest.ini` and reads it; the change removes
    it. A pytest configuration file added or removed counts as the tests' only at the root."""
    scaffold = (
        "from pathlib import Path\n\nTEMPLATES = Path(__file__).parent / 'templates'\n\n\n"
        "def scaffold(dest):\n    (Path(dest) / 'pytest.ini').write_text("
        "(TEMPLATES / 'pytest.ini').read_text())\n    return sorted(p.name for p in "
        "Path(dest).iterdir())\n"
    )
    repo = _repo(tmp_path, {"scaffold/__init__.py": scaffold,
                            "scaffold/templates/pytest.ini": "[pytest]\ntestpaths = tests\n",
                            "tests/test_scaffold.py": "from scaffold import scaffold\n\n\n"
                            "def test_writes(tmp_path):\n"
                            "    assert scaffold(tmp_path) == ['pytest.ini']\n"})  # fmt: skip
    git(repo, "rm", "-q", "scaffold/templates/pytest.ini")
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_scaffold.py::test_writes": "regression"}, done
    assert done.exit_code == 1, done
