"""Regressions that ended in "could not verify" for want of the right id in the right place
(issue 36): Go ids handed to `-run`, commands that set PYTHONPATH themselves, ids read from text.

Each case is a real repository reviewed through the core (tests/core.py) with real `go test` and
real pytest.
"""

from __future__ import annotations

import shlex
import sysconfig
from pathlib import Path

import pytest

from eyeful import focus
from tests.core import review
from tests.gitrepo import PYTHON, confirm, eyeful_config, make_repo, needs_go, stage


def _kinds(report: dict) -> dict[str, str]:
    return {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}


GO_F = "package r\n\nfunc F() int {{ return {n} }}\n"
GO_F_TEST = """package r

import "testing"

func TestF(t *testing.T) {
	if F() != 1 {
		t.Fatalf("F() = %d", F())
	}
}
"""


@needs_go
def test_a_configured_go_test_one_gets_the_tests_own_name(tmp_path, go_env):
    # `{test}` in `-run` is `^TestF$`, not the package-qualified id the report shows (which
    # matches nothing: "absent" on both sides, exit 3).
    config = eyeful_config("go test -count=1 ./...", test_one="go test -count=1 -run {test} ./...")
    files = {"go.mod": "module example.com/r\n\ngo 1.19\n", "r.go": GO_F.format(n=1)}
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, **files, "r_test.go": GO_F_TEST})
    confirm(repo)
    stage(repo, {"r.go": GO_F.format(n=2)})
    done = review(repo, format="json")
    report = done.json
    assert _kinds(report) == {"example.com/r.TestF": "regression"}, done
    assert done.exit_code == 1, done


GO_G = """package r

import "strings"

func G(s string) int {{ return len(s){extra} }}
"""
GO_TABLE_TEST = """package r

import "testing"

func TestTable(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, in string; want int }{
		{"one", "a", 1},
		{"two words", "a b", 3},
		{"a#b", "a#b", 3},
		{"dup", "x", 1},
		{"dup", "y#", 2},
	}
	for _, c := range cases {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := G(c.in); got != c.want {
				t.Errorf("G(%q) = %d, want %d", c.in, got, c.want)
			}
		})
	}
}
"""


GO_OTHER = 'package other\n\nimport "testing"\n\nfunc TestTable(t *testing.T) {}\n'


@needs_go
def test_go_subtests_of_a_parallel_table_are_run_by_their_own_names(tmp_path, go_env):
    # Go's names: "two words" is two_words, the second "dup" is dup#01; each is run alone with
    # `-run '^TestTable$/^name$'` in its package, and blocks under its package-qualified id.
    config = eyeful_config("go test -count=1 ./...", test_one="go test -count=1 -run {test} ./...")
    files = {
        "go.mod": "module example.com/r\n\ngo 1.19\n",
        "r.go": GO_G.format(extra=' + 0*strings.Count(s, "#")'),
        "r_test.go": GO_TABLE_TEST,
        "other/other_test.go": GO_OTHER,
    }
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, **files})
    confirm(repo)
    broken = ' + strings.Count(s, " ") + strings.Count(s, "#")'
    stage(repo, {"r.go": GO_G.format(extra=broken)})
    done = review(repo, format="json")
    report = done.json
    assert _kinds(report) == {
        "example.com/r.TestTable": "regression",
        "example.com/r.TestTable/two_words": "regression",
        "example.com/r.TestTable/a#b": "regression",
        "example.com/r.TestTable/dup#01": "regression",
    }, done
    alone = {r["command"] for r in report["runs"] if r["name"] == "test_one"}
    assert alone == {
        "go test -json -count=1 -run '^TestTable$' example.com/r",
        "go test -json -count=1 -run '^TestTable$/^two_words$' example.com/r",
        "go test -json -count=1 -run '^TestTable$/^a#b$' example.com/r",
        "go test -json -count=1 -run '^TestTable$/^dup#01$' example.com/r",
    }, alone
    rerun = {f["test"]: f["rerun"] for f in report["regressions"]}
    assert rerun["example.com/r.TestTable/dup#01"] == (
        "go test -json -count=1 -run '^TestTable$/^dup#01$' example.com/r"
    )
    assert done.exit_code == 1, done


