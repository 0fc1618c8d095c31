"""`clean` only where the runs show it (issue 31): a verdict stands only on evidence that covers
it (eyeful/claims.py). Each case is a real repository reviewed through the core (tests/core.py);
each failed on the code before the claims module (read as pre-existing, clean, or a new test).
"""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

import pytest

from tests.core import review
from tests.gitrepo import (
    BROKEN_ADD,
    CALC,
    CALC_TESTS,
    PYTEST,
    PYTEST_INI,
    PYTHON,
    SYSTEM_TMP,
    confirm,
    eyeful_config,
    git,
    make_repo,
    stage,
)


def _project(root, files: dict[str, str], **config: str):
    repo = make_repo(
        root / "repo",
        {
            "pyproject.toml": eyeful_config(**config),
            "pytest.ini": PYTEST_INI,
            "calc.py": CALC,
            "tests/test_calc.py": CALC_TESTS,
            **files,
        },
    )
    confirm(repo)
    return repo


def _change_test_run(report: dict) -> dict:
    """The change's run of the test command (one)."""
    [change] = [r for r in report["runs"] if r["side"] == "change" and r["name"] == "test"]
    return change


def _kinds(report: dict) -> list[tuple[str, str]]:
    every = report["regressions"] + report["other_failures"]
    return sorted((f["test"], f["kind"]) for f in every)


# Point 2: a runner that could not start, on both sides ----------------------------------------

# What an old pytest does on a Python it does not support: it raises while it is imported, before
# it runs anything (pytest 4 on Python 3.10: `from collections import Mapping`).
OLD_PYTEST = "from collections import Mapping  # removed in Python 3.10\n"


def test_a_runner_crashing_at_start_on_both_sides_is_could_not_verify(tmp_path):
    test = f"env PYTHONPATH=oldpytest {shlex.quote(PYTHON)} -m pytest -q -p no:cacheprovider"
    repo = _project(tmp_path, {"oldpytest/pytest/__init__.py": OLD_PYTEST}, test=test)
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 3, proc.markdown
    assert report["other_failures"] == [] and report["regressions"] == []
    first = proc.markdown.splitlines()[0]
    assert "the tests could not run" in first, first
    assert "cannot import name 'Mapping' from 'collections'" in first, first
    assert "pre-existing" not in proc.markdown
    [incomplete] = report["incomplete"]
    assert incomplete["side"] == "change" and "Mapping" in incomplete["why"]


def test_a_conftest_raising_on_both_sides_quotes_its_error_not_the_rootdir_header(tmp_path):
    conftest = "raise RuntimeError('the conftest is broken')\n"
    repo = _project(tmp_path, {"conftest.py": conftest})
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.markdown
    first = proc.markdown.splitlines()[0]
    assert "the tests could not run" in first, first
    assert "RuntimeError: the conftest is broken" in first, first
    assert "rootdir" not in first
    assert "pre-existing" not in proc.markdown


# Point 3: a change run that stopped early ------------------------------------------------------

FIRST_FAILS = """from calc import add


def test_first():
    assert 1 == 2


def test_second():
    assert add(2, 3) == 5
"""


def test_a_run_stopped_by_x_runs_the_tests_it_did_not_reach(tmp_path):
    stops = f"{PYTEST} -x"
    repo = _project(
        tmp_path, {"tests/test_a.py": FIRST_FAILS}, test=stops, test_one=f"{stops} {{test}}"
    )
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 1, proc.markdown
    blocking = sorted(f["test"] for f in report["regressions"])
    assert blocking == ["tests/test_a.py::test_second", "tests/test_calc.py::test_add"]
    assert ("tests/test_a.py::test_first", "pre_existing") in _kinds(report)


def test_a_coloured_run_read_from_its_text_still_says_it_stopped(tmp_path):
    """helper-68's lead: a run read from its text (its command sets both variables the probe
    comes by) with `--color=yes`: pytest's `stopping after 1 failures` line in colour was not
    read, and the run did not say it stopped."""
    stops = f"PYTEST_PLUGINS= PYTEST_ADDOPTS=--color=yes {PYTEST} -x"
    repo = _project(tmp_path, {"tests/test_a.py": FIRST_FAILS}, test=stops)
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    change = _change_test_run(proc.json)
    assert change["tests_from"] in ("output", "junit"), change
    assert change["stopped"] is not None and "first failures" in change["stopped"], change


def test_pytest_exit_in_a_new_test_is_never_clean(tmp_path):
    repo = _project(tmp_path, {})
    exits = "import pytest\n\n\ndef test_stop():\n    pytest.exit('enough', returncode=0)\n"
    stage(repo, {"calc.py": BROKEN_ADD, "tests/test_0_stop.py": exits})
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code != 0, proc.markdown
    assert [f["test"] for f in report["regressions"]] == ["tests/test_calc.py::test_add"]
    [incomplete] = report["incomplete"]
    assert incomplete["ids"] == ["tests/test_0_stop.py::test_stop"], incomplete
    assert "pytest.exit" in incomplete["why"]


GUARDED_CLI = "import sys\n\n\ndef main():\n    return 0\n\n\nif __name__ == '__main__':\n"
GUARDED_CLI += "    sys.exit(main())\n"
# A `-p` plugin of the ini's addopts (loaded before eyeful's probe) that imports cli.py, and the
# change that makes cli.py exit 0 at import, with add broken.
PLUGIN_IMPORTS_CLI = {
    "cli.py": GUARDED_CLI,
    "myplugin.py": "import cli  # noqa: F401\n",
    "pytest.ini": PYTEST_INI.replace("[pytest]\n", "[pytest]\naddopts = -p myplugin\n"),
}
CLI_EXITS = {"calc.py": BROKEN_ADD, "cli.py": "import sys\n\nsys.exit(0)\n"}


@pytest.mark.parametrize(
    ("conftest", "cli"),
    [
        # Code a conftest imports lost its `__main__` guard: pytest exits 0 as it loads it.
        ("import cli\n", "import sys\n\n\ndef main():\n    return 0\n\n\nsys.exit(main())\n"),
        # A conftest's early hook calls the code, which now ends the process.
        (
            "import cli\n\n\ndef pytest_sessionstart(session):\n    cli.main()\n",
            "import os\n\n\ndef main():\n    os._exit(0)\n",
        ),
    ],
    ids=["sys-exit-at-import", "os-exit-in-sessionstart"],
)
def test_a_pytest_that_exits_0_before_its_session_is_never_clean(tmp_path, conftest, cli):
    # helper-61: pytest exited 0 before eyeful's probe wrote a line, and its text named no test:
    # read as a run without a record, it was PASSED, and the broken add was clean.
    repo = _project(tmp_path, {"cli.py": GUARDED_CLI, "tests/conftest.py": conftest})
    stage(repo, {"calc.py": BROKEN_ADD, "cli.py": cli})
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.markdown
    change = _change_test_run(proc.json)
    assert change["status"] == "ERROR", change
    assert "pytest ended before it collected any test" in change["reason"], change["reason"]


RUNTESTS = '#!/bin/sh\nexec "$PYTHON" -m pytest -q -p no:cacheprovider "$@"\n'


