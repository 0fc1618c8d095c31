"""Regressions that ended in "could not verify" for want of the right id in the right place
(issue 36): Go ids handed to `-run`, commands that set PYTHONPATH themselves, ids read from text.

Each case is a real repository reviewed through the core (tests/core.py) with real `go test` and
real pytest.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eyeful import focus
from tests.core import review
from tests.gitrepo import PYTHON, confirm, eyeful_config, make_repo, stage

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")


def _kinds(report: dict) -> dict[str, str]:
    return {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}


@pytest.fixture
def go_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOCACHE", str(Path.home().parent / "go-build"))
    monkeypatch.setenv("GOTOOLCHAIN", "local")
    monkeypatch.setenv("GOFLAGS", "-mod=mod")
    monkeypatch.setenv("GOPROXY", "off")


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