SRC_MOD = "def f(x):\n    return x\n"
SRC_TEST = """import pytest

from mod import f


@pytest.mark.parametrize("x", [1, 2])
def test_f(x):
    assert f(x) == x
"""


def test_a_command_that_sets_pythonpath_names_each_regression(tmp_path):
    own = f"env PYTHONPATH=src {PYTHON} -m pytest -q tests"
    files = {"src/mod.py": SRC_MOD, "tests/test_f.py": SRC_TEST}
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(own), **files})
    confirm(repo)
    stage(repo, {"src/mod.py": "def f(x):\n    return x + 1\n"})
    done = review(repo, format="json")
    report = done.json
    assert _kinds(report) == {
        "tests/test_f.py::test_f[1]": "regression",
        "tests/test_f.py::test_f[2]": "regression",
    }, done
    assert done.exit_code == 1, done


def test_a_go_test_one_that_is_not_plain_gets_the_pattern_as_written():
    how = focus.of("go test ./...", "cd . && go test -v -run {test} ./...")
    assert how is not None and not how.derived and how.shown.startswith("cd . && ")
    (command,) = how.commands(["example.com/r.TestTable/dup#01"])
    assert command.script == 'cd . && go test -v -run "$@" ./...'
    assert command.args == ("^TestTable$/^dup#01$",)
    plain = focus.of("go test ./...", "go test -count=1 -run={test} ./...")
    assert plain is not None and plain.shown == "go test -count=1 -run={test} ./..."
    (command,) = plain.commands(["example.com/r/sub.TestF"])
    assert command.args == ("^TestF$", "example.com/r/sub")


AWKWARD = ["a b", "x[1]", "a::b", "café", "日本", "q'uote", 'd"q', "a - b", "]x[", "$HOME;rm"]
AWKWARD_TEST = f"""import pytest

from mod import f


@pytest.mark.parametrize("x", {AWKWARD!r}, ids={AWKWARD!r})
def test_f(x):
    assert f(x) == x
"""
# pytest escapes non-ASCII ids unless told not to: here they reach eyeful as they are.
RAW_IDS = "[pytest]\ndisable_test_id_escaping_and_forfeit_all_rights_to_community_support = true\n"
BROKEN_MOD = 'def f(x):\n    return x + "!"\n'


def _awkward_repo(tmp_path: Path, config: str, files: dict[str, str] | None = None) -> Path:
    files = {
        "src/mod.py": SRC_MOD,
        "tests/test_f.py": AWKWARD_TEST,
        "pytest.ini": RAW_IDS,
        **(files or {}),
    }
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, **files})
    confirm(repo)
    stage(repo, {"src/mod.py": BROKEN_MOD})
    return repo


ALL_TEN = {f"tests/test_f.py::test_f[{name}]": "regression" for name in AWKWARD}


@pytest.mark.parametrize(
    ("command", "test_one", "read_from"),
    [
        # `python -m pytest`: the probe through the loader in the worktree's root
        (f"env PYTHONPATH=src {PYTHON} -m pytest -q tests", None, "probe"),
        # `-P`: no working directory on sys.path, no route: JUnit asked through PYTEST_ADDOPTS
        (f"env PYTHONPATH=src {PYTHON} -P -m pytest -q tests",
         f"env PYTHONPATH=src {PYTHON} -P -m pytest -q {{test}}", "junit"),
        # the command's own --junitxml wins over eyeful's: pytest's summary line of each test
        (f"env PYTHONPATH=src {PYTHON} -P -m pytest -q --junitxml=own.xml tests",
         f"env PYTHONPATH=src {PYTHON} -P -m pytest -q --junitxml=own.xml {{test}}", "output"),
    ],
)  # fmt: skip
def test_ten_awkward_regressions_under_a_command_that_sets_pythonpath_are_each_named(
    tmp_path, command, test_one, read_from
):
    commands = {"test_one": test_one} if test_one else {}
    repo = _awkward_repo(tmp_path, eyeful_config(command, **commands))
    done = review(repo, format="json")
    report = done.json
    assert _kinds(report) == ALL_TEN, done
    assert {r["tests_from"] for r in report["runs"]} == {read_from}, report["runs"]
    if read_from != "probe":
        why = report["runs"][0]["read_from_text"]
        assert "could not be loaded" in why and "no other route" in why, why
    assert done.exit_code == 1, done