def test_a_wrapper_whose_pytest_exits_0_before_the_probe_is_never_clean(tmp_path):
    """helper-66: `test = "./runtests.sh"`, a script that runs pytest; the ini's `-p` plugin
    imports code that now exits 0 at import, before eyeful's probe loads. No record, no word of
    a test: read from its text, the run passed, and the broken add was clean. The base's run of
    the same command recorded its tests: the change's never started."""
    files = {**PLUGIN_IMPORTS_CLI, "runtests.sh": RUNTESTS}
    command = f"PYTHON={shlex.quote(PYTHON)} sh runtests.sh"
    repo = _project(tmp_path, files, test=command, test_one=f"{command} {{test}}")
    stage(repo, CLI_EXITS)
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.markdown
    [incomplete] = proc.json["incomplete"]
    assert incomplete["side"] == "change" and incomplete["reached_no_test"], incomplete
    # helper-69: another tree of the broken change: its first review's silent run, cached,
    # does not answer for the command.
    stage(repo, {"cli.py": "import sys\n\nsys.exit(0)  # two\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.markdown
    # A harmless change: the same command records its tests on both sides, clean.
    stage(repo, {"calc.py": CALC, "cli.py": GUARDED_CLI + "# a comment\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.markdown


@pytest.mark.parametrize("first", ["--markers", "--help"])
def test_a_pytest_session_that_only_informs_leaves_a_command_clean(tmp_path, first):
    """helper-68: `pytest --markers > /dev/null && pytest -q`: the first session configures
    and prints, with no session to end; taken for one that never ended, a healthy change got
    exit 3."""
    test = f"{PYTEST} {first} > /dev/null && {PYTEST}"
    repo = _project(tmp_path, {}, test=test, test_one=f"{PYTEST} {{test}}")
    stage(repo, {"calc.py": CALC + "# a comment\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.markdown


def test_a_second_pytest_session_that_fails_blocks(tmp_path):
    """helper-68: `pytest a && pytest b` with b failing: the first session's exit status (0)
    was the run's, and a failing test beside it read as a record that disagrees with pytest:
    ERROR, exit 3, where it blocks."""
    files = {"tests/test_a.py": "def test_ok():\n    assert True\n"}
    test = f"{PYTEST} tests/test_a.py && {PYTEST} tests/test_calc.py"
    repo = _project(tmp_path, files, test=test, test_one=f"{PYTEST} {{test}}")
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("tests/test_calc.py::test_add", "regression")], proc.markdown
    assert proc.exit_code == 1, proc.markdown


def test_a_pytest_that_exits_0_before_the_probe_beside_unittest_is_never_clean(tmp_path):
    """helper-69: `pytest ... && python -m unittest ...`; the change makes pytest exit 0 before
    the probe loads; unittest's record of its own tests was all the run had: clean."""
    legacy = (
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n"
    )
    files = {**PLUGIN_IMPORTS_CLI, "legacy/test_legacy.py": legacy}
    command = f"{PYTEST} tests && {shlex.quote(PYTHON)} -m unittest discover -v -s legacy"
    repo = _project(tmp_path, files, test=command, test_one=f"{PYTEST} {{test}}")
    stage(repo, CLI_EXITS)
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.markdown
    # Healthy, both runners record on both sides: clean, and no base run asked for.
    stage(repo, {"calc.py": CALC, "cli.py": GUARDED_CLI + "# a comment\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.markdown
    assert [r["side"] for r in proc.json["runs"]] == ["change"], proc.json["runs"]


def test_a_pytest_read_from_its_text_that_ran_nothing_is_never_clean(tmp_path):
    """helper-70: a pytest read from its text (the command sets both variables the probe comes
    by; `-vv` names each test); the change's code ends the process (`os._exit(0)`) as a
    conftest imports it: no test named, where the base's run, read from its text too, named
    them: clean. And a healthy change of such a command asks for no base run."""
    command = f"PYTEST_PLUGINS= PYTEST_ADDOPTS=-vv {PYTEST}"
    repo = _project(
        tmp_path, {"cli.py": GUARDED_CLI, "tests/conftest.py": "import cli  # noqa: F401\n"},
        test=command, test_one=f"{command} {{test}}",
    )  # fmt: skip
    stage(repo, {"calc.py": CALC + "# a comment\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.markdown
    assert [r["side"] for r in proc.json["runs"]] == ["change"], proc.json["runs"]
    stage(repo, {"calc.py": BROKEN_ADD, "cli.py": "import os\n\nos._exit(0)\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.markdown


def test_a_command_eyeful_cannot_read_is_compared_with_the_base_once(tmp_path):
    """A test command that names no test and leaves no record (a runner eyeful does not read):
    its exit code is all there is, once the base's run showed it names none either; that run
    is cached, and no base run is asked for again on that base."""
    command = f"{shlex.quote(PYTHON)} -c 'import calc'"
    repo = _project(tmp_path, {}, test=command)
    stage(repo, {"calc.py": CALC + "# one\n"})
    first = review(repo, format="json")
    assert first.exit_code == 0, first.markdown
    assert [r["side"] for r in first.json["runs"]] == ["change", "base"], first.json["runs"]
    stage(repo, {"calc.py": CALC + "# two\n"})
    second = review(repo, format="json")
    assert second.exit_code == 0, second.markdown
    sides = [(r["side"], r["cached"]) for r in second.json["runs"]]
    assert sides == [("change", False), ("base", True)], second.json["runs"]


def test_a_second_pytest_session_that_never_starts_is_never_clean(tmp_path):
    # helper-66: a command of two pytest runs; the second's conftest imports code that now
    # exits at import. That pytest wrote only the probe's `loaded` line and exited 0; the
    # first session's whole record was taken for the run's, and the broken add was clean.
    test = f"{PYTEST} tests/unit && {PYTEST} tests/integration"
    files = {
        "cli.py": GUARDED_CLI,
        "tests/unit/test_mul.py": "from calc import mul\n\n\ndef test_mul():\n"
        "    assert mul(2, 3) == 6\n",
        "tests/integration/conftest.py": "import cli  # noqa: F401\n",
        "tests/integration/test_add.py": "from calc import add\n\n\ndef test_add():\n"
        "    assert add(2, 3) == 5\n",
    }
    repo = _project(tmp_path, files, test=test, test_one=f"{PYTEST} {{test}}")
    stage(repo, CLI_EXITS)
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.markdown
    change = _change_test_run(proc.json)
    assert change["status"] == "ERROR", change
    assert "1 of the command's 2 pytest sessions never" in change["reason"], change["reason"]


OPS = 'OPS = {"add": (lambda a, b: a + b, 5), "sub": (lambda a, b: a - b, 1)}\n'
OPS_TESTS = """import unittest

import ops


class TestOps(unittest.TestCase):
    pass


def _make(name):
    fn, want = ops.OPS[name]

    def test(self):
        self.assertEqual(fn(3, 2), want)

    return test


for _name in ops.OPS:
    setattr(TestOps, f"test_{_name}", _make(_name))
"""


def test_a_command_setting_the_probes_variables_itself_is_read_from_its_text(tmp_path):
    # helper-65: its own PYTEST_ADDOPTS drops the `-p` eyeful puts there for a command that sets
    # PYTEST_PLUGINS: a whole passing run leaves no record, which is no sign it never started.
    test = f"PYTEST_PLUGINS=myplugin PYTEST_ADDOPTS=-rA {shlex.quote(PYTHON)} -m pytest -v"
    repo = _project(tmp_path, {"myplugin.py": "import pytest  # noqa: F401\n"}, test=test)
    stage(repo, {"calc.py": CALC + "\n# tidy\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.markdown
    change = _change_test_run(proc.json)
    assert change["status"] == "PASSED", change


@pytest.mark.parametrize(
    "test",
    [
        PYTEST,
        # helper-66: a command that sets PYTEST_ADDOPTS alone still gets the probe (by
        # PYTEST_PLUGINS); it was read from its text, as one that drops the probe.
        f"PYTEST_ADDOPTS=-ra {PYTEST}",
        # One that sets PYTEST_PLUGINS alone gets it by eyeful's `-p` in PYTEST_ADDOPTS.
        f"PYTEST_PLUGINS= {PYTEST}",
    ],
    ids=["plain", "own-addopts", "own-plugins"],
)
def test_a_pytest_that_exits_0_before_it_loads_the_probe_is_never_clean(tmp_path, test):
    # helper-64: a `-p` plugin of the ini's addopts loads before eyeful's probe (which comes by
    # PYTEST_PLUGINS): it imports code that lost its `__main__` guard, pytest exits 0 with no
    # record at all, and its text, naming no test, read as a pass.
    repo = _project(tmp_path, PLUGIN_IMPORTS_CLI, test=test, test_one=f"{test} {{test}}")
    stage(repo, CLI_EXITS)
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.markdown
    change = _change_test_run(proc.json)
    assert change["status"] == "ERROR", change


@pytest.mark.parametrize(
    ("runner", "test"),
    [("pytest", "tests/test_ops.py::TestOps::test_minus"),
     ("unittest", "tests.test_ops.TestOps.test_minus")],
)  # fmt: skip
def test_a_failing_test_the_codes_data_names_in_an_unchanged_file_is_never_new(
    tmp_path, runner, test
):
    # helper-61: the test file makes its methods from the code's table; the change renamed
    # "sub" to "minus" and broke it. test_minus is no test the change wrote: the base's
    # test_sub ran the same check and passed. It was "new, fails" and the review clean; under
    # unittest, whose loader errs on a name the base's class lacks, "pre-existing".
    files = {"ops.py": OPS, "tests/test_ops.py": OPS_TESTS, "tests/__init__.py": ""}
    config = {} if runner == "pytest" else {"test": f"{shlex.quote(PYTHON)} -m unittest -v"}
    repo = _project(tmp_path, files, **config)
    stage(
        repo, {"ops.py": OPS.replace('"sub": (lambda a, b: a - b', '"minus": (lambda a, b: b - a')}
    )
    proc = review(repo, format="json")
    # (A unittest command's first review of a base runs the base's suite, helper-79: there
    # test_sub passed, and the change no longer has it.)
    gone = [] if runner == "pytest" else [("tests.test_ops.TestOps.test_sub", "newly_skipped")]
    assert sorted(_kinds(proc.json)) == sorted([(test, "undetermined"), *gone]), proc.markdown
    assert proc.exit_code == 3, proc.markdown


def test_a_run_stopped_early_with_no_way_to_run_the_rest_is_could_not_verify(tmp_path):
    stops = f"{PYTEST} -x && true"  # no test_one: none can be derived from a shell list
    repo = _project(tmp_path, {"tests/test_a.py": FIRST_FAILS}, test=stops)
    stage(repo, {"tests/test_calc.py": CALC_TESTS + "\n# touched\n"})
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 3, proc.markdown
    [incomplete] = report["incomplete"]
    assert incomplete["side"] == "change"
    assert "-x" in incomplete["why"] and incomplete["tests"] == 3, incomplete
    lines = [u["text"] for u in report["uncertainty"] if u["unverified"]]
    assert any(line.startswith("3 tests did not run on the change") for line in lines), lines


# Point 4: skips the change caused --------------------------------------------------------------

PLUGIN = "def hook():\n    return 'hooked'\n"
PLUGIN_TESTS = """import pytest

plugin = pytest.importorskip("calc_plugin")


def test_hook():
    assert plugin.hook() == 'hooked'
"""
SKIPS_NOW = """import pytest


@pytest.mark.skip(reason="not today")
def test_add():
    pass


def test_mul():
    pass
"""


def test_a_module_made_unimportable_blocks_its_importorskip_tests(tmp_path):
    repo = _project(tmp_path, {"calc_plugin.py": PLUGIN, "tests/test_plugin.py": PLUGIN_TESTS})
    stage(repo, {"calc_plugin.py": "import no_such_dependency\n" + PLUGIN})
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 1, proc.markdown
    [blocked] = report["regressions"]  # the module skipped itself: none of its tests collected
    assert blocked["test"] == "tests/test_plugin.py"
    assert "no_such_dependency" in blocked["message"]


def test_a_test_the_change_skips_is_a_question_naming_its_reason(tmp_path):
    repo = _project(tmp_path, {})
    stage(repo, {"tests/test_calc.py": SKIPS_NOW})
    proc = review(repo, format="json")
    report = proc.json
    assert _kinds(report) == [("tests/test_calc.py::test_add", "newly_skipped")]
    assert "not today" in proc.markdown
    # What it checks went unchecked: a question, and the review could not verify the change
    # (exit 3: a pre-push hook stops and says why, where exit 0 would pass it by unseen).
    assert (report["outcome"], report["questions"], proc.exit_code) == ("unverified", 1, 3)
    # Its run alone checked a skip: no failing test ran alone.
    assert "1 run of a test alone (1 on the base)" in proc.markdown
    assert "`tests/test_calc.py::test_add`" in proc.markdown.split("### Uncertainty")[1]


ORDER_SKIP = """import pytest

import calc

WARM = {}


def test_a_warms():
    WARM["x"] = calc.add(1, 2)


def test_cold_start():
    if WARM:
        pytest.skip("warm already: another test ran first")
    assert calc.add(2, 3) == 5
"""


def test_a_test_the_suites_order_skips_on_both_sides_is_no_question(tmp_path):
    """In the suite a test skips because an earlier test warmed a cache, on HEAD as on the
    change; alone it runs and passes. The base's run by id is alone: the change's is run alone
    too, so the sides are compared in one context, and a harmless change stays clean."""
    repo = _project(tmp_path, {"tests/test_order.py": ORDER_SKIP})
    stage(repo, {"calc.py": CALC + "\n\ndef sub(a, b):\n    return a - b\n"})
    proc = review(repo, format="json")
    assert proc.json["other_failures"] == [], proc.markdown
    assert proc.exit_code == 0, proc.markdown


LEAVES_DISABLED = """import calc

calc.ENABLED = [True]


def test_a_disables():
    calc.disable()
    assert not calc.ENABLED[0]
    calc.reset()
"""
USES_FLAG = """import pytest

import calc


def test_b_adds():
    if not calc.ENABLED[0]:
        pytest.skip("disabled")
    assert calc.add(2, 3) == 5
"""
FLAGS = CALC + (
    "\n\nENABLED = [True]\n\n\ndef disable():\n    ENABLED[0] = False\n\n\n"
    "def reset():\n    ENABLED[0] = True\n"
)


def test_a_skip_the_change_causes_only_in_the_suite_is_a_question(tmp_path):
    """The change's reset() no longer resets: in the suite the next test skips, alone it runs.
    The base's suite runs it: the change made it skip there, a question (exit 3), though it
    passes alone on both sides."""
    repo = _project(tmp_path, {"calc.py": FLAGS, "tests/test_a.py": LEAVES_DISABLED,
                               "tests/test_b.py": USES_FLAG})  # fmt: skip
    stage(repo, {"calc.py": FLAGS.replace("    ENABLED[0] = True\n", "    pass\n")})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("tests/test_b.py::test_b_adds", "newly_skipped")], proc.markdown
    assert proc.exit_code == 3, proc.markdown


# Point 5: a moved test is the same test --------------------------------------------------------

MOVED = """# The adding tests, in a file of their own now.
import calc


def test_add():
    assert add(2, 3) == 5


add = calc.add
"""
LEFT = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"


def test_a_moved_test_the_change_broke_blocks(tmp_path):
    repo = _project(tmp_path, {})
    stage(
        repo,
        {"calc.py": BROKEN_ADD, "tests/test_calc.py": LEFT, "tests/adding/test_sums.py": MOVED},
    )
    proc = review(repo, format="json")
    report = proc.json
    assert proc.exit_code == 1, proc.markdown
    assert [f["test"] for f in report["regressions"]] == ["tests/adding/test_sums.py::test_add"]


# A harmless change stays clean -----------------------------------------------------------------


def test_a_harmless_change_with_skips_on_both_sides_is_clean(tmp_path):
    skips = "import pytest\n\n\n@pytest.mark.skip(reason='always')\ndef test_never():\n    pass\n"
    repo = _project(tmp_path, {"tests/test_skip.py": skips})
    stage(repo, {"calc.py": CALC + "\n\ndef sub(a, b):\n    return a - b\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.markdown
    assert proc.json["incomplete"] == []
    # The base's word on the skipped test is kept: asked again, the review runs nothing.
    again = review(repo, format="json").json
    assert again["outcome"] == "clean" and all(run["cached"] for run in again["runs"])


DROPS_ADD = """def pytest_collection_modifyitems(items):
    items[:] = [item for item in items if item.name != "test_add"]
"""


def test_a_test_the_change_no_longer_collects_is_a_question(tmp_path):
    repo = _project(tmp_path, {})
    stage(repo, {"calc.py": CALC + "\n"})
    git(repo, "commit", "-q", "-m", "harmless")
    # A review of that commit leaves its suite run in the cache: a pointer for the next one.
    assert review(repo, base="HEAD~1", head="HEAD").exit_code == 0
    stage(repo, {"conftest.py": DROPS_ADD})
    proc = review(repo, format="json")
    report = proc.json
    assert _kinds(report) == [("tests/test_calc.py::test_add", "newly_skipped")], proc.markdown
    assert "not collected on the change" in proc.markdown


def test_a_test_the_change_deselects_is_a_question_without_a_cached_base_run(tmp_path):
    """No review has run the base's suite: the change's conftest drops the test its code breaks.
    The change's run alone says nothing of a test it never collected, and the review said clean
    (exit 0); a change to what pytest collects now has the base's suite run to compare with."""
    repo = _project(tmp_path, {})
    stage(repo, {"conftest.py": DROPS_ADD, "calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("tests/test_calc.py::test_add", "newly_skipped")], proc.markdown
    assert proc.exit_code == 3, proc.markdown


def test_a_test_the_change_deselects_with_addopts_is_a_question(tmp_path):
    repo = _project(tmp_path, {})
    stage(repo, {"pytest.ini": PYTEST_INI + 'addopts = -k "not test_add"\n', "calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("tests/test_calc.py::test_add", "newly_skipped")], proc.markdown
    assert proc.exit_code == 3, proc.markdown


LEAVES_OUT = 'addopts = ["--ignore=tests/test_calc.py"]\n'


@pytest.mark.parametrize(
    ("where", "base", "head"),
    [
        ("pytest.toml", None, '[pytest]\npythonpath = ["."]\n' + LEAVES_OUT),
        ("pyproject.toml", '[tool.pytest]\npythonpath = ["."]\n',
         '[tool.pytest]\npythonpath = ["."]\n' + LEAVES_OUT),
    ],
    ids=["pytest.toml", "tool.pytest"],  # (.pytest.toml, read alike: test_change_side)
)  # fmt: skip
def test_tests_left_out_in_pytest_9s_toml_configuration_are_a_question(tmp_path, where, base, head):
    """helper-49: pytest 9 reads pytest.toml (or .pytest.toml) before pytest.ini, and a
    `[tool.pytest]` table of pyproject.toml: a change that left out (`--ignore`) the tests of
    what it broke there was clean, the file not one eyeful knew decides collection."""
    files = {"pyproject.toml": eyeful_config(), "calc.py": CALC, "tests/test_calc.py": CALC_TESTS,
             "tests/test_other.py": "def test_other():\n    assert True\n"}  # fmt: skip
    if base is None:
        files["pytest.ini"] = PYTEST_INI
    else:
        files[where] += base
    repo = make_repo(tmp_path / "repo", files)
    confirm(repo)
    stage(repo, {where: head if base is None else eyeful_config() + head, "calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert ("tests/test_calc.py::test_add", "newly_skipped") in _kinds(proc.json), proc.markdown
    assert proc.exit_code == 3, proc.markdown


def test_tests_left_out_in_a_configuration_the_command_names_are_a_question(tmp_path):
    """helper-51: `pytest -c ci/pytest-ci.ini`: a change that left out the tests of what it broke
    in that file was clean, the file not one pytest finds by its name."""
    command = f"{PYTEST} -c ci/pytest-ci.ini --rootdir . tests"
    files = {"pyproject.toml": eyeful_config(command), "calc.py": CALC,
             "ci/pytest-ci.ini": PYTEST_INI, "tests/test_calc.py": CALC_TESTS,
             "tests/test_other.py": "def test_other():\n    assert True\n"}  # fmt: skip
    repo = make_repo(tmp_path / "repo", files)
    confirm(repo)
    stage(repo, {"ci/pytest-ci.ini": PYTEST_INI + "addopts = --ignore=tests/test_calc.py\n",
                 "calc.py": BROKEN_ADD})  # fmt: skip
    proc = review(repo, format="json")
    assert ("tests/test_calc.py::test_add", "newly_skipped") in _kinds(proc.json), proc.markdown
    assert proc.exit_code == 3, proc.markdown


PLUGIN_DROPS = """def pytest_collection_modifyitems(items):
    items[:] = [item for item in items if item.name != "test_add"]
"""


def test_a_plugin_of_the_project_deselecting_a_test_is_a_question(tmp_path):
    """A collection hook outside any conftest: the project's own plugin (`-p calcplugin`)."""
    ini = PYTEST_INI + "addopts = -p calcplugin\n"
    repo = _project(tmp_path, {"pytest.ini": ini, "calcplugin.py": "X = 1\n"})
    stage(repo, {"calcplugin.py": PLUGIN_DROPS, "calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("tests/test_calc.py::test_add", "newly_skipped")], proc.markdown
    assert proc.exit_code == 3, proc.markdown


STAR = "from tests.shared import *  # noqa: F403\n"
SHARED = """import pytest


@pytest.fixture
def two():
    return 2


def pytest_collection_modifyitems(items):
    items[:] = [item for item in items if item.name != "test_add"]
"""


def test_a_conftest_turning_on_a_hook_it_does_not_name_is_a_question(tmp_path):
    """The new conftest star-imports a module holding a collection hook: no changed file names a
    hook, and the test its change breaks went unseen."""
    repo = _project(tmp_path, {"tests/__init__.py": "", "tests/shared.py": SHARED})
    stage(repo, {"tests/conftest.py": STAR, "calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("tests/test_calc.py::test_add", "newly_skipped")], proc.markdown
    assert proc.exit_code == 3, proc.markdown


# The conftest is unchanged: the code's flag decides which paths pytest collects.
BY_FLAG = "import calc\n\n\ndef pytest_configure(config):\n    if not calc.SLOW:\n"
NARROWING = {
    "its paths": BY_FLAG + "        config.args[:] = ['tests/unit']\n",
    "its ignore option": BY_FLAG + "        config.option.ignore = ['tests/slow']\n",
}


@pytest.mark.parametrize("how", NARROWING)
def test_paths_to_collect_that_a_conftest_rewrites_by_the_code_are_a_question(tmp_path, how):
    """helper-53: the conftest narrows `config.args` to `tests/unit` when the code says so; the
    change flips the flag and breaks `add`, tested under tests/slow/, which is then never
    collected: no deselection, no ignore, no collect_ignore. It was clean, exit 0. So was
    `config.option.ignore` set there (helper-55)."""
    add_test = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    mul_test = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(f"{PYTEST} tests"), "pytest.ini": PYTEST_INI,
        "calc.py": "SLOW = True\n" + CALC, "tests/conftest.py": NARROWING[how],
        "tests/unit/test_mul.py": mul_test, "tests/slow/test_add.py": add_test})  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": "SLOW = False\n" + BROKEN_ADD})
    proc = review(repo, format="json")
    unseen = [("tests/slow/test_add.py::test_add", "newly_skipped")]
    assert _kinds(proc.json) == unseen, proc.markdown
    assert proc.exit_code == 3, proc.markdown


def test_a_collection_hook_that_keeps_every_test_is_clean(tmp_path):
    sorts = "def pytest_collection_modifyitems(items):\n    items.sort(key=lambda i: i.name)\n"
    repo = _project(tmp_path, {})
    stage(repo, {"conftest.py": sorts, "calc.py": CALC + "\n\ndef sub(a, b):\n    return a - b\n"})
    proc = review(repo, format="json")
    assert (proc.exit_code, proc.json["outcome"]) == (0, "clean"), proc.markdown
    # The base's suite ran once to compare with; asked again, nothing runs.
    sides = sorted(run["side"] for run in proc.json["runs"] if run["name"] == "test")
    assert sides == ["base", "change"], proc.json["runs"]
    again = review(repo, format="json").json
    assert again["outcome"] == "clean" and all(run["cached"] for run in again["runs"])


PARAMS = """import pytest

from calc import add


@pytest.mark.parametrize("a, b, total", [(2, 3, 5), (0, 0, 0)])
def test_add(a, b, total):
    assert add(a, b) == total
"""


def test_a_test_skipped_under_new_parametrize_ids_is_a_question(tmp_path):
    """The change breaks add and gives the cases that catch it new ids, skipped: the new ids are
    not the base's (could not be told, exit 0), and the base's ids, gone, were seen by no run."""
    only_mul = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
    repo = _project(tmp_path, {"tests/test_params.py": PARAMS, "tests/test_calc.py": only_mul})
    hidden = PARAMS.replace(
        "[(2, 3, 5), (0, 0, 0)]",
        '[pytest.param(2, 3, 5, marks=pytest.mark.skip(reason="later")), (0, 0, 0)], '
        'ids=["two", "zero"]',
    )
    stage(repo, {"tests/test_params.py": hidden, "calc.py": BROKEN_ADD.replace("a - b", "a * b")})
    proc = review(repo, format="json")
    kinds = _kinds(proc.json)
    assert ("tests/test_params.py::test_add[2-3-5]", "newly_skipped") in kinds, proc.markdown
    assert proc.exit_code == 3, proc.markdown


def test_a_test_parametrized_anew_is_clean(tmp_path):
    """The change parametrizes an existing test (its id becomes `test_add[...]`) and edits the
    conftest (the base's suite runs to compare with): the base's `test_add` was "not collected
    on the change", a question (exit 3), though the change ran it under its new ids."""
    parametrized = (
        "import pytest\n\nfrom calc import add, mul\n\n\n"
        "@pytest.mark.parametrize('a', [2, 4])\ndef test_add(a):\n"
        "    assert add(a, 3) == a + 3\n\n\n"
        "def test_mul():\n    assert mul(2, 3) == 6\n"
    )
    fixture = "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n"
    repo = _project(tmp_path, {})
    stage(repo, {"tests/test_calc.py": parametrized, "conftest.py": fixture})
    proc = review(repo, format="json")
    assert (proc.exit_code, proc.json["outcome"]) == (0, "clean"), proc.markdown


def test_a_case_renamed_and_skipped_beside_a_new_one_is_a_question(tmp_path):
    """The code renames the case `a` to `a2` and makes it skip, and adds a case `c` that passes:
    as many ran as the base passed, and the base's `test_x[a]` was not asked about (clean)."""
    cases = "CASES = {'a': 1}\n\n\ndef supported(v):\n    return True\n"
    tests = (
        "import pytest\n\nimport cases\n\n\n"
        "@pytest.mark.parametrize('v', list(cases.CASES.values()), ids=list(cases.CASES))\n"
        "def test_x(v):\n    if not cases.supported(v):\n        pytest.skip('unsupported')\n"
        "    assert v > 0\n"
    )
    repo = _project(tmp_path, {"cases.py": cases, "tests/test_x.py": tests})
    renamed = "CASES = {'a2': 1, 'c': 2}\n\n\ndef supported(v):\n    return v != 1\n"
    stage(repo, {"cases.py": renamed})
    proc = review(repo, format="json")
    assert ("tests/test_x.py::test_x[a]", "newly_skipped") in _kinds(proc.json), proc.markdown
    assert proc.exit_code == 3, proc.markdown


def test_a_new_skipped_parametrize_case_is_clean(tmp_path):
    repo = _project(tmp_path, {"tests/test_params.py": PARAMS})
    more = PARAMS.replace(
        "[(2, 3, 5), (0, 0, 0)]",
        '[(2, 3, 5), (0, 0, 0), pytest.param(1, 1, 2, marks=pytest.mark.skip(reason="later"))]',
    )
    stage(repo, {"tests/test_params.py": more})
    proc = review(repo, format="json")
    assert (proc.exit_code, proc.json["outcome"]) == (0, "clean"), proc.markdown


def test_last_failed_in_a_reused_worktree_does_not_narrow_the_run(tmp_path):
    """`--lf` and the `.pytest_cache` an earlier review's run left in eyeful's worktree: the next
    review ran only that run's failure and missed the break (clean)."""
    known = "def test_known_bad():\n    assert False, 'known bug'\n"
    repo = _project(
        tmp_path, {"tests/test_known.py": known}, test=f"{shlex.quote(PYTHON)} -m pytest -q --lf"
    )
    stage(repo, {"calc.py": CALC + "\n# docs\n"})
    assert review(repo).exit_code == 0
    stage(repo, {"calc.py": CALC + "\n# more\n"})
    git(repo, "commit", "-q", "-m", "docs")
    stage(repo, {"calc.py": BROKEN_ADD})
    proc = review(repo, format="json")
    assert ("tests/test_calc.py::test_add", "regression") in _kinds(proc.json), proc.markdown
    assert proc.exit_code == 1, proc.markdown


SPEED = """import enum


class Mode(enum.Enum):
    FAST = 1
    SAFE = 2


def delay(mode):
    return 0 if mode is Mode.FAST else 10
"""
SPEED_TESTS = """import pytest

from speed import Mode, delay


@pytest.mark.parametrize("mode", list(Mode))
def test_delay(mode):
    assert delay(mode) == (0 if mode is Mode.FAST else 10)
"""


@pytest.mark.parametrize("test_one", [True, False])
def test_a_test_under_ids_the_code_renamed_is_not_new(tmp_path, test_one):
    """The change gives Mode a `__str__` (the ids become `fast`, `safe`) and breaks delay: the
    failing `test_delay[fast]` is not the base's id, and it was "new" (exit 0), though its file
    is the base's and the base has `test_delay` under other ids."""
    one = {} if test_one else {"test": f"env {PYTEST}"}
    repo = _project(tmp_path, {"speed.py": SPEED, "tests/test_speed.py": SPEED_TESTS}, **one)
    named = "    SAFE = 2\n\n    def __str__(self):\n        return self.name.lower()\n"
    broken = SPEED.replace("    SAFE = 2\n", named).replace("0 if", "10 if")
    stage(repo, {"speed.py": broken})
    proc = review(repo, format="json")
    kinds = dict(_kinds(proc.json))
    assert kinds.get("tests/test_speed.py::test_delay[fast]") == "undetermined", proc.markdown
    assert proc.exit_code == 3, proc.markdown


LEGACY = "LEGACY = False\n\n\ndef add(a, b):\n    return a + b\n"
LEGACY_TESTS = """import pytest

import legacy


@pytest.mark.xfail(legacy.LEGACY, reason="legacy mode adds differently")
def test_add():
    assert legacy.add(1, 2) == 3


def test_imperative():
    if legacy.LEGACY:
        pytest.xfail("legacy")
    assert legacy.add(2, 2) == 4
"""


def test_a_test_the_change_made_an_expected_failure_is_a_question(tmp_path):
    """The change turns on the condition of an `xfail` and breaks add: both tests that passed on
    the base were expected failures on the change, and the review said clean."""
    repo = _project(tmp_path, {"legacy.py": LEGACY, "tests/test_legacy.py": LEGACY_TESTS})
    stage(repo, {"legacy.py": LEGACY.replace("False", "True").replace("a + b", "a - b")})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [
        ("tests/test_legacy.py::test_add", "newly_skipped"),
        ("tests/test_legacy.py::test_imperative", "newly_skipped"),
    ], proc.markdown
    assert "expected failure" in proc.markdown
    assert proc.exit_code == 3, proc.markdown


def test_a_flaky_expected_failure_that_passed_on_the_base_is_clean(tmp_path):
    """An `xfail` for a flaky test that failed on the change's run and passed (XPASS) on the
    base's: marked on both sides, it says nothing of the change, and was a question (exit 3)."""
    count = tmp_path / "count"
    flaky = (
        f"import pytest\nfrom pathlib import Path\n\nCOUNT = Path({str(count)!r})\n\n\n"
        "@pytest.mark.xfail(reason='flaky')\ndef test_flaky():\n"
        "    seen = int(COUNT.read_text()) if COUNT.exists() else 0\n"
        "    COUNT.write_text(str(seen + 1))\n    assert seen > 0\n"
    )
    repo = _project(tmp_path, {"tests/test_flaky.py": flaky})
    stage(repo, {"calc.py": CALC + "\n# a comment\n"})
    proc = review(repo, format="json")
    assert (proc.exit_code, proc.json["outcome"]) == (0, "clean"), proc.markdown


STORE = (
    "_cache = {}\n\n\ndef lookup(key):\n    if key in _cache:\n        return _cache[key]\n"
    "    _cache[key] = key.upper()\n    return _cache[key]\n"
)
STORE_TESTS = {
    "tests/test_a.py": "import store\n\n\ndef test_a():\n    assert store.lookup('x') == 'X'\n",
    "tests/test_z.py": "import pytest\n\nimport store\n\n\n@pytest.mark.xfail(reason='slow')\n"
    "def test_z():\n    assert store.lookup('x') == 'X'\n",
}


@pytest.mark.parametrize("where", ["alone", "in the suite"])
def test_an_expected_failure_that_passes_on_the_base_every_time_is_a_question(tmp_path, where):
    """helper-53: `xfail(strict=False)` on a test that passes on the base (XPASS) and that the
    change breaks: an expected failure on the change, run alone there too. It was clean; unlike
    the flaky one above, it fails on the change every time. helper-55: where it fails only
    after the tests before it (a cache they warm), it passes alone on the change: its suite
    runs again, where it fails again."""
    if where == "alone":
        marked = CALC_TESTS.replace("def test_add", "@pytest.mark.xfail(reason='x')\ndef test_add")
        repo = _project(tmp_path, {"tests/test_calc.py": "import pytest\n" + marked})
        stage(repo, {"calc.py": BROKEN_ADD})
    else:
        repo = _project(tmp_path, {"store.py": STORE, **STORE_TESTS})
        stage(repo, {"store.py": STORE.replace("return _cache[key]\n    _", "return 'x'\n    _")})
    proc = review(repo, format="json")
    test = "tests/test_calc.py::test_add" if where == "alone" else "tests/test_z.py::test_z"
    assert _kinds(proc.json) == [(test, "newly_skipped")], proc.markdown
    assert "XPASS on the base" in proc.markdown
    assert proc.exit_code == 3, proc.markdown


def test_an_expected_failure_on_both_sides_is_clean(tmp_path):
    known = (
        "import pytest\n\n\n@pytest.mark.xfail(reason='known')\ndef test_known():\n    assert 0\n"
    )
    repo = _project(tmp_path, {"tests/test_known.py": known})
    stage(repo, {"calc.py": CALC + "\n\ndef sub(a, b):\n    return a - b\n"})
    proc = review(repo, format="json")
    assert (proc.exit_code, proc.json["outcome"]) == (0, "clean"), proc.markdown


BACKENDS = """def available_backends():
    return ["fast", "slow"]


def run(backend, x):
    return x * 2
"""
BACKENDS_CONFTEST = """import tools


def pytest_configure(config):
    config.addinivalue_line("markers", "backend(name): needs that backend")


def pytest_collection_modifyitems(config, items):
    have = set(tools.available_backends())
    drop = [i for i in items if (m := i.get_closest_marker("backend")) and m.args[0] not in have]
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = [i for i in items if i not in drop]
"""
BACKENDS_TESTS = """import pytest

import tools


@pytest.mark.backend("fast")
def test_fast():
    assert tools.run("fast", 2) == 4
"""
SHAPES = """class ShapeChecks:
    def test_area_positive(self):
        assert self.make().area() > 0


class Square:
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side
"""
SHAPES_TESTS = """from shapes import ShapeChecks, Square


class TestSquare(ShapeChecks):
    def make(self):
        return Square(2)
"""


@pytest.mark.parametrize("how", ["deselected", "uncollected"])
def test_a_test_the_changes_code_takes_out_of_the_run_is_a_question(tmp_path, how):
    """Only code changed, and the tests it breaks left the run: an unchanged conftest hook
    deselects a backend the code no longer lists; a mixin the test class inherits gained an
    `__init__` (pytest will not collect the class). No base suite ran to compare with: clean."""
    if how == "deselected":
        files = {"tools/__init__.py": BACKENDS, "tests/conftest.py": BACKENDS_CONFTEST,
                 "tests/test_run.py": BACKENDS_TESTS}  # fmt: skip
        change = {"tools/__init__.py": BACKENDS.replace('"fast", ', "").replace("* 2", "* 3")}
        test = "tests/test_run.py::test_fast"
    else:
        files = {"shapes.py": SHAPES, "tests/test_shapes.py": SHAPES_TESTS}
        init = "class ShapeChecks:\n    def __init__(self, tolerance=0):\n        pass\n\n"
        broken = SHAPES.replace("class ShapeChecks:\n", init).replace("return self", "return -self")
        change = {"shapes.py": broken}
        test = "tests/test_shapes.py::TestSquare::test_area_positive"
    repo = _project(tmp_path, files)
    stage(repo, change)
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [(test, "newly_skipped")], proc.markdown
    assert proc.exit_code == 3, proc.markdown


DATA_TESTS = """import glob
import os

import pytest

from calc import add

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(HERE, "data", "*.txt"))))
def test_file(path):
    a, b, total = map(int, open(path).read().split())
    assert add(a, b) == total
"""


@pytest.mark.parametrize("broken", [False, True])
def test_ids_holding_the_checkouts_path_are_confirmed_in_any_worktree(broken):
    """Parameters from absolute paths: the ids hold the worktree's path, and a pair run in
    another worktree found no such test (undetermined, exit 3) for a failure known on the base
    and for a regression alike. Ids are read with your tree's path in its place. (Not under
    pytest's own temporary directory: pytest gives a parameter holding that path no id.)"""
    files = {"tests/test_data.py": DATA_TESTS, "tests/data/a.txt": "1 2 3\n",
             "tests/data/b.txt": "2 2 5\n" if not broken else "2 2 4\n"}  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="eyeful-ids-", dir=SYSTEM_TMP) as where:
        _review_data(Path(where), files, broken)


def test_ids_that_only_start_like_your_trees_path_are_left_as_they_are():
    """Routes that start with the repository's path (an app served from where it lives): ids
    holding them were rewritten to the worktree's path, found no test, and a regression ended
    undetermined (exit 3)."""
    with tempfile.TemporaryDirectory(prefix="eyeful-ids-", dir=SYSTEM_TMP) as where:
        root = Path(where) / "repo"
        routes = (
            "import pytest\n\nfrom calc import add\n\n\n"
            f"@pytest.mark.parametrize('route', {[str(root / 'users'), str(root / 'items')]!r})\n"
            "def test_route(route):\n    assert add(len(route), 1) == len(route) + 1\n"
        )
        repo = _project(Path(where), {"tests/test_routes.py": routes})
        stage(repo, {"calc.py": BROKEN_ADD})
        proc = review(repo, format="json")
        test = f"tests/test_routes.py::test_route[{root}/users]"
        assert (test, "regression") in _kinds(proc.json), proc.markdown
        assert proc.exit_code == 1, proc.markdown


def _review_data(tmp_path: Path, files: dict[str, str], broken: bool) -> None:
    repo = _project(tmp_path, files, extra="reruns = 3")
    stage(repo, {"calc.py": BROKEN_ADD.replace("a - b", "a + b + (a == 2)") if broken
                 else CALC + "\n# a comment\n"})  # fmt: skip
    proc = review(repo, format="json", jobs=2)
    test = f"tests/test_data.py::test_file[{repo}/tests/data/b.txt]"
    kind = "regression" if broken else "pre_existing"
    assert (test, kind) in _kinds(proc.json), proc.markdown
    assert proc.exit_code == (1 if broken else 0), proc.markdown


PLUGIN_FIXTURE = (
    "import pytest\n\n\n@pytest.fixture(params=[1, 2], ids=['one', 'two'])\n"
    "def num(request):\n    return request.param\n"
)
USES_NUM = "from calc import add\n\n\ndef test_double(num):\n    assert add(num, num) == 2 * num\n"


@pytest.mark.parametrize("two", ["passes", "fails", "skips"])
def test_a_test_whose_parameters_the_change_took_away_is_a_regression(tmp_path, two):
    """The project's plugin module renames the parametrized fixture a test uses: the test errors
    as `test_double` on the change, where the base ran `test_double[one]` and `[two]`: it was
    "new" (exit 0). A function's id on a run that gave it parameters is all of them: one that
    passed there is the function passing, whatever the others did."""
    conftest = 'pytest_plugins = ["calc_plugin"]\n'
    uses = USES_NUM
    if two == "fails":
        uses = USES_NUM.replace("== 2 * num", "== 2 * num and num != 2")
    elif two == "skips":
        uses = "import pytest\n\n" + USES_NUM.replace(
            "    assert", "    if num == 2:\n        pytest.skip('two')\n    assert"
        )
    repo = _project(tmp_path, {"calc_plugin.py": PLUGIN_FIXTURE, "tests/test_num.py": uses,
                               "tests/conftest.py": conftest})  # fmt: skip
    stage(repo, {"calc_plugin.py": PLUGIN_FIXTURE.replace("def num", "def number")})
    proc = review(repo, format="json")
    assert ("tests/test_num.py::test_double", "regression") in _kinds(proc.json), proc.markdown
    assert proc.exit_code == 1, proc.markdown


ADDER = "import pytest\n\nfrom calc import add\n\n\n@pytest.fixture\ndef adder():\n    return add\n"


def test_a_change_that_breaks_what_a_conftest_imports_blocks(tmp_path):
    """The change renames what the conftest imports: pytest stops before any test (exit 4) on
    the change, and the review said only that the tests could not run (exit 3). On the base's
    code the conftest loads and the suite passes: the change broke the suite."""
    repo = _project(tmp_path, {"tests/conftest.py": ADDER}, extra="reruns = 2")
    stage(repo, {"calc.py": CALC.replace("def add", "def plus")})
    proc = review(repo, format="json")
    assert [(f["test"], f["kind"]) for f in proc.json["regressions"]] == [
        ("the test suite", "regression")
    ], proc.markdown
    assert "cannot import name 'add'" in proc.markdown
    assert proc.exit_code == 1, proc.markdown


def test_a_conftest_that_fails_to_load_on_both_sides_cannot_verify(tmp_path):
    broken = ADDER.replace("from calc import add", "from calc import missing as add")
    repo = _project(tmp_path, {"tests/conftest.py": broken})
    stage(repo, {"calc.py": CALC + "\n# a comment\n"})
    proc = review(repo, format="json")
    assert proc.json["regressions"] == [] and proc.exit_code == 3, proc.markdown


def test_a_test_failing_on_both_sides_by_another_cause_is_a_question(tmp_path):
    repo = _project(tmp_path, {"calc.py": BROKEN_ADD})
    stage(repo, {"calc.py": BROKEN_ADD.replace("return a - b", "return a + None")})
    proc = review(repo, format="json")
    report = proc.json
    assert _kinds(report) == [("tests/test_calc.py::test_add", "fails_otherwise")], proc.markdown
    assert report["questions"] == 1
    assert (report["outcome"], proc.exit_code) == ("unverified", 3)


UT_CALC = """import unittest

from calc import add


class AddTests(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
"""
UT_OTHER = (
    "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        pass\n"
)


def test_a_unittest_module_in_a_package_the_change_cannot_import_blocks(tmp_path):
    """`tests.test_calc (unittest.loader._FailedTest.tests.test_calc) ... ERROR`: the module's
    dotted name was not read, the run "recorded no failing test" and the review exited 3."""
    unittest = f"{shlex.quote(PYTHON)} -m unittest"
    repo = _project(tmp_path, {"tests/__init__.py": "", "tests/test_calc.py": UT_CALC,
                               "tests/test_other.py": UT_OTHER}, test=unittest)  # fmt: skip
    stage(repo, {"calc.py": CALC.replace("def add", "def plus")})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("tests.test_calc", "regression")], proc.markdown
    assert "cannot import name 'add'" in proc.markdown
    assert proc.exit_code == 1, proc.markdown


UT_DOCTESTS = """import doctest
import unittest

import calc


def load_tests(loader, tests, ignore):
    tests.addTests(doctest.DocTestSuite(calc))
    return tests


class AddTests(unittest.TestCase):
    def test_zero(self):
        self.assertEqual(calc.add(0, 0), 0)
"""


def test_a_unittest_doctest_that_cannot_run_alone_is_no_evidence(tmp_path):
    """unittest names a doctest `calc.add`, a function: `python -m unittest calc.add` dies in
    the loader before it runs a test, on both sides. Read as the test failing on both, the
    doctest the change broke was pre-existing and the review said clean."""
    unittest = f"{shlex.quote(PYTHON)} -m unittest"
    documented = 'def add(a, b):\n    """\n    >>> add(2, 3)\n    5\n    """\n    return a + b\n'
    repo = _project(tmp_path, {"calc.py": documented, "tests/__init__.py": "",
                               "tests/test_calc.py": UT_DOCTESTS}, test=unittest)  # fmt: skip
    stage(repo, {"calc.py": documented.replace("return a + b", "return a * b + 1 - 1")})
    proc = review(repo, format="json")
    # It cannot run alone on either side: the suites on both sides judge it, a regression.
    assert _kinds(proc.json) == [("calc.add", "regression")], proc.markdown
    assert proc.exit_code == 1, proc.markdown
    # In its own words (more-itertools): the example, what it expected and got; not doctest's
    # report cut at a line of dashes taken for an exception, nor eyeful's worktree paths. Its
    # rerun is the suite's command: `python -m unittest calc.add` cannot run it.
    [regression] = proc.json["regressions"]
    assert regression["message"].startswith("AssertionError: Failed example: add(2, 3)"), regression
    assert "Expected: 5\nGot: 6" in regression["excerpt"], regression["excerpt"]
    assert "-----" not in regression["excerpt"] and "worktrees" not in regression["excerpt"]
    assert regression["rerun"] == unittest, regression["rerun"]
    # An example that now prints nothing: doctest's own words, "Got nothing".
    stage(repo, {"calc.py": documented.replace("return a + b", "a + b")})
    proc = review(repo, format="json")
    [regression] = [f for f in proc.json["regressions"] if f["test"] == "calc.add"]
    assert "Expected: 5\nGot nothing" in regression["excerpt"], regression["excerpt"]
    # helper-69: an example the change writes that shows an old bug (`add(0.1, 0.2)`), with
    # other code: unittest's doctest is judged as pytest's, a question.
    stage(repo, {"calc.py": documented.replace("    5\n", "    5\n    >>> add(0.1, 0.2)\n    0.3\n")
                 + "\n\ndef sub(a, b):\n    return a - b\n"})  # fmt: skip
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("calc.add", "unconfirmed")], proc.markdown
    assert proc.exit_code == 3, proc.markdown
    # A doctest broken on HEAD already, and a harmless change: pre-existing, by the suites.
    stage(repo, {"calc.py": documented.replace("    5\n", "    6\n")})
    git(repo, "commit", "-qm", "a known broken doctest")
    stage(repo, {"calc.py": documented.replace("    5\n", "    6\n") + "\n# a comment\n"})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("calc.add", "pre_existing")], proc.markdown
    assert proc.exit_code == 0, proc.markdown


def test_a_unittest_doctest_of_a_src_layout_still_blocks(tmp_path):
    """helper-71: `src/calc/__init__.py`, its doctests run by `DocTestSuite` under
    `PYTHONPATH=src python -m unittest`: the module's file was looked for at the root only, no
    doctest found, and the code's regression was taken for an example the change wrote."""
    documented = 'def add(a, b):\n    """\n    >>> add(2, 3)\n    5\n    """\n    return a + b\n'
    loads = (
        "import doctest\n\nimport calc\n\n\ndef load_tests(loader, tests, ignore):\n"
        "    tests.addTests(doctest.DocTestSuite(calc))\n    return tests\n"
    )
    unittest = f"PYTHONPATH=src {shlex.quote(PYTHON)} -m unittest discover -s tests -t . -v"
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(
            unittest, test_one=f"PYTHONPATH=src {shlex.quote(PYTHON)} -m unittest -v {{test}}"
        ),
        "src/calc/__init__.py": documented,
        "tests/__init__.py": "", "tests/test_docs.py": loads,
    })  # fmt: skip
    confirm(repo)
    stage(repo, {"src/calc/__init__.py": documented.replace("a + b", "a - b")})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("calc.add", "regression")], proc.markdown
    assert proc.exit_code == 1, proc.markdown
    # helper-73: a module's own docstring (`calc.ops`, its id the module's whole name)
    ops = '"""Doubling.\n\n>>> double(2)\n4\n"""\n\n\ndef double(x):\n    return x * 2\n'
    stage(repo, {"src/calc/__init__.py": documented + "# a comment\n", "src/calc/ops.py": ops,
                 "tests/test_docs.py": loads.replace("import calc", "import calc\nimport calc.ops")
                 .replace("DocTestSuite(calc))", "DocTestSuite(calc))\n"
                          "    tests.addTests(doctest.DocTestSuite(calc.ops))")})  # fmt: skip
    git(repo, "commit", "-qm", "ops")
    stage(repo, {"src/calc/ops.py": ops.replace("x * 2", "x * 3")})
    proc = review(repo, format="json")
    assert ("calc.ops", "regression") in _kinds(proc.json), proc.markdown
    assert proc.exit_code == 1, proc.markdown


UNITTEST_CALC = (
    "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n"
    "    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n"
)


@pytest.mark.parametrize(
    "command",
    ["python -W error -m unittest discover -s tests -t .", "python -m unittest discover -s tests"],
    ids=["from-the-root", "from-the-start-directory"],
)
def test_a_unittest_suite_run_without_its_names_never_calls_a_broken_test_new(tmp_path, command):
    # Not a plain `python -m unittest -v`: the base's passing tests are never named, and the
    # change's failing one (`tests.test_calc.T.test_add`, or `test_calc.T.test_add` from the
    # start directory) was judged absent there by its id: new, exit 0 on a red suite.
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(command), "calc.py": "def add(a, b):\n    return a + b\n",
         "tests/__init__.py": "", "tests/test_calc.py": UNITTEST_CALC},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": "def add(a, b):\n    return a * b\n"})
    done = review(repo, format="json")
    kinds = {f["test"]: f["kind"] for f in done.json["regressions"] + done.json["other_failures"]}
    [kind] = kinds.values()
    assert kind in ("undetermined", "unconfirmed"), kinds  # a question, never "new"
    assert done.exit_code == 3, done


def test_the_bases_suite_run_to_compare_collections_is_listed_once(tmp_path):
    """helper-52: the change edits a conftest (what decides collection: the base's suite runs to
    compare) and breaks add; that run was listed twice, live and then as the cached run the
    regression's confirmation starts from."""
    repo = _project(tmp_path, {"tests/conftest.py": "import pytest\n"})
    stage(repo, {"tests/conftest.py": "import pytest  # the fixtures\n", "calc.py": BROKEN_ADD})
    done = review(repo, format="json")
    assert _kinds(done.json) == [("tests/test_calc.py::test_add", "regression")], done.markdown
    suites = [r for r in done.json["runs"] if (r["side"], r["name"]) == ("base", "test")]
    assert len(suites) == 1, done.json["runs"]


def test_a_test_the_last_reviews_change_added_is_not_looked_for_on_the_base(tmp_path):
    """helper-54 (20 of 47 replayed commits): the last review's change added `test_new`, then a
    change of the code alone was reviewed. Its run on that tree named `test_new`, in a file the
    base has otherwise, so `test_new` ran on the base by id (not found: an error) and then the
    base's whole suite: only the change's run is needed."""
    repo = _project(tmp_path, {})
    stage(repo, {"tests/test_calc.py": CALC_TESTS + "\n\ndef test_new():\n    assert True\n"})
    assert review(repo, format="json").exit_code == 0
    git(repo, "reset", "-q", "--hard")
    stage(repo, {"calc.py": CALC.replace("a + b", "b + a")})
    done = review(repo, format="json")
    assert [(r["side"], r["name"]) for r in done.json["runs"]] == [("change", "test")], done.json
    assert done.exit_code == 0, done.markdown


def test_a_test_module_renamed_to_a_name_pytest_does_not_collect_is_a_question(tmp_path):
    # The change breaks sub and renames tests/test_sub.py to tests/sub_checks.py unchanged:
    # pytest no longer collects it, and the review said clean (the test, gone from its old
    # path, counted as deleted on both sides).
    sub = "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n"
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI,
         "calc.py": "def sub(a, b):\n    return a - b\n", "tests/test_sub.py": sub,
         "tests/test_other.py": "def test_other():\n    assert True\n"},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": "def sub(a, b):\n    return a + b\n"})
    git(repo, "mv", "tests/test_sub.py", "tests/sub_checks.py")
    done = review(repo, format="json")
    kinds = {f["test"]: f["kind"] for f in done.json["other_failures"]}
    assert kinds == {"tests/test_sub.py::test_sub": "newly_skipped"}, done.json
    assert done.exit_code == 3, done
    # Renamed to a name pytest collects: the test runs there, and nothing is gone.
    git(repo, "mv", "tests/sub_checks.py", "tests/test_subtraction.py")
    done = review(repo, format="json")
    kinds = {f["test"]: f["kind"] for f in done.json["regressions"] + done.json["other_failures"]}
    assert kinds == {"tests/test_subtraction.py::test_sub": "regression"}, done.json
    assert done.exit_code == 1, done

    stage(repo, {"calc.py": "def sub(a, b):\n    return a - b\n"})
    done = review(repo, format="json")
    assert done.exit_code == 0 and not done.json["other_failures"], done.json


def test_a_unittest_run_ended_by_os_exit_says_so_not_pytest_exit(tmp_path):
    # Exit status 0 and no pytest.exit in sight: the reason named pytest.exit for unittest's run.
    calc = "import os\n\n\ndef add(a, b):\n    return a + b\n"
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config("python -m unittest discover -s tests -t ."),
         "calc.py": calc, "tests/__init__.py": "", "tests/test_calc.py": UNITTEST_CALC},
    )  # fmt: skip
    confirm(repo)
    quits = calc.replace(
        "    return a + b", "    if a == b == 0:\n        os._exit(0)\n    return a + b"
    )
    stage(repo, {"calc.py": quits})
    done = review(repo, format="json")
    [stopped] = done.json["incomplete"]
    assert stopped["ids"] == ["tests.test_calc.T.test_zero"], stopped
    assert "pytest.exit" not in stopped["why"], stopped
    assert stopped["why"].startswith("the run ended early with exit status 0"), stopped
    assert done.exit_code == 3


def test_a_unittest_test_that_prints_a_summary_of_its_own_passes(tmp_path):
    """helper-51: a test printing a nested runner's dashes and `Ran 3 tests` line ended the
    listing there, so it had started and never ended: exit 3 on every review, a harmless one
    too. unittest's own summary is the last one, with its verdict after it."""
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(f"{shlex.quote(PYTHON)} -m unittest -v"),
         "calc.py": CALC, "tests/__init__.py": "", "tests/test_0.py": ECHOES,
         "tests/test_calc.py": UNITTEST_CALC},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": "# calc\n" + CALC})
    done = review(repo, format="json")
    assert done.json["incomplete"] == [] and done.exit_code == 0, done


MAIN_CALC = "import os\nimport sys\n\n\ndef add(a, b):\n    return a + b\n\n\ndef main(argv):\n"
MAIN_TESTS = (
    "import unittest\n\nimport calc\n\n\nclass T(unittest.TestCase):\n"
    "    def test_main(self):\n        self.assertEqual(calc.main(['2', '2']), 0)\n\n"
    "    def test_zadd(self):\n        self.assertEqual(calc.add(2, 2), 4)\n"
)


ECHOES = (
    "import sys\nimport unittest\n\n\nclass E(unittest.TestCase):\n    def test_echo(self):\n"
    "        sys.stderr.write('-' * 70 + '\\nRan 5 tests in 0.001s\\n')\n"
)


@pytest.mark.parametrize("where", ["in-a-test", "at-import", "after-an-echoed-summary"])
def test_a_unittest_run_that_never_printed_its_summary_is_no_pass(tmp_path, where):
    """helper-49: the change's `main` ends the process with `os._exit(0)` (to skip a slow
    teardown) and breaks `add`. unittest never printed `Ran N tests`, `test_zadd` never ran, the
    exit status was 0: read as a pass (the test it started has no result), clean. Every unittest
    run ends with that line and its verdict; a test it started and never ended is run by id.
    helper-51: under `-q` a test that echoes a nested runner's `Ran 5 tests` line first."""
    quiet = " -q" if where == "after-an-echoed-summary" else ""
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(f"{shlex.quote(PYTHON)} -m unittest{quiet}"),
         "calc.py": MAIN_CALC + "    print(add(int(argv[0]), int(argv[1])))\n    return 0\n",
         "tests/__init__.py": "", "tests/test_a.py": MAIN_TESTS, "tests/test_0.py": ECHOES},
    )  # fmt: skip
    confirm(repo)
    exits = "    print(add(int(argv[0]), int(argv[1])))\n    sys.stdout.flush()\n    os._exit(0)\n"
    if where == "at-import":  # no test started: nothing names one
        exits += "\n\nDEFAULT = main(['0', '0'])\n"
    stage(repo, {"calc.py": (MAIN_CALC + exits).replace("a + b", "a - b")})
    done = review(repo, format="json")
    assert done.exit_code == 3, done
    if where == "in-a-test":  # (the echo's dashes and line inside the listing are a test's own)
        [stopped] = done.json["incomplete"]
        assert stopped["ids"] == ["tests.test_a.T.test_main"], stopped
    else:
        [change] = [r for r in done.json["runs"] if (r["side"], r["name"]) == ("change", "test")]
        assert change["status"] == "ERROR", change
        assert "Ran N tests" in change["reason"], change


@pytest.mark.parametrize(
    ("ini", "old", "new"),
    [("python_files = check_*.py\n", "tests/check_sub.py", "tests/sub_checks.py")],
    ids=["renamed-out-of-python_files"],
)
def test_a_test_module_moved_where_pytest_does_not_collect_it_is_a_question(
    tmp_path, ini, old, new
):
    sub = "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n"
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI + ini,
         "calc.py": "def sub(a, b):\n    return a - b\n", old: sub,
         "tests/check_other.py": "def test_other():\n    assert True\n"},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": "def sub(a, b):\n    return a + b\n"})
    (repo / new).parent.mkdir(exist_ok=True)
    git(repo, "mv", old, new)
    done = review(repo, format="json")
    kinds = {f["test"]: f["kind"] for f in done.json["regressions"] + done.json["other_failures"]}
    assert kinds == {f"{old}::test_sub": "newly_skipped"}, done.json
    assert done.exit_code == 3, done


# A conftest the change edits that makes failures pass or skip (helper-44) ----------------------

HIDING_CONFTESTS = {
    "a report rewritten": (
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
        "    report = outcome.get_result()\n    if report.failed:\n"
        "        report.outcome = 'passed'\n        report.longrepr = None\n"
    ),
    "a call swallowed": (
        "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\ndef pytest_runtest_call(item):\n"
        "    try:\n        return (yield)\n    except AssertionError:\n        return None\n"
    ),
    "a skip for every test": (
        "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _quarantine():\n"
        "    pytest.skip('quarantined')\n"
    ),
}


@pytest.mark.parametrize("how", HIDING_CONFTESTS)
def test_a_conftest_the_change_edits_to_hide_failures_is_no_evidence(tmp_path, how):
    # Both sides run the change's tests, its conftest too: the broken `add` passes (or skips)
    # alike on the base and the change, which is no evidence of what the change's code does.
    repo = _project(tmp_path, {"tests/conftest.py": "import pytest\n"})
    stage(repo, {"calc.py": BROKEN_ADD, "tests/conftest.py": HIDING_CONFTESTS[how]})
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.stdout
    assert any("tests/conftest.py" in u["text"] and u["unverified"]
               for u in proc.json["uncertainty"])  # fmt: skip


def test_a_conftest_the_change_gives_a_fixture_is_still_clean(tmp_path):
    fixture = "import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n"
    repo = _project(tmp_path, {"tests/conftest.py": "import pytest\n"})
    stage(repo, {"tests/conftest.py": fixture, "calc.py": CALC + "\n# a comment\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.stdout


PASSING_REPORTS = (
    "    outcome = yield\n    report = outcome.get_result()\n    if report.failed:\n"
    "        report.outcome = 'passed'\n        report.longrepr = None\n"
)
HIDDEN_HOOKS = {
    # A plugin outside the tests' directories, loaded by the root conftest (unchanged).
    "a plugin under qa/": ("qa/plugin.py", "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
                           "def pytest_runtest_makereport(item, call):\n" + PASSING_REPORTS),
    # A hook under another name: only pytest's registration says what it is.
    "a hook by another name": ("tests/conftest.py", "import pytest\n\n\n@pytest.hookimpl("
                               "hookwrapper=True, specname='pytest_runtest_' + 'makereport')\n"
                               "def pytest_tidy(item, call):\n" + PASSING_REPORTS),
    # An object registered by a hook, its method set under a joined name.
    "a registered object": ("tests/conftest.py", "import pytest\n\n\ndef _tidy(item, call):\n"
                            + PASSING_REPORTS + "\n\nclass Tidy:\n    pass\n\n\n"
                            "def pytest_configure(config):\n    tidy = Tidy()\n"
                            "    setattr(tidy, 'pytest_runtest_' + 'makereport', "
                            "pytest.hookimpl(hookwrapper=True)(_tidy))\n"
                            "    config.pluginmanager.register(tidy, 'tidy')\n"),
}  # fmt: skip


@pytest.mark.parametrize("how", HIDDEN_HOOKS)
def test_a_hook_the_change_edits_to_pass_failures_is_no_evidence_under_any_name(tmp_path, how):
    # The names say nothing (a plugin's directory, a hook's function, a registered object): the
    # probe names the files whose functions pytest called for the outcome hooks (helper-46).
    path, text = HIDDEN_HOOKS[how]
    repo = _project(tmp_path, {"conftest.py": "pytest_plugins = ['qa.plugin']\n",
                               "qa/__init__.py": "", "qa/plugin.py": "import pytest\n",
                               "tests/conftest.py": "import pytest\n"})  # fmt: skip
    stage(repo, {"calc.py": BROKEN_ADD, path: text})
    for _ in range(2):  # the second review is served the change's suite run from the cache
        proc = review(repo, format="json")
        assert proc.exit_code == 3, proc.stdout
        assert any(path in u["text"] and u["unverified"] for u in proc.json["uncertainty"])
    # The suite's run comes from the cache; the hidden failure's second run alone stays live.
    suites = [r for r in proc.json["runs"] if r["side"] == "change" and "::" not in r["command"]]
    assert suites and all(r["cached"] for r in suites), proc.json["runs"]
    assert not any(r["cached"] for r in proc.json["runs"] if "::" in r["command"])


BASE_CASE = "import unittest\n\n\nclass TestCase(unittest.TestCase):\n    maxDiff = None\n"
SWALLOWING_CASE = BASE_CASE + (
    "\n    def _callTestMethod(self, method):\n        try:\n            method()\n"
    "        except self.failureException:\n            pass\n"
)
CASE_TESTS = (
    "from calc import add\nfrom tests.base import TestCase\n\n\nclass TestAdd(TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)


@pytest.mark.parametrize("runner", ["unittest", "pytest"])
def test_a_test_case_base_the_change_edits_to_swallow_failures_is_no_evidence(tmp_path, runner):
    # tests/base.py's TestCase, which every test derives from, swallows assertion failures
    # after the change, under `python -m unittest` and under pytest alike (helper-46).
    command = f"{shlex.quote(PYTHON)} -m unittest" if runner == "unittest" else PYTEST
    repo = _project(tmp_path, {"tests/__init__.py": "", "tests/base.py": BASE_CASE,
                               "tests/test_calc.py": CASE_TESTS},
                    test=command)  # fmt: skip
    stage(repo, {"calc.py": BROKEN_ADD, "tests/base.py": SWALLOWING_CASE})
    proc = review(repo, format="json")
    assert proc.exit_code == 3, proc.stdout
    assert any("tests/base.py" in u["text"] and "_callTestMethod" in u["text"]
               for u in proc.json["uncertainty"]), proc.json  # fmt: skip


def test_a_module_the_change_cannot_import_is_one_block_whatever_was_reviewed_before(tmp_path):
    """helper-50 (six 48ffe3c): the change makes the code raise at import, so the test module
    fails to collect: one blocking failure. After an earlier review (its run cached, a pointer to
    the tests to look for), each test of that module was a question as well ("not collected on
    the change"): 182 of them for six, none in a fresh clone."""
    repo = _project(tmp_path, {})
    stage(repo, {"README.md": "calc\n"})
    assert review(repo, format="json").exit_code == 0
    stage(repo, {"calc.py": CALC + "\nraise TypeError('unsupported Python')\n"})
    proc = review(repo, format="json")
    assert _kinds(proc.json) == [("tests/test_calc.py", "regression")], proc.markdown
    assert proc.exit_code == 1, proc.markdown


TOLERANT = {
    "a mixin": "class Tolerant:\n    def run(self, result=None):\n"
    "        result = result or self.defaultTestResult()\n"
    "        result.addFailure = lambda test, err: result.addSuccess(test)\n"
    "        return super().run(result)\n\n\nclass T(Tolerant, unittest.TestCase):\n",
    "an alias's assignment": "from unittest import TestCase as Case\n\n\n"
    "def quiet(self, result=None):\n    return result\n\n\nclass T(Case):\n    run = quiet\n\n",
    "a monkeypatch": "unittest.TestCase.run = lambda self, result=None: result\n\n\n"
    "class T(unittest.TestCase):\n",
}


@pytest.mark.parametrize("how", list(TOLERANT))
def test_a_test_case_run_the_change_adds_by_any_route_is_no_evidence(tmp_path, how):
    """helper-51: a mixin's `run` that turns failures into passes (the old text rule saw it, the
    first version of the class rule did not), `run = quiet` in a TestCase under an alias, and
    `unittest.TestCase.run` replaced: both sides pass alike, so the runs are no evidence."""
    plain = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n"
    test = "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
    repo = _project(tmp_path, {"tests/test_calc.py": plain + test},
                    test=f"{shlex.quote(PYTHON)} -m unittest")  # fmt: skip
    stage(
        repo,
        {
            "calc.py": BROKEN_ADD,
            "tests/test_calc.py": (
                "import unittest\n\nfrom calc import add\n\n\n" + TOLERANT[how] + test
            ),
        },
    )
    proc = review(repo, format="json")
    assert any("tests/test_calc.py" in u["text"] and u["unverified"]
               for u in proc.json["uncertainty"]), proc.json  # fmt: skip
    assert proc.exit_code == 3, proc.stdout


WORKER_TESTS = (
    "# the calc tests\nimport unittest\n\nfrom calc import add\n\n\n"
    "def test_a_worker_runs_add():\n    class Worker:\n        def run(self):\n"
    "            return add(2, 2)\n\n    assert Worker().run() == 4\n\n\n"
    "class TestAdd(unittest.TestCase):\n    def test_zero(self):\n"
    "        self.assertEqual(add(0, 0), 0)\n"
)


OWN_RUNNER_TESTS = (
    "import unittest\n\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n"
    "    def _callTestMethod(self, method):\n        method()\n\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)


@pytest.mark.parametrize("owner", ["a helper class", "an unchanged test case"])
def test_a_run_method_the_change_leaves_alone_decides_nothing(tmp_path, owner):
    """helper-50 (six's test_six.py): a test module with a unittest test case and a helper
    class whose `run` is no test case's, or a test case whose `_callTestMethod` the change does
    not touch; the change edits a comment. It was exit 3 (`run decides outcomes`)."""
    tests = WORKER_TESTS if owner == "a helper class" else OWN_RUNNER_TESTS
    repo = _project(tmp_path, {"tests/test_calc.py": "# the calc tests\n" + tests})
    stage(repo, {"tests/test_calc.py": "# the calc tests, edited\n" + tests})
    proc = review(repo, format="json")
    assert proc.json["uncertainty"] == [], proc.json["uncertainty"]
    assert proc.exit_code == 0, proc.stdout


# An unchanged hook that reads what the change edits (helper-48 P2) ---------------------------

QUARANTINE_HOOK = (  # what it reads, it reads by names made at run time
    "import importlib\nimport pathlib\n\nimport pytest\n\n\n"
    "def _quarantined(item):\n    helpers = importlib.import_module('tests.' + 'helpers')\n"
    "    listed = pathlib.Path(__file__).with_name('quarantine' + '.txt')\n"
    "    return item.name in helpers.QUARANTINE or item.name in listed.read_text().split()\n\n\n"
    "@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
    "    report = outcome.get_result()\n    if report.failed and _quarantined(item):\n"
    "        report.outcome = 'passed'\n        report.longrepr = None\n"
)
HELPERS = "QUARANTINE = {'test_known'}\n\n\ndef pair():\n    return (2, 3)\n"
QUARANTINED = {  # (a file it names, `quarantine.txt`, is seen the same way)
    "a name it imports": {"tests/helpers.py": HELPERS.replace("'test_known'", "'test_add'")},
}


@pytest.mark.parametrize("how", [*QUARANTINED, "neither (a control)"])
def test_an_unchanged_hook_reading_what_the_change_edits_is_no_evidence(tmp_path, how):
    """The conftest's report hook passes failures of the tests its quarantine lists (a test
    helper's set, a text file); the change breaks `add` and lists `test_add`. Both sides run the
    change's list, so test_add passes on both: it was clean. Whatever the route (an import in
    the hook, a name built at run time, a plugin's data, helper-55), the probe sees a test
    function that raised reported passed, and the base's run of it by id passes. The control
    edits what the hook does not read (the helper's `pair`): still clean, the known failure it
    quarantines hidden alike on both sides, and the flaky test it quarantines passing when run
    alone on the change again (it failed the suite's first run only)."""
    known = "def test_known():\n    assert False\n"
    count = tmp_path / "count"
    flaky = (
        f"from pathlib import Path\n\nCOUNT = Path({str(count)!r})\n\n\ndef test_flaky():\n"
        "    seen = int(COUNT.read_text()) if COUNT.exists() else 0\n"
        "    COUNT.write_text(str(seen + 1))\n    assert seen > 0\n"
    )
    repo = _project(tmp_path, {"tests/__init__.py": "", "tests/conftest.py": QUARANTINE_HOOK,
                               "tests/helpers.py": HELPERS, "tests/quarantine.txt": "test_flaky\n",
                               "tests/test_known.py": known,
                               "tests/test_flaky.py": flaky})  # fmt: skip
    edits = QUARANTINED.get(how, {"tests/helpers.py": HELPERS.replace("(2, 3)", "(3, 2)")})
    stage(repo, {"calc.py": BROKEN_ADD if how in QUARANTINED else CALC + "# a comment\n", **edits})
    proc = review(repo, format="json")
    if how not in QUARANTINED:
        assert (proc.exit_code, proc.json["uncertainty"]) == (0, []), proc.markdown
        return
    said = "`tests/test_calc.py::test_add` failed on the change and a hook of the tests reported"
    assert any(u["text"].startswith(said) and u["unverified"]
               for u in proc.json["uncertainty"]), proc.json["uncertainty"]  # fmt: skip
    assert proc.exit_code == 3, proc.markdown


def test_a_quarantined_break_beside_a_known_order_dependent_failure_is_still_asked(tmp_path):
    """helper-59: the quarantine lists two tests that fail after `test_a_fill` on both sides (it
    fills a cache they want empty). The change breaks `double`, which `test_c_double` checks:
    it fails alone on the change and passes alone on the base; `test_b_empty` passes alone, so
    both suites ran again, and the base's suite hid both: that hid the break (clean). Each is
    judged by the base's runs of its own context."""
    store = ("_cache = {}\n\n\ndef fill():\n    _cache['x'] = 1\n\n\ndef size():\n"
             "    return len(_cache)\n\n\ndef double(x):\n    return 2 * x\n")  # fmt: skip
    order = ("import store\n\n\ndef test_a_fill():\n    store.fill()\n\n\n"
             "def test_b_empty():\n    assert store.size() == 0\n\n\n"
             "def test_c_double():\n    assert store.size() == 0\n"
             "    assert store.double(2) == 4\n")  # fmt: skip
    quarantine = HELPERS.replace("'test_known'", "'test_b_empty', 'test_c_double'")
    files = {"tests/__init__.py": "", "tests/conftest.py": QUARANTINE_HOOK, "store.py": store,
             "tests/helpers.py": quarantine, "tests/quarantine.txt": "\n",
             "tests/test_order.py": order}  # fmt: skip
    repo = _project(tmp_path, files)
    stage(repo, {"store.py": store.replace("2 * x", "3 * x")})
    proc = review(repo, format="json")
    said = "`tests/test_order.py::test_c_double` failed on the change and a hook of the tests"
    assert any(u["text"].startswith(said) and u["unverified"]
               for u in proc.json["uncertainty"]), proc.json["uncertainty"]  # fmt: skip
    assert not any("test_b_empty" in u["text"] for u in proc.json["uncertainty"])
    assert proc.exit_code == 3, proc.markdown


OTHER_QUARANTINES = {
    # A fixture's teardown checks the code; the report hook passes its failure.
    "a teardown's failure": (
        "import importlib\n\nimport pytest\n\nimport calc\n\n\n@pytest.fixture\n"
        "def checked():\n    yield\n    assert calc.add(2, 3) == 5\n\n\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n    report = (yield).get_result()\n"
        "    if report.failed and item.name in importlib.import_module('tests.helpers')"
        ".QUARANTINE:\n        report.outcome = 'passed'\n        report.longrepr = None\n",
        "tests/test_checked.py::test_checked",
    ),
}  # fmt: skip


@pytest.mark.parametrize("how", OTHER_QUARANTINES)
def test_a_quarantine_by_another_hook_is_no_evidence_either(tmp_path, how):
    """helper-57: an unchanged conftest passes the failures of the tests its list names by
    turning a failed teardown's report into a pass (only the call was watched). The change
    breaks `add` and lists the test: clean. The probe watches the setup's and teardown's
    reports as pytest made them. (A `pytest_pyfunc_call` of the project's that swallows what
    the test raised is still unseen: watching the function by wrapping it changed what
    `request.function` is, helper-59.)"""
    conftest, test = OTHER_QUARANTINES[how]
    files = {"tests/__init__.py": "", "tests/conftest.py": conftest, "tests/helpers.py": HELPERS}
    if "checked" in test:
        files["tests/test_checked.py"] = "def test_checked(checked):\n    pass\n"
    repo = _project(tmp_path, files)
    listed = HELPERS.replace("'test_known'", "'test_add', 'test_checked'")
    stage(repo, {"calc.py": BROKEN_ADD, "tests/helpers.py": listed})
    proc = review(repo, format="json")
    said = "failed on the change and a hook of the tests reported it passed"
    notes = proc.json["uncertainty"]
    assert any(f"`{test}`" in u["text"] and said in u["text"] and u["unverified"]
               for u in notes), (notes, proc.markdown)  # fmt: skip
    assert proc.exit_code == 3, proc.markdown


def test_a_quarantined_failure_the_change_makes_in_the_suite_only_is_no_flake(tmp_path):
    """helper-57: the change makes `remember` keep one more key, so the quarantined
    `test_b_lookup` fails after `test_a_remember` in the suite (hidden) and passes alone. Passing
    alone made it the quarantine's flaky test: clean. It fails again in the change's suite run
    again, and passes in the base's: a question."""
    store = ("_cache = {}\n\n\ndef remember(key):\n    _cache[key] = 1\n\n\n"
             "def lookup():\n    return len(_cache)\n")  # fmt: skip
    order = ("import store\n\n\ndef test_a_remember():\n    store.remember('x')\n\n\n"
             "def test_b_lookup():\n    assert store.lookup() <= 1\n")  # fmt: skip
    repo = _project(tmp_path, {"tests/__init__.py": "", "tests/conftest.py": QUARANTINE_HOOK,
                               "tests/helpers.py": HELPERS, "store.py": store,
                               "tests/quarantine.txt": "test_b_lookup\n",
                               "tests/test_order.py": order})  # fmt: skip
    stage(
        repo,
        {
            "store.py": store.replace(
                "    _cache[key] = 1\n", "    _cache[key] = 1\n    _cache[key + '!'] = 1\n"
            )
        },
    )
    proc = review(repo, format="json")
    said = "`tests/test_order.py::test_b_lookup` failed on the change and a hook of the tests"
    assert any(u["text"].startswith(said) and u["unverified"]
               for u in proc.json["uncertainty"]), proc.json["uncertainty"]  # fmt: skip
    assert proc.exit_code == 3, proc.markdown


SCREENSHOT_HOOK = (
    "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    outcome = yield\n"
    "    item.user_properties.append(('seen', outcome.get_result().outcome))\n"
)
WINDOWS_ONLY = (
    "import sys\n\nimport pytest\n\n"
    "windows_only = pytest.mark.skipif(sys.platform != 'win32', reason='windows')\n"
)


@pytest.mark.parametrize(
    "edit", ["a fixture beside a report hook", "a skip rewrapped", "a skip's reason reworded"]
)
def test_a_conftest_edit_that_decides_no_outcome_stays_clean(tmp_path, edit):
    # Controls for the rules above (helper-48): a fixture the change adds beside an unchanged
    # report hook (a screenshot on failure), and a skip marker only rewrapped, decide nothing;
    # nor does a skip's reason reworded where the change's run skipped no test (helper-54,
    # markupsafe dcb170b: `autouse=True` on a fixture whose params carry a skipif).
    conftest = SCREENSHOT_HOOK if edit.startswith("a fixture") else WINDOWS_ONLY
    repo = _project(tmp_path, {"tests/conftest.py": conftest})
    if edit.startswith("a fixture"):
        edited = conftest + "\n\n@pytest.fixture\ndef zeros():\n    return [0, 0]\n"
    elif edit.endswith("reworded"):
        edited = conftest.replace("reason='windows'", "reason='on windows only'")
    else:
        edited = conftest.replace("skipif(sys.platform", "skipif(\n    sys.platform").replace(
            ", reason='windows')", ",\n    reason='windows',\n)"
        )
    stage(repo, {"tests/conftest.py": edited, "calc.py": CALC + "\n# a comment\n"})
    proc = review(repo, format="json")
    assert proc.exit_code == 0, proc.stdout


SKIPS = "\n    @unittest.skip('slow')\n    def test_slow(self):\n        pass\n"


@pytest.mark.parametrize(
    "command",
    [
        "{py} -m unittest -v tests.legacy.test_calc; {py} -m pytest -q tests/unit",
        "{py} -m pytest -q tests/unit; {py} -m unittest -v tests.legacy.test_calc || true",
        "{py} -m unittest tests.legacy.test_calc; {py} -m unittest -v tests.unit.test_other",
        "{py} run_ut.py; {py} -m pytest -q tests/unit",
    ],
    ids=[
        "unittest-then-pytest",
        "pytest-then-unittest-or-true",
        "quiet-then-verbose",
        "a-script-running-unittest",
    ],
)
def test_a_failing_unittest_session_beside_another_runners_record_is_never_clean(tmp_path, command):
    """helper-75: a command of two sessions, the first a unittest run that fails, the last one
    passing (pytest's, whose record the probe kept; or a verbose unittest's, whose summary alone
    was read): the run was read from the last session's record alone, exit 0, clean. A unittest
    summary saying FAILED that the record read does not account for leaves the run unread."""
    py = shlex.quote(PYTHON)
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(command.format(py=py)), "calc.py": CALC,
         "tests/__init__.py": "", "tests/legacy/__init__.py": "",
         "tests/legacy/test_calc.py": UNITTEST_CALC + SKIPS, "tests/unit/__init__.py": "",
         "run_ut.py": "import unittest\n\nunittest.main(module='tests.legacy.test_calc')\n",
         "tests/unit/test_other.py": "import unittest\n\n\nclass U(unittest.TestCase):\n"
         "    def test_other(self):\n        self.assertTrue(True)\n"},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    done = review(repo, format="json")
    assert done.exit_code in (1, 3), done
    if done.exit_code == 3:
        change = _change_test_run(done.json)
        assert change["status"] == "ERROR" and "unittest" in change["reason"], change


NESTED = (
    "import sys\nimport unittest\n\nfrom calc import add\n\n\ndef test_add():\n"
    "    assert add(1, 2) == 3\n\n\ndef test_runner_reports_failures():\n"
    "    class Inner(unittest.TestCase):\n        def test_bad(self):\n"
    "            self.assertEqual(1, 2)\n\n"
    "    suite = unittest.defaultTestLoader.loadTestsFromTestCase(Inner)\n"
    "    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=0).run(suite)\n"
    "    assert not result.wasSuccessful()\n"
)


def test_a_summary_saying_failed_that_no_record_holds_is_never_clean(tmp_path):
    """helper-77, helper-78: a passing test prints a nested unittest runner's `FAILED` summary
    (`pytest -s`). It reads as a unittest session of the command would (`python run_ut.py;
    pytest`, which names no unittest): eyeful cannot tell them apart, so the review is a
    question that says why, never clean (and never a block)."""
    py = shlex.quote(PYTHON)
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(f"{py} -m pytest -q -s tests"), "pytest.ini": PYTEST_INI,
         "calc.py": CALC, "tests/test_calc.py": NESTED},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": CALC.replace("a + b", "b + a")})
    done = review(repo, format="json")
    assert done.exit_code == 3, done
    assert "says FAILED" in _change_test_run(done.json)["reason"], done


@pytest.mark.parametrize("beside", ["a-new-failing-pytest-test", "a-failing-test-on-both-sides"])
def test_an_unread_failing_unittest_session_is_never_clean_beside_other_failures(tmp_path, beside):
    """helper-77: the record kept names a failing test (a new one, or one failing on the base
    too), so the unittest session's FAILED went unread again: clean. Any unread FAILED is."""
    py = shlex.quote(PYTHON)
    files = {"tests/unit/test_other.py": "def test_other():\n    assert True\n"}
    if beside == "a-failing-test-on-both-sides":
        files["tests/unit/test_known.py"] = "def test_known_broken():\n    assert False\n"
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(
            f"{py} -m unittest -v tests.legacy.test_calc; {py} -m pytest -q tests/unit"),
         "calc.py": CALC, "tests/__init__.py": "", "tests/legacy/__init__.py": "",
         "tests/legacy/test_calc.py": UNITTEST_CALC, **files},
    )  # fmt: skip
    confirm(repo)
    change = {"calc.py": CALC.replace("a + b", "a - b")}
    if beside == "a-new-failing-pytest-test":
        change["tests/unit/test_new.py"] = "def test_new_feature():\n    assert False\n"
    stage(repo, change)
    done = review(repo, format="json")
    assert done.exit_code in (1, 3), done