TOX_STYLE = """#!/bin/sh
# what a tox or nox environment does: its own PYTHONPATH, then pytest
PYTHONPATH="$PWD/src"
export PYTHONPATH
if [ $# -eq 0 ]; then set -- .; fi
exec python -m pytest -q --doctest-modules "$@"
"""


def test_a_tox_style_script_that_sets_pythonpath_still_loads_the_probe(tmp_path):
    # Nothing in the command says it sets PYTHONPATH: its pytest cannot load the probe, and
    # the run is made again with the loader in the worktree's root, which the suite's
    # collection (every module of the root, for doctests) does not see.
    config = eyeful_config("sh run-tests.sh", test_one="sh run-tests.sh {test}")
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": config, "run-tests.sh": TOX_STYLE, "src/mod.py": SRC_MOD,
         "tests/test_f.py": SRC_TEST},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"src/mod.py": "def f(x):\n    return x + 1\n"})
    done = review(repo, format="json")
    report = done.json
    assert _kinds(report) == {
        "tests/test_f.py::test_f[1]": "regression",
        "tests/test_f.py::test_f[2]": "regression",
    }, done
    assert {r["tests_from"] for r in report["runs"]} == {"probe"}, report["runs"]
    assert done.exit_code == 1, done


HOST_PTH = """import site, sys

with open(site.getsitepackages()[0] + "/host.pth", "w") as file:
    file.write(sys.argv[1] + "\\n")
"""


def test_eyefuls_virtualenv_finds_the_probe_whatever_pythonpath_says(tmp_path):
    # isolate = "venv": the worktree's virtualenv holds eyeful_probe.pth. `-P` keeps the
    # working directory off sys.path, so the loader in the root cannot be what loads it.
    host = sysconfig.get_paths()["purelib"]  # pytest for the virtualenv, without a download
    setup = f"python host_pth.py {shlex.quote(host)}"
    command = "env PYTHONPATH=src python -P -m pytest -q tests"
    config = eyeful_config(
        command, extra='isolate = "venv"', setup=setup,
        test_one="env PYTHONPATH=src python -P -m pytest -q {test}",
    )  # fmt: skip
    repo = _awkward_repo(tmp_path, config, {"host_pth.py": HOST_PTH})
    done = review(repo, format="json")
    report = done.json
    assert _kinds(report) == ALL_TEN, done
    tests_from = {r["tests_from"] for r in report["runs"] if r["name"] != "setup"}
    assert tests_from == {"probe"}, report["runs"]
    assert done.exit_code == 1, done


GO_CALC = "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
GO_CALC_TEST = """package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("Add(2, 3) != 5")
	}
}
"""


@needs_go
@pytest.mark.parametrize("test_one", [None, "go test -count=1 -run {test} ./..."])
def test_a_go_package_the_change_no_longer_builds_blocks(tmp_path, go_env, test_one):
    """`go test ./...` names a package that does not build by its import path: no test name to
    give `-run`. Run alone, eyeful raised "not a go test id" (exit 4)."""
    one = {} if test_one is None else {"test_one": test_one}
    config = eyeful_config("go test -count=1 ./...", **one)
    files = {"go.mod": "module example.com/m\n\ngo 1.19\n", "calc/calc.go": GO_CALC,
             "calc/calc_test.go": GO_CALC_TEST, "other/other_test.go": GO_OTHER}  # fmt: skip
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, **files})
    confirm(repo)
    stage(repo, {"calc/calc.go": GO_CALC.replace("a + b", 'a + "b"')})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"example.com/m/calc": "regression"}, done
    assert "mismatched types" in done.markdown or "cannot convert" in done.markdown, done
    assert done.exit_code == 1, done
