"""Tests the change's run never showed, and a verdict that said clean for them: the runner's record
named no such test (go's and unittest's name only what started), or a hook, a loader or the
code took it out of the run without a word. Each case gives a question or could not verify
(exit 3) where it said clean (exit 0); each control beside it stays clean.

Real repositories reviewed through the core (tests/core.py), with real `go test`, unittest and
pytest. Each failed on the code before its fix.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest

from eyeful import claims
from eyeful.testside import command_files
from tests.core import review
from tests.gitrepo import (
    PYTEST,
    PYTEST_INI,
    PYTHON,
    confirm,
    eyeful_config,
    git,
    make_repo,
    needs_go,
    stage,
    write,
)

GO_MOD = "module example.com/m\n\ngo 1.19\n"
GO_ONE = "go test -json -count=1 -run {test} ./..."


def _kinds(report: dict) -> dict[str, str]:
    return {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}


def _go_repo(tmp_path, files: dict[str, str], test: str = "go test -count=1 ./...", **one: str):
    config = eyeful_config(test, test_one=one.get("test_one", GO_ONE))
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, "go.mod": GO_MOD, **files})
    confirm(repo)
    return repo


# go ---------------------------------------------------------------------------------------------

RATES = """package rates

import (
	"os"
	"strconv"
	"strings"
)

var rate = load()

func load() int {
	data, err := os.ReadFile("rates.txt")
	if err != nil {
		panic(err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

func Convert(x int) int { return x * rate }
"""
RATES_TEST = """package rates

import "testing"

func TestConvert(t *testing.T) {
	if Convert(2) != 6 {
		t.Fatal("convert")
	}
}
"""


DOCUMENTED_TEST = """package calc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

func TestDocumented(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "calc.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.IsExported() && fn.Doc == nil {
			t.Errorf("%s has no doc comment", fn.Name.Name)
		}
	}
}
"""
CALC_GO = "package calc\n\n// Add adds two ints.\nfunc Add(a, b int) int { return a + b }\n"


ROOT_EMBEDS = 'package m\n\nimport _ "embed"\n\n//go:embed VERSION\nvar Version string\n'


@needs_go
@pytest.mark.parametrize("root", ["plain", "embeds-a-version"])
def test_a_go_change_of_comments_alone_does_not_block(tmp_path, go_env, root):
    """helper-67: the change deletes a doc comment of Go code; a test parses the file and wants
    one. Its failure is about how the code is written: a question, as for Python (a directive
    such as `//go:build` is code, and a string's `//` is no comment). helper-73: a root
    package that embeds its VERSION takes in no file of calc/."""
    more = {"m.go": ROOT_EMBEDS, "VERSION": "1.2.0\n"} if root != "plain" else {}
    repo = _go_repo(
        tmp_path, {"calc/calc.go": CALC_GO, "calc/calc_test.go": DOCUMENTED_TEST, **more}
    )
    stage(repo, {"calc/calc.go": CALC_GO.replace("// Add adds two ints.\n", "")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"example.com/m/calc.TestDocumented": "unconfirmed"}, done
    assert done.exit_code == 3, done


LOGS = """package calc

import (
	"bytes"
	"log"
)

// Describe logs what Add gives and returns the log's text.
func Describe(a, b int) string {
	var out bytes.Buffer
	logger := log.New(&out, "", log.Lshortfile)
	logger.Printf("sum %d", a+b)
	return out.String()
}
"""
LOGS_TEST = """package calc

import "testing"

func TestDescribe(t *testing.T) {
	if got := Describe(1, 2); got != "calc.go:12: sum 3\\n" {
		t.Fatalf("got %q", got)
	}
}
"""


@needs_go
def test_a_go_file_renamed_in_its_package_alone_does_not_block(tmp_path, go_env):
    """helper-80: `git mv calc/calc.go calc/arith.go`, the same text: a test that wants the
    log's `Lshortfile` prefix (`calc.go:12:`) fails. A file's name in a Go package is no
    behaviour (unless it decides the build: `_linux`, `_test`): a question, not a block."""
    repo = _go_repo(tmp_path, {"calc/calc.go": LOGS, "calc/calc_test.go": LOGS_TEST})
    git(repo, "mv", "calc/calc.go", "calc/arith.go")
    done = review(repo, format="json")
    assert _kinds(done.json) == {"example.com/m/calc.TestDescribe": "unconfirmed"}, done
    assert done.exit_code == 3, done


REGISTRY = {
    "reg/reg.go": "package reg\n\nvar Names []string\n\n"
    "func register(n string) { Names = append(Names, n) }\n",
    "reg/alpha.go": 'package reg\n\nfunc init() { register("alpha") }\n',
    "reg/beta.go": 'package reg\n\nfunc init() { register("beta") }\n',
    "reg/reg_test.go": 'package reg\n\nimport "testing"\n\nfunc TestFirst(t *testing.T) {\n'
    '\tif Names[0] != "alpha" {\n\t\tt.Fatalf("first is %q", Names[0])\n\t}\n}\n',
}  # fmt: skip


@needs_go
def test_a_go_file_renamed_past_anothers_init_still_blocks(tmp_path, go_env):
    """helper-81: `git mv alpha.go gamma.go`, the same text: its `init` now runs after
    beta.go's (the go tool compiles a package's files in the order of their names), and the
    registry's order changes. A file with an `init` or package-level variables renamed is
    what the program does: it blocks."""
    repo = _go_repo(tmp_path, REGISTRY)
    git(repo, "mv", "reg/alpha.go", "reg/gamma.go")
    done = review(repo, format="json")
    assert _kinds(done.json) == {"example.com/m/reg.TestFirst": "regression"}, done
    assert done.exit_code == 1, done


EMBEDS = """package calc

import (
	"embed"
	"strings"
)

//go:embed calc.go
var sources embed.FS

// Documented reports whether the package's source says what Add does.
func Documented() bool {
	data, _ := sources.ReadFile("calc.go")
	return strings.Contains(string(data), "// Add adds")
}
"""
EMBEDS_TEST = """package calc

import "testing"

func TestDocumented(t *testing.T) {
	if !Documented() {
		t.Fatal("undocumented")
	}
}
"""


@needs_go
@pytest.mark.parametrize("where", ["beside", "above"])
def test_a_go_comment_a_package_embeds_is_what_it_does(tmp_path, go_env, where):
    """helper-71: another file of the package embeds calc.go (`//go:embed`): its comments are
    the program's data, and a test that reads them through the program blocks. helper-72: a
    package above it embeds its directory."""
    if where == "beside":
        files = {"calc/embeds.go": EMBEDS, "calc/calc_test.go": EMBEDS_TEST}
        test = "example.com/m/calc.TestDocumented"
    else:
        above = EMBEDS.replace("package calc", "package m").replace('"calc.go"', '"calc/calc.go"')
        files = {"embeds.go": above.replace("//go:embed calc.go", "//go:embed calc"),
                 "embeds_test.go": EMBEDS_TEST.replace("package calc", "package m")}  # fmt: skip
        test = "example.com/m.TestDocumented"
    repo = _go_repo(tmp_path, {"calc/calc.go": CALC_GO, **files})
    stage(repo, {"calc/calc.go": CALC_GO.replace("// Add adds two ints.\n", "")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {test: "regression"}, done
    assert done.exit_code == 1, done


@pytest.mark.parametrize(
    ("before", "after", "alike"),
    [
        ("x := 1 // one\n", "x := 1\n", True),
        ("x := f(a,  b)\n", "x := f(a, b)\n", True),
        ("return /* a\nb */ x\n", "return x\n", False),  # (a newline, to Go: `return;`)
        ("return /* a b */ x\n", "return x\n", True),
        ('s := "a // b"\n', 's := "a // c"\n', False),
        ('s := "a  b"\n', 's := "a b"\n', False),
        ("s := `a\n// b`\n", "s := `a\n// c`\n", False),
        ("//go:build linux\n", "//go:build darwin\n", False),
        ("//go:generate stringer\n", "", False),
        # helper-70: a raw string's blank line; cgo by a grouped import; build constraints
        ("s := `a\n\nb`\n", "s := `a\nb`\n", False),
        (
            '// #define ANSWER 42\nimport (\n\t"C"\n)\n',
            '// #define ANSWER 41\nimport (\n\t"C"\n)\n',
            False,
        ),
        ("x := 1 // +build ignore\n", "x := 1\n", False),
        ("x := 1 //+build ignore\n", "x := 1\n", False),
    ],
)
def test_go_code_without_comments(before, after, alike):
    from eyeful.gocode import without_comments

    sides = [without_comments(f"package p\n{text}".encode()) for text in (before, after)]
    assert (sides[0] is not None and sides[0] == sides[1]) is alike, sides


@needs_go
@pytest.mark.parametrize("how", ["plain", "go-by-path", "wrapped"])
def test_a_go_test_is_run_not_served_from_gos_own_cache(tmp_path, go_env, how):
    """helper-66: the package reads its data at init, before go's test log starts, so go's own
    cache of test results does not know it for an input; eyeful's worktrees keep one path, and
    a second review, of a change to that data that breaks the test, got go's cached pass.
    helper-68: not only for a command eyeful sees run `go test` (`/usr/bin/go test`, `make`)."""
    go = shutil.which("go") or "go"
    test = {"plain": "go test ./...", "go-by-path": f"{go} test ./...",
            "wrapped": "sh -c 'cd rates && go test .'"}[how]  # fmt: skip
    repo = _go_repo(
        tmp_path,
        {"rates/rates.go": RATES, "rates/rates.txt": "3\n", "rates/rates_test.go": RATES_TEST},
        test=test,
    )
    stage(repo, {"rates/doc.go": "// Package rates converts.\npackage rates\n"})
    first = review(repo, format="json")
    assert first.exit_code == 0, first.markdown
    stage(repo, {"rates/rates.txt": "4\n"})
    second = review(repo, format="json")
    assert second.exit_code != 0, second.markdown
    if how == "plain":
        assert _kinds(second.json) == {"example.com/m/rates.TestConvert": "regression"}


ENC = 'package enc\n\nimport "strings"\n\nfunc Supported() bool { return true }\n\n' + (
    "func Upper(s string) string { return strings.ToUpper(s) }\n"
)
ENC_TEST = """package enc

import "testing"

func TestUpper(t *testing.T) {
	if !Supported() {
		t.Skip("not supported here")
	}
	if Upper("ab") != "AB" {
		t.Fatal("upper")
	}
}

func TestOther(t *testing.T) {}
"""


@needs_go
@pytest.mark.parametrize("made", [True, False], ids=["the-change-skips-it", "skipped-on-both"])
def test_a_go_test_the_changes_code_skips_is_a_question(tmp_path, go_env, made):
    """Its package-qualified id (`example.com/m/enc.TestUpper`) was looked for as a function
    named `example.com`: absent on the base, so its skip was never followed up (exit 0)."""
    base = ENC if made else ENC.replace("return true", "return false")
    repo = _go_repo(tmp_path, {"enc/enc.go": base, "enc/enc_test.go": ENC_TEST})
    broken = ENC.replace("return true", "return false").replace("ToUpper", "ToLower")
    stage(repo, {"enc/enc.go": broken if made else base.replace("ToUpper", "ToLower")})
    done = review(repo, format="json")
    if made:
        assert _kinds(done.json) == {"example.com/m/enc.TestUpper": "newly_skipped"}, done
        assert done.exit_code == 3, done
    else:
        assert _kinds(done.json) == {}, done
        assert done.exit_code == 0, done


STORE = "package store\n\nfunc Available() bool { return true }\n\n" + (
    "func Put(m map[string]int, k string, v int) { m[k] = v }\n"
)
STORE_TEST = """package store

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	if !Available() {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestPutGet(t *testing.T) {
	m := map[string]int{}
	Put(m, "a", 1)
	if m["a"] != 1 {
		t.Fatal("put")
	}
}
"""


@needs_go
@pytest.mark.parametrize("says", ["", "no tests to run"])
def test_a_go_package_whose_testmain_the_code_ends_is_a_question(tmp_path, go_env, says):
    """The package ran no test on the change (its TestMain returned when the code said the
    backend is missing) and no base run was cached to compare with: clean, exit 0. What it
    prints is not go's own word that it found no test to run."""
    main = STORE_TEST.replace("os.Exit(0)", f'println("{says}")\n\t\tos.Exit(0)')
    repo = _go_repo(tmp_path, {"store/store.go": STORE, "store/store_test.go": main})
    broken = STORE.replace("return true", "return false").replace("= v", "= v + 1")
    stage(repo, {"store/store.go": broken})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"example.com/m/store.TestPutGet": "newly_skipped"}, done
    assert done.exit_code == 3, done


CALC = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nvar m map[string]int\n\n" + (
    'func Count() { m["a"]++ } // a known bug: a nil map\n'
)
CALC_TEST = """package calc

import "testing"

func TestCount(t *testing.T) { Count() }

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("Add(1, 2) != 3")
	}
}
"""


@needs_go
@pytest.mark.parametrize(
    "how", ["failfast", "failfast-as-text", "failfast-by-go-env-w", "panic", "subtest-panic"]
)
def test_a_go_run_that_never_started_a_test_after_a_failure_is_could_not_verify(
    tmp_path, go_env, how, monkeypatch
):
    """A test that fails on both sides runs first and the change breaks `TestAdd`, which never
    starts: `-failfast` stops there (in a command read as text too, or the user's `go env -w
    GOFLAGS=-failfast`: helper-53), or the first test (or its subtest) panics and the test
    binary ends with it. go names only the tests it started, so TestAdd went unseen: clean,
    exit 0."""
    if how == "failfast-by-go-env-w":
        monkeypatch.delenv("GOFLAGS")
        subprocess.run(["go", "env", "-w", "GOFLAGS=-mod=mod -failfast"], check=True)
    test = {
        "failfast": "go test -count=1 -failfast ./...",
        "failfast-as-text": "go test -failfast -count 1 ./...",
    }.get(how, "go test -count=1 ./...")
    known = {"failfast": '{ t.Fatal("a known bug") }', "panic": "{ Count() }",
             "subtest-panic": '{ t.Run("sub", func(t *testing.T) { Count() }) }'}  # fmt: skip
    calc_test = CALC_TEST.replace("{ Count() }", known.get(how, known["failfast"]))
    repo = _go_repo(tmp_path, {"calc/calc.go": CALC, "calc/calc_test.go": calc_test}, test)
    stage(repo, {"calc/calc.go": CALC.replace("a + b", "a * b")})
    done = review(repo, format="json")
    assert set(_kinds(done.json).values()) == {"pre_existing"}, done
    [incomplete] = done.json["incomplete"]
    said = "panicked" if "panic" in how else "-failfast"
    assert said in incomplete["why"], incomplete
    assert done.exit_code == 3, done


QUIRKS_TEST = """package calc

import (
	"fmt"
	"testing"
)

func TestCount(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Printf("panic: %v\\n", r)
			t.Fatal("a known bug")
		}
	}()
	Count()
}

func TestProgress(t *testing.T) { fmt.Print("progress: 50%") }

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("Add(1, 2) != 3")
	}
}
"""


@needs_go
def test_go_output_that_only_looks_like_an_end_is_no_end(tmp_path, go_env):
    """The control: a failing test that recovers a panic and prints `panic: ...` itself, and a
    passing test whose output lacks a newline (go 1.19's test2json then misses its `--- PASS`),
    did not end the test binary: a harmless change is clean."""
    repo = _go_repo(tmp_path, {"calc/calc.go": CALC, "calc/calc_test.go": QUIRKS_TEST})
    stage(repo, {"calc/calc.go": CALC + "\n// Sub is next.\n"})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"example.com/m/calc.TestCount": "pre_existing"}, done
    assert done.json["incomplete"] == [], done
    assert done.exit_code == 0, done


# TestUpper as TestAFeature, beside a test skipped on both sides.
TWO_SKIPS = ENC_TEST.replace("TestUpper", "TestAFeature").replace(
    "func TestOther(t *testing.T) {}", 'func TestZLegacy(t *testing.T) { t.Skip("legacy path") }'
)


@needs_go
def test_every_go_test_skipped_on_the_change_is_asked_of_the_base(tmp_path, go_env):
    """Go runs one id per command: the base's word on each skipped test was read from the last
    command's run only, where every other one is absent: TestAFeature's pass went unseen."""
    repo = _go_repo(tmp_path, {"enc/enc.go": ENC, "enc/enc_test.go": TWO_SKIPS})
    broken = ENC.replace("return true", "return false").replace("ToUpper", "ToLower")
    stage(repo, {"enc/enc.go": broken})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"example.com/m/enc.TestAFeature": "newly_skipped"}, done
    assert done.exit_code == 3, done


@needs_go
def test_go_tests_skipped_on_the_change_are_asked_of_the_base_one_command_a_package(
    tmp_path, go_env
):
    """Three tests in two packages the change's code makes skip: each is a question, from one
    `go test -run '^(A|B)$'` per package on the base (it was one command per test: forty skipped
    tests, forty `go test` runs)."""
    skips = TWO_SKIPS.replace("TestZLegacy(t *testing.T) { t.Skip(\"legacy path\") }", (
        "TestBFeature(t *testing.T) {\n\tif !Supported() {\n\t\tt.Skip(\"no\")\n\t}\n}"
    ))  # fmt: skip
    files = {"enc/enc.go": ENC, "enc/enc_test.go": skips,
             "dec/dec.go": ENC.replace("package enc", "package dec"),
             "dec/dec_test.go": ENC_TEST.replace("package enc", "package dec")}  # fmt: skip
    repo = _go_repo(tmp_path, files)
    off = ENC.replace("return true", "return false")
    stage(repo, {"enc/enc.go": off, "dec/dec.go": off.replace("package enc", "package dec")})
    done = review(repo, format="json")
    asked = {"example.com/m/enc.TestAFeature", "example.com/m/enc.TestBFeature",
             "example.com/m/dec.TestUpper"}  # fmt: skip
    assert _kinds(done.json) == dict.fromkeys(asked, "newly_skipped"), done
    ones = [r for r in done.json["runs"] if (r["side"], r["name"]) == ("base", "test_one")]
    assert len(ones) == 2, [r["command"] for r in ones]
    assert done.exit_code == 3, done


@needs_go
def test_a_build_constraint_the_change_puts_on_a_test_file_is_a_question(tmp_path, go_env):
    """`//go:build integration` added to the test file hides TestUpper (and the change breaks
    Upper): the package has no test files now. A change to what decides which tests exist."""
    repo = _go_repo(tmp_path, {"enc/enc.go": ENC, "enc/enc_test.go": ENC_TEST})
    stage(repo, {"enc/enc.go": ENC.replace("ToUpper", "ToLower"),
                 "enc/enc_test.go": "//go:build integration\n\n" + ENC_TEST})  # fmt: skip
    done = review(repo, format="json")
    hidden = {f"example.com/m/enc.{name}": "newly_skipped" for name in ("TestUpper", "TestOther")}
    assert _kinds(done.json) == hidden, done
    assert done.exit_code == 3, done


MAIN_TEST = 'package enc\n\nimport (\n\t"os"\n\t"testing"\n)\n\n' + (
    "func TestMain(m *testing.M) {\n\tos.Exit(m.Run())\n}\n"
)
NARROWING_MAIN = 'package enc\n\nimport (\n\t"flag"\n\t"os"\n\t"testing"\n)\n\n' + (
    'func TestMain(m *testing.M) {\n\tflag.Parse()\n\tflag.Set("test.run", "^(TestOther)$")\n'
    "\tos.Exit(m.Run())\n}\n"
)


@needs_go
def test_a_testmain_the_change_edits_to_run_fewer_tests_is_a_question(tmp_path, go_env):
    """The change breaks Upper and edits TestMain to run TestOther alone (go 1.19 has no
    -test.skip): TestUpper is gone without a word, while its package still ran a test
    (helper-46)."""
    repo = _go_repo(tmp_path, {"enc/enc.go": ENC, "enc/enc_test.go": ENC_TEST,
                               "enc/main_test.go": MAIN_TEST})  # fmt: skip
    stage(repo, {"enc/enc.go": ENC.replace("ToUpper", "ToLower"),
                 "enc/main_test.go": NARROWING_MAIN})  # fmt: skip
    done = review(repo, format="json")
    assert done.exit_code == 3, done
    assert "example.com/m/enc.TestUpper" in _kinds(done.json), done


@needs_go
def test_a_go_module_the_change_nests_in_a_package_is_a_question(tmp_path, go_env):
    """helper-49: the change adds `enc/go.mod` and breaks Upper: `./...` no longer enters the
    nested module, its package and tests are gone without a word, and the review was clean."""
    repo = _go_repo(tmp_path, {"enc/enc.go": ENC, "enc/enc_test.go": ENC_TEST,
                               "other/other_test.go": OTHER_GO})  # fmt: skip
    stage(repo, {"enc/enc.go": ENC.replace("ToUpper", "ToLower"),
                 "enc/go.mod": "module example.com/enc\n\ngo 1.19\n"})  # fmt: skip
    done = review(repo, format="json")
    assert "example.com/m/enc.TestUpper" in _kinds(done.json), done
    assert done.exit_code == 3, done


OTHER_GO = 'package other\n\nimport "testing"\n\nfunc TestOther(t *testing.T) {}\n'


@needs_go
def test_a_go_test_named_in_text_without_its_package_is_run_by_its_name(tmp_path, go_env):
    """A command read as text (`-count 1`, a flag and its value) names `TestUpper` alone: it
    was taken for a package (`go test TestUpper -run ^`), failed alike on both sides, and the
    break was called pre-existing: exit 0."""
    repo = _go_repo(
        tmp_path,
        {"enc/enc.go": ENC, "enc/enc_test.go": ENC_TEST},
        "go test -count 1 ./...",
        test_one="go test -count=1 -run {test} ./...",
    )
    stage(repo, {"enc/enc.go": ENC.replace("ToUpper", "ToLower")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"TestUpper": "regression"}, done
    assert done.exit_code == 1, done


# unittest ---------------------------------------------------------------------------------------

UNITTEST = f"{shlex.quote(PYTHON)} -m unittest"
FAST = "ENABLED = True\n\n\ndef put(store, key, value):\n    store[key] = value\n    return store\n"
FAST_TEST = """import unittest

from kv import fast

if not fast.ENABLED:
    raise unittest.SkipTest("fast backend disabled")


class TestFast(unittest.TestCase):
    def test_put(self):
        self.assertEqual(fast.put({}, "a", 1), {"a": 1})
"""
OTHER_TEST = """import unittest


class TestOther(unittest.TestCase):
    def test_other(self):
        self.assertTrue(True)
"""
FAST_LOADED = """import unittest

from kv import fast


class TestFast(unittest.TestCase):
    def test_put(self):
        self.assertEqual(fast.put({}, "a", 1), {"a": 1})


class TestOther(unittest.TestCase):
    def test_other(self):
        self.assertTrue(True)


def load_tests(loader, standard, pattern):
    suite = unittest.TestSuite()
    suite.addTests(loader.loadTestsFromTestCase(TestOther))
    if fast.ENABLED:
        suite.addTests(loader.loadTestsFromTestCase(TestFast))
    return suite
"""


def _unittest_repo(tmp_path, files: dict[str, str], test: str = UNITTEST):
    base = {"kv/__init__.py": "", "kv/fast.py": FAST, "tests/__init__.py": "", **files}
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(test), **base})
    confirm(repo)
    stage(repo, {"kv/fast.py": FAST.replace("True", "False").replace("= value", "= value + 1")})
    return repo


LOADS_IN_PACKAGE = """import unittest

from kv import fast


def load_tests(loader, standard, pattern):
    suite = loader.discover("tests", pattern="test_o*.py", top_level_dir=".")
    if fast.ENABLED:
        case = type("TestFast", (unittest.TestCase,), {
            "test_put": lambda self: self.assertEqual(fast.put({}, "a", 1), {"a": 1}),
        })
        suite.addTests(loader.loadTestsFromTestCase(case))
    return suite
"""


FIXTURE_SKIPS = """import unittest

from kv import fast


def setUpModule():
    if not fast.ENABLED:
        raise unittest.SkipTest("fast backend disabled")


class TestFast(unittest.TestCase):
    def test_put(self):
        self.assertEqual(fast.put({}, "a", 1), {"a": 1})
"""
CLASS_FIXTURE_SKIPS = """import unittest

from kv import fast


class TestFast(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not fast.ENABLED:
            raise unittest.SkipTest("fast backend disabled")

    def test_put(self):
        self.assertEqual(fast.put({}, "a", 1), {"a": 1})
"""


@pytest.mark.parametrize(
    "how",
    ["module-skip", "load-tests", "in-package", "imported", "module-fixture", "class-fixture"],
)
def test_a_unittest_module_that_the_code_takes_out_is_a_question(tmp_path, how):
    """A test module raises SkipTest at import when the code turns its feature off (unittest's
    `ModuleSkipped` line was not read), or `load_tests` leaves the feature's tests out: a test
    module's own, the test package's `__init__.py`'s, or one a test module imports (no base run
    was cached to compare with): clean, exit 0. helper-66: a `setUpModule` or `setUpClass` that
    raises SkipTest (`setUpClass (tests.test_fast.TestFast) ... skipped '...'`, the class's
    tests never named) was read as no test at all: clean."""
    files = {
        "module-fixture": {"tests/test_fast.py": FIXTURE_SKIPS},
        "class-fixture": {"tests/test_fast.py": CLASS_FIXTURE_SKIPS},
        "module-skip": {"tests/test_fast.py": FAST_TEST, "tests/test_other.py": OTHER_TEST},
        "load-tests": {"tests/test_fast.py": FAST_LOADED},
        "in-package": {"tests/__init__.py": LOADS_IN_PACKAGE, "tests/test_other.py": OTHER_TEST},
        "imported": {"tests/support.py": FAST_LOADED,
                     "tests/test_fast.py": "from tests.support import load_tests  # noqa\n"},
    }[how]  # fmt: skip
    # (The first review of a base runs its suite under unittest, helper-79: the question names
    # the test it ran there, not the module or class the change skipped.)
    ids = {"in-package": "tests.TestFast.test_put", "imported": "tests.support.TestFast.test_put"}
    gone = ids.get(how, "tests.test_fast.TestFast.test_put")
    done = review(_unittest_repo(tmp_path, files), format="json")
    assert _kinds(done.json) == {gone: "newly_skipped"}, done
    assert done.exit_code == 3, done


REGISTERING = FAST + (
    "\n\nREGISTERED = []\n\n\ndef registered(obj):\n    REGISTERED.append(obj)\n    return obj\n"
)
REGISTERED_TESTS = {
    "method": "import unittest\n\nfrom kv import fast\n\n\nclass TestFast(unittest.TestCase):\n"
              "    @fast.registered\n    def test_put(self):\n"
              "        self.assertEqual(fast.put({}, 'a', 1), {'a': 1})\n",
    "class": "import unittest\n\nfrom kv import fast\n\n\n@fast.registered\n"
             "class TestFast(unittest.TestCase):\n    def test_put(self):\n"
             "        self.assertEqual(fast.put({}, 'a', 1), {'a': 1})\n",
}  # fmt: skip


@pytest.mark.parametrize("how", list(REGISTERED_TESTS))
def test_a_unittest_test_the_codes_decorator_makes_none_is_a_question(tmp_path, how):
    """helper-79: under `python -m unittest`, the change breaks `put` and the code's decorator
    on its test method (or its test class) forgets its `return`: unittest's loader leaves out
    what is None without a word. No probe runs under unittest and no base run was cached to
    compare with: clean, exit 0."""
    files = {
        "kv/__init__.py": "",
        "kv/fast.py": REGISTERING,
        "tests/__init__.py": "",
        "tests/test_fast.py": REGISTERED_TESTS[how],
        "tests/test_other.py": OTHER_TEST,
    }
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(UNITTEST), **files})
    confirm(repo)
    broken = REGISTERING.replace("= value", "= value + 1").replace("    return obj\n", "")
    stage(repo, {"kv/fast.py": broken})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests.test_fast.TestFast.test_put": "newly_skipped"}, done
    assert done.exit_code == 3, done


def test_a_unittest_test_added_since_the_last_review_then_made_none_is_a_question(tmp_path):
    """helper-81: a review, then a commit that adds a test, then a change whose decorator makes
    that test None and breaks `put`. The earlier review's run (on another tree, without the
    test) counted as enough to look for what the loader left out: clean, exit 0."""
    files = {"kv/__init__.py": "", "kv/fast.py": REGISTERING, "tests/__init__.py": "",
             "tests/test_other.py": OTHER_TEST}  # fmt: skip
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(UNITTEST), **files})
    confirm(repo)
    stage(repo, {"kv/fast.py": REGISTERING + "\n# a note\n"})
    assert review(repo, format="json").exit_code == 0
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "reset", "-q", "--hard")
    stage(repo, {"tests/test_fast.py": REGISTERED_TESTS["method"]})
    git(repo, "commit", "-q", "-m", "a test")
    broken = REGISTERING.replace("= value", "= value + 1").replace("    return obj\n", "")
    stage(repo, {"kv/fast.py": broken})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests.test_fast.TestFast.test_put": "newly_skipped"}, done
    assert done.exit_code == 3, done


ARITH = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"


@pytest.mark.parametrize("wrapper", ["script", "makefile", "cd-first", "sourced"])
def test_a_wrapper_the_change_narrows_is_a_question(tmp_path, wrapper):
    """helper-79: the test command runs a script of the repository (`sh run_tests.sh`, `make -s
    test`); the change edits it to run `tests/unit` alone, and breaks `mul`, which only
    `tests/integration` checks: one test passed, clean, exit 0. helper-81: so did a script run
    after a `cd` (`cd ci && sh run.sh`), and a file the script sources (`. ci/paths.sh`)."""
    if wrapper == "makefile" and shutil.which("make") is None:
        pytest.skip("no make on this machine")
    run = f"{PYTEST} tests"
    files = {"arith.py": ARITH,
             "tests/unit/test_add.py": "from arith import add\n\n\ndef test_add():\n"
             "    assert add(1, 2) == 3\n",
             "tests/integration/test_mul.py": "from arith import mul\n\n\ndef test_mul():\n"
             "    assert mul(2, 3) == 6\n",
             "pytest.ini": "[pytest]\npythonpath = .\n"}  # fmt: skip
    if wrapper == "script":
        where, text, command = "run_tests.sh", f"#!/bin/sh\nexec {run}\n", "sh run_tests.sh"
    elif wrapper == "cd-first":
        where, text, command = "ci/run.sh", f"cd ..\nexec {run}\n", "cd ci && sh run.sh"
    elif wrapper == "sourced":
        where, text, command = "ci/paths.sh", "PATHS=tests\n", "sh run_tests.sh"
        files["run_tests.sh"] = f". ./ci/paths.sh\nexec {PYTEST} $PATHS\n"
    else:
        where, text, command = "Makefile", f"test:\n\t{run}\n", "make -s test"
    files[where] = text
    config = eyeful_config(command, test_one=f"{PYTEST} {{test}}")
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, **files})
    confirm(repo)
    narrowed = text.replace(" tests\n", " tests/unit\n").replace("=tests\n", "=tests/unit\n")
    stage(repo, {"arith.py": ARITH.replace("a * b", "a + b"), where: narrowed})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/integration/test_mul.py::test_mul": "newly_skipped"}, done
    assert done.exit_code == 3, done


RENAMED_OUT = {
    "function": ("from arith import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
                 ("def test_mul", "def _test_mul"), "tests/test_mul.py::test_mul"),
    "class": ("from arith import mul\n\n\nclass TestMul:\n    def test_mul(self):\n"
              "        assert mul(2, 3) == 6\n", ("class TestMul", "class MulChecks"),
              "tests/test_mul.py::TestMul::test_mul"),
}  # fmt: skip


@pytest.mark.parametrize("what", list(RENAMED_OUT))
def test_a_test_renamed_where_it_is_not_collected_is_a_question(tmp_path, what):
    """helper-79: the change breaks `mul` and renames its test (or the test's class) to a name
    pytest does not collect, its body alike: the test is still there and never runs. It read
    as a test deleted: clean, exit 0."""
    text, (was, now), test = RENAMED_OUT[what]
    files = {"arith.py": ARITH, "tests/test_mul.py": text, "pytest.ini": PYTEST_INI,
             "tests/test_add.py": "from arith import add\n\n\ndef test_add():\n"
             "    assert add(1, 2) == 3\n"}  # fmt: skip
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(), **files})
    confirm(repo)
    stage(repo, {"arith.py": ARITH.replace("a * b", "a + b"),
                 "tests/test_mul.py": text.replace(was, now)})  # fmt: skip
    done = review(repo, format="json")
    assert _kinds(done.json) == {test: "newly_skipped"}, done
    assert done.exit_code == 3, done


def test_a_unittest_test_renamed_where_it_is_not_collected_is_a_question(tmp_path):
    """helper-79: under `python -m unittest`, the change breaks `put` and renames its test method
    to `_test_put`, its body alike: clean, exit 0."""
    test = "import unittest\n\nfrom kv import fast\n\n\nclass TestFast(unittest.TestCase):\n" + (
        "    def test_put(self):\n        self.assertEqual(fast.put({}, 'a', 1), {'a': 1})\n"
    )
    files = {"kv/__init__.py": "", "kv/fast.py": FAST, "tests/__init__.py": "",
             "tests/test_fast.py": test, "tests/test_other.py": OTHER_TEST}  # fmt: skip
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(UNITTEST), **files})
    confirm(repo)
    stage(repo, {"kv/fast.py": FAST.replace("= value", "= value + 1"),
                 "tests/test_fast.py": test.replace("def test_put", "def _test_put")})  # fmt: skip
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests.test_fast.TestFast.test_put": "newly_skipped"}, done
    assert done.exit_code == 3, done


def test_a_test_class_made_the_base_of_collected_classes_is_no_question(tmp_path):
    """helper-84: the change renames `TestMul` to `MulChecks`, a base that `TestSlowMul` and
    `TestFastMul` derive from: its tests run twice, under both. Read as a test renamed out of
    collection: a false question."""
    text = RENAMED_OUT["class"][0]
    files = {"arith.py": ARITH, "tests/test_mul.py": text, "pytest.ini": PYTEST_INI}
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(), **files})
    confirm(repo)
    shared = text.replace("class TestMul", "class MulChecks") + (
        "\n\nclass TestSlowMul(MulChecks):\n    pass\n\n\nclass TestFastMul(MulChecks):\n    pass\n"
    )
    stage(repo, {"tests/test_mul.py": shared})
    done = review(repo, format="json")
    assert _kinds(done.json) == {}, done
    assert done.exit_code == 0, done


def test_a_test_deleted_with_the_code_it_checked_is_no_question(tmp_path):
    """The converse: the change deletes `mul` and its test (not renamed, gone): nothing that
    still exists went unchecked."""
    files = {"arith.py": ARITH, "pytest.ini": PYTEST_INI,
             "tests/test_mul.py": RENAMED_OUT["function"][0]}  # fmt: skip
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(), **files})
    confirm(repo)
    stage(repo, {"arith.py": ARITH.split("\n\n\ndef mul")[0] + "\n",
                 "tests/test_mul.py": "from arith import add\n\n\ndef test_add():\n"
                 "    assert add(1, 2) == 3\n"})  # fmt: skip
    done = review(repo, format="json")
    assert _kinds(done.json) == {}, done
    assert done.exit_code == 0, done


def test_the_files_a_test_command_runs_or_reads():
    """What `command_files` takes from a command (helper-79, helper-81): a script and what it
    sources, a `cd` and `make -C`, task runners whose tasks pyproject.toml holds, `uv run`."""
    texts = {"run.sh": ". ./ci/vars.sh\npytest $PATHS\n", "Makefile": "include ci.mk\n"}
    said = {
        "sh run.sh": {"run.sh", "ci/vars.sh"},
        "cd ci && sh run.sh": {"ci/run.sh"},
        "make -C ci test": {"ci/Makefile"},
        "make test": {"Makefile", "ci.mk"},
        "poe test": {"pyproject.toml"},
        "hatch run test": {"pyproject.toml", "hatch.toml"},
        "pdm run test": {"pyproject.toml"},
        "task test": {"pyproject.toml"},
        "uv run python -m tools.runtests": {"tools/runtests.py"},
        "env A=1 ./scripts/test": {"scripts/test"},
    }
    for command, files in said.items():
        assert files <= command_files(command, texts.get), command


TEARDOWN_SKIPS = """import unittest

from kv import fast


class TestFast(unittest.TestCase):
    @classmethod
    def tearDownClass(cls):
        if not fast.ENABLED:
            raise unittest.SkipTest("nothing to clean")

    def test_put(self):
        self.assertEqual(fast.put({}, "a", 1), {"a": 1})
"""


def test_a_unittest_teardown_fixture_that_skips_skips_no_test(tmp_path):
    """helper-68: a `tearDownClass` that raises SkipTest runs after the class's tests ran (and
    named them): it skips none of them. Taken for a class skipped, a healthy change was a
    question."""
    repo = _unittest_repo(tmp_path, {"tests/test_fast.py": TEARDOWN_SKIPS})
    stage(repo, {"kv/fast.py": FAST.replace("True", "False")})  # put still works
    done = review(repo, format="json")
    assert _kinds(done.json) == {}, done
    assert done.exit_code == 0, done


CALC_TESTCASE = """import unittest

import calc


class CalcTestCase(unittest.TestCase):
    def assertAdds(self, a, b, c):
        self.assertEqual(calc.add(a, b), c)
"""
CALC_PLAIN_BASE = """import calc


class CalcTestCase:
    def assertAdds(self, a, b, c):
        assert calc.add(a, b) == c
"""


@pytest.mark.parametrize(
    ("runner", "base", "module"),
    [
        ("unittest", "TestCase", "testcase"),
        ("pytest", "TestCase", "testcase"),
        ("pytest", "IsolatedAsyncioTestCase", "testcase"),
        # helper-69: a package's `tests.py` the tests import is code where pytest does not
        # collect it
        ("pytest", "TestCase", "tests"),
    ],
)
def test_a_code_side_testcase_base_that_stops_being_one_is_a_question(
    tmp_path, runner, base, module
):
    """helper-66: a library's public TestCase base (code, not the tests' side) stops deriving
    from `unittest.TestCase`; the test classes deriving from it (`AddTests`: not a name pytest
    collects by itself) are collected by neither runner, without a word, and the broken add
    was clean."""
    test = UNITTEST if runner == "unittest" else PYTEST
    files = {
        "pyproject.toml": eyeful_config(test),
        "calc/__init__.py": "def add(a, b):\n    return a + b\n",
        f"calc/{module}.py": CALC_TESTCASE.replace("unittest.TestCase", f"unittest.{base}"),
        "tests/__init__.py": "",
        "tests/test_calc.py": f"from calc.{module} import CalcTestCase\n\n\n"
        "class AddTests(CalcTestCase):\n"
        "    def test_add(self):\n        self.assertAdds(1, 2, 3)\n",
        "tests/test_other.py": OTHER_TEST,
    }
    repo = make_repo(tmp_path / "repo", files)
    confirm(repo)
    stage(
        repo,
        {"calc/__init__.py": "def add(a, b):\n    return a - b\n",
         f"calc/{module}.py": CALC_PLAIN_BASE},
    )  # fmt: skip
    done = review(repo, format="json")
    gone = (
        "tests.test_calc.AddTests.test_add"
        if runner == "unittest"
        else "tests/test_calc.py::AddTests::test_add"
    )
    assert _kinds(done.json) == {gone: "newly_skipped"}, done
    assert done.exit_code == 3, done


def test_a_unittest_package_the_change_makes_a_namespace_package_is_a_question(tmp_path):
    """helper-49: the change deletes `tests/integration/__init__.py` and breaks put: unittest's
    discovery skips a namespace package, the tests there are gone without a word, clean."""
    plain = FAST_LOADED.split("\n\n\nclass TestOther")[0] + "\n"
    files = {"tests/integration/__init__.py": "", "tests/integration/test_fast.py": plain,
             "tests/test_other.py": OTHER_TEST}  # fmt: skip
    repo = _unittest_repo(tmp_path, files)
    git(repo, "rm", "-q", "tests/integration/__init__.py")
    done = review(repo, format="json")
    assert _kinds(done.json) == {
        "tests.integration.test_fast.TestFast.test_put": "newly_skipped"
    }, done
    assert done.exit_code == 3, done


def test_a_package_of_code_the_change_adds_brings_no_base_suite(tmp_path):
    """helper-51: any `__init__.py` added ran the base's whole suite to compare collections;
    only one beside test modules (or in a test directory) can take tests out of discovery.
    (Under pytest: a unittest command's first review of a base runs the base's suite anyway,
    helper-79.)"""
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "kv/__init__.py": "",
            "kv/fast.py": FAST,
            "tests/__init__.py": "",
            "tests/test_o.py": OTHER_TEST,
        },
    )
    confirm(repo)
    stage(repo, {"helpers/__init__.py": "", "helpers/util.py": "X = 1\n"})
    done = review(repo, format="json")
    assert done.exit_code == 0, done
    assert [r["side"] for r in done.json["runs"]] == ["change"], done.json["runs"]


TWO_UT_SKIPS = """import unittest

from kv import fast


class TestA(unittest.TestCase):
    @unittest.skipIf(not fast.ENABLED, "fast backend disabled")
    def test_put(self):
        self.assertEqual(fast.put({}, "a", 1), {"a": 1})

    @unittest.skip("legacy path")
    def test_z_legacy(self):
        pass
"""


def test_every_unittest_test_skipped_on_the_change_is_asked_of_the_base(tmp_path):
    """One command per id, as for go: only the last one's run was read."""
    done = review(_unittest_repo(tmp_path, {"tests/test_a.py": TWO_UT_SKIPS}), format="json")
    assert _kinds(done.json) == {"tests.test_a.TestA.test_put": "newly_skipped"}, done
    assert done.exit_code == 3, done


NOISY_CALC = (
    "import sys\n\n\ndef double(x):\n    sys.stderr.write('warming cache ... ok\\n')\n"
    "    return 2 * x\n\n\ndef half(x):\n    return x // 2\n"
)
NOISY_TESTS = (
    "import unittest\n\nimport calc\n\n\nclass TestCalc(unittest.TestCase):\n"
    '    def test_double(self):\n        """Doubling works."""\n'
    "        self.assertEqual(calc.double(2), 4)\n\n"
    "    def test_half(self):\n        self.assertEqual(calc.half(3), 1.5)  # a known bug\n"
)


def test_a_failure_a_passing_unittest_test_prints_is_no_failure(tmp_path):
    """The other way round: a test that passes prints "checking ... FAIL" before unittest's
    "ok". unittest prints a block for every failure of a run that ended; without one, the
    printed word is no result."""
    from eyeful.unittest_records import read_unittest

    write(tmp_path, {"calc.py": NOISY_CALC.replace("... ok", "... FAIL"),
                     "tests/__init__.py": "", "tests/test_calc.py": NOISY_TESTS})  # fmt: skip
    ran = subprocess.run([PYTHON, "-m", "unittest", "-v"], cwd=tmp_path, capture_output=True,
                         text=True, check=False)  # fmt: skip
    record = read_unittest(ran.stderr)
    assert "tests.test_calc.TestCalc.test_double" not in record.tests, ran.stderr
    assert record.tests["tests.test_calc.TestCalc.test_half"].outcome == "failed", ran.stderr


def _calc_by_unittest(tmp_path, calc: str, tests: str):
    """A confirmed project of `calc.py` and `tests/test_calc.py`, tested by `unittest -v`."""
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(f"{UNITTEST} -v"),
                                         "calc.py": calc, "tests/__init__.py": "",
                                         "tests/test_calc.py": tests})  # fmt: skip
    confirm(repo)
    return repo


def test_a_unittest_expected_failure_the_change_makes_pass_is_a_question(tmp_path):
    """helper-57: the change fixes the bug an `@expectedFailure` test records; unittest fails the
    run for the unexpected success, and eyeful read no failing test in it ("the runner recorded
    no failing test", exit 3, naming nothing). It is the question a strict XPASS is: the change
    may have fixed a known bug, naming the test (exit 0, as pytest's)."""
    calc = "def mul(a, b):\n    return a * b + 1  # a known bug\n"
    tests = ("import unittest\n\nimport calc\n\n\nclass T(unittest.TestCase):\n"
             "    @unittest.expectedFailure\n    def test_mul(self):\n"
             "        self.assertEqual(calc.mul(2, 3), 6)\n")  # fmt: skip
    repo = _calc_by_unittest(tmp_path, calc, tests)
    stage(repo, {"calc.py": calc.replace(" + 1  # a known bug", "")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests.test_calc.T.test_mul": "xpass_strict"}, done.markdown
    assert done.exit_code == 0 and "questions only" in done.markdown, done.markdown


def test_a_class_fixture_unittest_lists_is_no_test_of_its_own(tmp_path):
    """helper-57: `-v` lists a failing `setUpClass` as "setUpClass (tests.test_calc.T) ...
    ERROR"; read as a test `T.setUpClass` that never got a result, it made every review of a
    class that already failed so on the base "did not run" (exit 3), and ran that id, which is
    no test, on both sides."""
    from eyeful.unittest_records import read_unittest

    tests = ("import unittest\n\n\nclass T(unittest.TestCase):\n    @classmethod\n"
             "    def setUpClass(cls):\n        raise RuntimeError('table broken')\n\n"
             "    def test_mul(self):\n        pass\n\n\nclass U(unittest.TestCase):\n"
             "    def test_add(self):\n        pass\n")  # fmt: skip
    write(tmp_path, {"tests/__init__.py": "", "tests/test_calc.py": tests})
    ran = subprocess.run([PYTHON, "-m", "unittest", "-v"], cwd=tmp_path, capture_output=True,
                         text=True, check=False)  # fmt: skip
    record = read_unittest(ran.stderr)
    assert record.collected == ["tests.test_calc.U.test_add"], ran.stderr
    assert record.tests["tests.test_calc.T"].outcome == "error", ran.stderr


TABLE_TESTS = (
    "import unittest\n\nimport calc\n\n\nclass T(unittest.TestCase):\n"
    "    def test_half(self):\n        self.assertEqual(calc.half(3), 1.5)  # a known bug\n\n\n"
    "for _n in (2, 3):  # a table-driven suite's methods\n"
    "    setattr(T, f'test_double{SEP}{_n}',\n"
    "            lambda self, n=_n: self.assertEqual(calc.double(n), 2 * n))\n"
)


def test_unittest_failures_a_docstring_a_printed_ok_or_an_odd_name_hid_block(tmp_path):
    """helper-53: `test_double` has a docstring, so `-v` prints its first line after the test's
    name and in its FAIL block; the code prints "warming cache ... ok" before unittest's FAIL.
    The block was skipped (the dashes were not on the next line) and the printed "ok" read as
    the result. helper-55: `test_double-3`, a method made with `setattr`, was no name the
    reader took, in the listing or in its FAIL block. A known failure explained the exit
    status: clean, exit 0."""
    odd = TABLE_TESTS.split("\n\n\n", 2)[2].replace("{SEP}", "-").replace("(T,", "(TestCalc,")
    tests = NOISY_TESTS + "\n\n" + odd
    repo = _calc_by_unittest(tmp_path, NOISY_CALC, tests)
    stage(repo, {"calc.py": NOISY_CALC.replace("2 * x", "3 * x")})
    done = review(repo, format="json")
    kinds = {f"tests.test_calc.TestCalc.{name}": "regression"
             for name in ("test_double", "test_double-2", "test_double-3")}  # fmt: skip
    kinds["tests.test_calc.TestCalc.test_half"] = "pre_existing"
    assert _kinds(done.json) == kinds, done
    assert done.exit_code == 1, done


@pytest.mark.parametrize("shape", ["a name with a space", "a banner a test prints"])
def test_unittests_own_count_of_failures_decides_what_its_output_holds(tmp_path, shape):
    """A name the reader cannot read at all ("test double 3") leaves the verdict's count of
    failures short: the record is no answer. A test of a run that passed that prints what looks
    like a failure block (70 `=`, "ERROR: port (settings.ini)") is no failure: a run whose
    verdict counts none has no block (helper-55: it was read as a test, rerun six times)."""
    from eyeful.unittest_records import read_unittest

    if shape == "a banner a test prints":
        banner = (
            "'checking settings\\n' + '=' * 70 + '\\nERROR: port (settings.ini)\\n' + '-' * 70"
            " + '\\n'"
        )
        calc = NOISY_CALC.replace("'warming cache ... ok\\n'", banner)
        tests = NOISY_TESTS.replace("1.5)", "1)")
    else:
        calc, tests = NOISY_CALC.replace("2 * x", "3 * x"), TABLE_TESTS.replace("{SEP}", " ")
    write(tmp_path, {"calc.py": calc, "tests/__init__.py": "", "tests/test_calc.py": tests})
    ran = subprocess.run([PYTHON, "-m", "unittest", "-v"], cwd=tmp_path, capture_output=True,
                         text=True, check=False)  # fmt: skip
    record = read_unittest(ran.stderr)
    if shape == "a banner a test prints":
        assert ran.returncode == 0, ran.stderr
        assert {t.outcome for t in record.tests.values()} == {"passed"}, ran.stderr
        assert record.tests.keys() == {"tests.test_calc.TestCalc.test_double",
                                       "tests.test_calc.TestCalc.test_half"}  # fmt: skip
        assert record.unread is None
    else:
        assert record.unread is not None and "counted 3 failures" in record.unread, ran.stderr


@pytest.mark.parametrize(
    ("command", "runner", "stops"),
    [
        ("python -m unittest -f", "unittest", True),
        ("python -m unittest -vf discover -s tests", "unittest", True),
        ("python -m unittest --failfast", "unittest", True),
        ("python -Wdefault -m unittest -v", "unittest", False),
        ("make -f ci.mk test", "unittest", False),
        ("docker compose -f ci.yml run app python -m unittest -v", "unittest", False),
        ("go test -failfast -timeout 5m ./...", "go", True),
        ("go test -failfast=false ./...", "go", False),
        ("go test -timeout 5m ./...", "go", False),
        ('GOFLAGS="-count=1 -failfast" go test ./...', "go", True),
        ("env GOFLAGS=-failfast go test ./...", "go", True),
    ],
)
def test_a_run_stops_at_its_first_failure_only_by_its_runners_own_flag(command, runner, stops):
    """`-f` is unittest's only after `-m unittest` (not python's `-Wdefault`, make's file)."""
    assert (claims.stops_at_first_failure(command, runner) is not None) is stops
    # GOFLAGS from the environment the command gets (or `go env -w`'s) is go's too.
    assert (claims.stops_at_first_failure(command, runner, "-failfast") is not None) is (
        stops or runner == "go"
    )


def test_a_unittest_run_stopped_by_failfast_is_could_not_verify(tmp_path):
    """`-f` stops at a test that fails on both sides, before the one the change breaks."""
    known = "import unittest\n\n\nclass TestA(unittest.TestCase):\n" + (
        "    def test_known(self):\n        self.fail('a known bug')\n"
    )
    put = FAST_TEST.replace("if not fast.ENABLED:\n    raise unittest.SkipTest", "print")
    files = {"tests/test_a.py": known, "tests/test_put.py": put}
    done = review(_unittest_repo(tmp_path, files, f"{UNITTEST} -f"), format="json")
    assert _kinds(done.json) == {"tests.test_a.TestA.test_known": "pre_existing"}, done
    [incomplete] = done.json["incomplete"]
    assert "stops at its first failure (-f)" in incomplete["why"], incomplete
    assert done.exit_code == 3, done


# pytest -----------------------------------------------------------------------------------------

TOOLS = "FAST = True\n\n\ndef double(x):\n    return x * 2\n"
TOOLS_TEST = "import tools\n\n\ndef test_double():\n    assert tools.double(2) == 4\n"
OTHER = "def test_other():\n    pass\n"
IGNORE_BY_CODE = 'import tools\n\ncollect_ignore = [] if tools.FAST else ["test_tools.py"]\n'
DROP_BY_CODE = """import tools


def pytest_collection_modifyitems(items):
    if not tools.FAST:
        items[:] = [i for i in items if "tools" not in i.nodeid]
"""


def _pytest_repo(tmp_path, files: dict[str, str], **config: str):
    every = {"tools.py": TOOLS, "tests/test_tools.py": TOOLS_TEST, "tests/test_other.py": OTHER}
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(**config),
                                         **every, **files})  # fmt: skip
    confirm(repo)
    return repo


DROPPING = "import functools\n\n\ndef logged(func):\n    @functools.wraps(func)\n" + (
    "    def wrapper(*args):\n        return func(*args)\n    return wrapper\n"
)


@pytest.mark.parametrize(
    "how",
    [
        "collect-ignore",
        "dropped",
        "a-directory",
        "made-none",
        "dunder-test",
        "constant-ignore",
        "addopts-ignore",
    ],
)
def test_a_test_module_the_code_leaves_uncollected_is_a_question(tmp_path, how):
    """An unchanged conftest leaves a test module (or a directory of them) out
    (`collect_ignore`), or takes its tests out of the items without deselecting them, as the
    code says; or the code's decorator forgets its `return`, and the test it wraps is None: no
    base run was cached, and the run said nothing was deselected: clean, exit 0.
    A module left out on both sides stays clean (the controls); one the command line leaves out
    (`--ignore` in addopts) does not even bring the base's suite."""
    files = {
        "collect-ignore": {"tests/conftest.py": IGNORE_BY_CODE},
        "dropped": {"tests/conftest.py": DROP_BY_CODE},
        "a-directory": {"tests/conftest.py": IGNORE_BY_CODE.replace('"test_tools.py"', '"more"'),
                        "tests/more/test_tools.py": TOOLS_TEST, "tests/test_tools.py": OTHER},
        "made-none": {"tools.py": TOOLS + "\n\n" + DROPPING,
                      "tests/test_tools.py": TOOLS_TEST.replace(
                          "\n\ndef test_double", "\n\n@tools.logged\ndef test_double")},
        "dunder-test": {"tests/test_tools.py": "__test__ = __import__('tools').FAST\n"
                        + TOOLS_TEST},
        "constant-ignore": {"tests/conftest.py": 'collect_ignore = ["test_tools.py"]\n'},
        "addopts-ignore": {"pytest.ini": "[pytest]\naddopts = --ignore=tests/test_tools.py\n"},
    }[how]  # fmt: skip
    repo = _pytest_repo(tmp_path, files)
    broken = TOOLS.replace("True", "False").replace("x * 2", "x * 3")
    if how == "made-none":  # the decorator forgets its `return`: the test is None
        broken += "\n\n" + DROPPING.replace("    return wrapper\n", "")
    stage(repo, {"tools.py": broken})
    done = review(repo, format="json")
    if how in ("constant-ignore", "addopts-ignore"):
        assert _kinds(done.json) == {}, done
        assert done.exit_code == 0, done
        base_suites = [r for r in done.json["runs"] if (r["side"], r["name"]) == ("base", "test")]
        assert len(base_suites) == (0 if how == "addopts-ignore" else 1), done.json["runs"]
    else:
        path = "tests/more/test_tools.py" if how == "a-directory" else "tests/test_tools.py"
        assert _kinds(done.json) == {f"{path}::test_double": "newly_skipped"}, done
        assert done.exit_code == 3, done


@pytest.mark.parametrize("how", ["code-ignores-it", "pyvenv-cfg"])
def test_a_test_directory_beside_the_collected_ones_left_out_is_a_question(tmp_path, how):
    """helper-49: the change breaks `double` while collection leaves out the directory of its
    tests, a sibling of the only directory collected (`tests/unit/`, `tests/integration/`): an
    unchanged conftest's `collect_ignore` as the code says, or a `pyvenv.cfg` the change adds
    (pytest skips what looks like a virtualenv). Nothing looked beside: clean, exit 0."""
    conftest = IGNORE_BY_CODE.replace('"test_tools.py"', '"integration"')
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "tools.py": TOOLS, "tests/conftest.py": conftest,
         "tests/unit/test_other.py": OTHER, "tests/integration/test_tools.py": TOOLS_TEST},
    )  # fmt: skip
    confirm(repo)
    broken = TOOLS.replace("x * 2", "x * 3")
    if how == "code-ignores-it":
        stage(repo, {"tools.py": broken.replace("True", "False")})
    else:
        stage(repo, {"tools.py": broken, "tests/integration/pyvenv.cfg": "home = /usr/bin\n"})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/integration/test_tools.py::test_double": "newly_skipped"}
    assert done.exit_code == 3, done


def test_a_module_of_doctests_the_code_leaves_out_is_a_question(tmp_path):
    """helper-51: under `--doctest-modules`, a conftest leaves out `calc/fast.py` (a module of the
    code, its doctests the tests) when the code turns the fast path off; the change does and
    breaks it. Left out, but no test module by its name: clean, exit 0."""
    fast = 'def add(a, b):\n    """\n    >>> add(2, 2)\n    4\n    """\n    return a + b\n'
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
         "conftest.py": 'import calc\n\ncollect_ignore = [] if calc.FAST else ["calc/fast.py"]\n',
         "calc/__init__.py": "FAST = True\n", "calc/fast.py": fast, "tests/test_other.py": OTHER},
    )  # fmt: skip
    confirm(repo)
    stage(
        repo, {"calc/__init__.py": "FAST = False\n", "calc/fast.py": fast.replace("a + b", "a - b")}
    )
    done = review(repo, format="json")
    assert _kinds(done.json) == {"calc/fast.py::calc.fast.add": "newly_skipped"}, done
    assert done.exit_code == 3, done


SUITE = "\n\nclass Suite:\n    def check(self, got, want):\n        assert got == want\n"
SUITE_TEST = (
    "import tools\n\n\nclass TestTools(tools.Suite):\n    def test_double(self):\n"
    "        self.check(tools.double(2), 4)\n"
)
DOCSTRING = '    """Twice x.\n\n    >>> double(2)\n    4\n    """\n'
DOCUMENTED = TOOLS.replace("    return x * 2", DOCSTRING + "    return x * 2")
HIDES = (
    "def logged(func):\n    def wrapper(*args):\n        return func(*args)\n    return wrapper\n"
)


MAKES_NONE = (
    "import tools\n\n\ndef pytest_pycollect_makeitem(collector, name, obj):\n"
    "    if name == 'test_double' and not tools.FAST:\n        return []\n"
)


REGISTERS = "\n\nREGISTERED = []\n\n\ndef registered(obj):\n    REGISTERED.append(obj)\n" + (
    "    return obj\n"
)
CLASSY = {
    "method-none": "import tools\n\n\nclass TestTools:\n    @tools.logged\n"
                   "    def test_double(self):\n        assert tools.double(2) == 4\n",
    "case-method-none": "import unittest\n\nimport tools\n\n\n"
                        "class TestTools(unittest.TestCase):\n    @tools.logged\n"
                        "    def test_double(self):\n"
                        "        self.assertEqual(tools.double(2), 4)\n",
    "class-none": "import tools\n\n\n@tools.registered\nclass TestTools:\n"
                  "    def test_double(self):\n        assert tools.double(2) == 4\n",
    "class-flag": "import tools\n\n\nclass TestTools:\n    __test__ = tools.FAST\n\n"
                  "    def test_double(self):\n        assert tools.double(2) == 4\n",
    # helper-81: a helper elsewhere in the module writes `__test__ = False`
    "flag-beside-a-helper": "import tools\n\n\nclass Helper:\n    __test__ = False\n\n\n"
                            "class TestTools:\n    __test__ = tools.FAST\n\n"
                            "    def test_double(self):\n        assert tools.double(2) == 4\n",
    "nested": "import tools\n\n\nclass TestOuter:\n    class TestTools:\n"
              "        @tools.logged\n        def test_double(self):\n"
              "            assert tools.double(2) == 4\n",
    "from-a-mixin": "import tools\nfrom tests.checks import Checks\n\n\n"
                    "class TestTools(Checks):\n    pass\n",
    "case-prefix": "import unittest\n\nimport tools\n\n\n"
                   "class TestTools(unittest.TestCase):\n    testMethodPrefix = 'check'\n\n"
                   "    @tools.logged\n    def test_double(self):\n"
                   "        self.assertEqual(tools.double(2), 4)\n",
    "a-tuple": "import tools\n\n\nclass TestTools:\n    @tools.logged\n"
               "    def test_double(self):\n        assert tools.double(2) == 4\n",
    "classmethod": "import tools\n\n\nclass TestTools:\n    @classmethod\n    @tools.logged\n"
                   "    def test_double(cls):\n        assert tools.double(2) == 4\n",
}  # fmt: skip
GONE = {"nested": "tests/test_tools.py::TestOuter::TestTools::test_double"}
MIXIN = "import tools\n\n\nclass Checks:\n    @tools.logged\n    def test_double(self):\n" + (
    "        assert tools.double(2) == 4\n"
)


@pytest.mark.parametrize("how", list(CLASSY))
def test_a_test_of_a_class_pytest_drops_without_a_word_is_a_question(tmp_path, how):
    """helper-79: the change breaks `double` and, in the code, makes pytest drop a class's test
    without a word: the code's decorator forgets its `return` on a test method (of a plain
    class or a `unittest.TestCase`) or on the test class, or the class's own `__test__` is the
    code's flag, which the change turns off. The probe looked only at a module's names, and no
    base run was cached: clean, exit 0."""
    more = {"tests/__init__.py": "", "tests/checks.py": MIXIN} if how == "from-a-mixin" else {}
    repo = _pytest_repo(tmp_path, {"tools.py": TOOLS + "\n\n" + DROPPING + REGISTERS,
                                   "tests/test_tools.py": CLASSY[how], **more})  # fmt: skip
    broken = TOOLS.replace("x * 2", "x * 3") + "\n\n"
    if how in ("class-flag", "flag-beside-a-helper"):
        broken = broken.replace("True", "False") + DROPPING + REGISTERS
    elif how == "a-tuple":  # `return wrapper,`: a tuple, no function
        broken += (DROPPING + REGISTERS).replace("    return wrapper\n", "    return wrapper,\n")
    else:  # the decorator forgets its `return`: the method, or the class, is None
        forgot = "    return wrapper\n" if how != "class-none" else "    return obj\n"
        broken += (DROPPING + REGISTERS).replace(forgot, "")
    stage(repo, {"tools.py": broken})
    done = review(repo, format="json")
    gone = {GONE.get(how, "tests/test_tools.py::TestTools::test_double"): "newly_skipped"}
    assert _kinds(done.json) == gone, done
    assert done.exit_code == 3, done


def test_a_class_that_turns_itself_off_in_words_stays_clean(tmp_path):
    """The converse: a helper class named as tests that says `__test__ = False` itself is the
    usual way to name a helper; a passing change leaves the review clean."""
    helper = "\n\nclass TestData:\n    __test__ = False\n\n    def test_like(self):\n" + (
        "        raise AssertionError('not a test')\n"
    )
    repo = _pytest_repo(tmp_path, {"tests/test_tools.py": TOOLS_TEST + helper})
    stage(repo, {"tools.py": TOOLS.replace("x * 2", "x + x")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {}, done
    assert done.exit_code == 0, done


@pytest.mark.parametrize(
    "how", ["no-function", "inherited-off", "abstract", "doctest-hidden", "a-hook-makes-none"]
)
def test_a_test_pytest_drops_without_a_word_is_a_question(tmp_path, how):
    """helper-49: the change breaks `double` and, in the code, makes pytest drop its test with no
    warning: the test's decorator now returns an object that is no function; the test class's
    base (the code's) gets `__test__ = False` or an abstract method; a decorator without
    `functools.wraps` hides the function's doctest; an unchanged conftest's item hook makes no
    item of it when the code's flag is off (helper-57). No base run was cached: clean, exit 0."""
    if how == "a-hook-makes-none":
        files = {"tools.py": TOOLS, "tests/test_tools.py": TOOLS_TEST,
                 "tests/test_other.py": OTHER, "tests/conftest.py": MAKES_NONE}  # fmt: skip
        broken = TOOLS.replace("FAST = True", "FAST = False")
        gone = "tests/test_tools.py::test_double"
    elif how == "no-function":
        files = {
            "tools.py": TOOLS + "\n\ndef traced(func):\n    return func\n",
            "tests/test_tools.py": TOOLS_TEST.replace("\n\ndef", "\n\n@tools.traced\ndef"),
        }
        broken = (
            TOOLS + "\n\nclass traced:\n    def __init__(self, func):\n        self.func = func\n"
        )
        gone = "tests/test_tools.py::test_double"
    elif how in ("inherited-off", "abstract"):
        # (`internal` in a module the change leaves alone: the one it edits names no `__test__`)
        files = {
            "tools.py": TOOLS + SUITE,
            "tests/test_tools.py": SUITE_TEST,
            "marks.py": "def internal(cls):\n    cls.__test__ = False\n    return cls\n",
        }
        if how == "inherited-off":
            broken = "from marks import internal\n\n" + (
                TOOLS + SUITE.replace("class Suite", "@internal\nclass Suite")
            )
        else:
            broken = (
                "import abc\n\n"
                + TOOLS
                + SUITE.replace("Suite:", "Suite(abc.ABC):")
                + ("\n    @abc.abstractmethod\n    def backend(self): ...\n")
            )
        gone = "tests/test_tools.py::TestTools::test_double"
    else:
        files = {
            "tools.py": DOCUMENTED,
            "pytest.ini": "[pytest]\naddopts = --doctest-modules\n",
            "tests/test_tools.py": OTHER,
        }  # only the doctest checks double
        broken = HIDES + "\n\n" + DOCUMENTED.replace("def double", "@logged\ndef double")
        gone = "tools.py::tools.double"
    repo = _pytest_repo(tmp_path, files)
    stage(repo, {"tools.py": broken.replace("x * 2", "x * 3")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {gone: "newly_skipped"}, done
    assert done.exit_code == 3, done


DISABLED = "def disabled(func):\n    func.__test__ = False\n    return func\n"


def test_a_test_an_unchanged_helper_turns_off_is_a_question(tmp_path):
    """The change breaks `double` and puts the tests' own `@disabled` (unchanged: it sets the
    function's `__test__` to False) on its test: pytest skips it without a word, on both sides
    alike (the base runs the change's tests). The base's own suite ran it (helper-46)."""
    repo = _pytest_repo(tmp_path, {"tests/helpers.py": DISABLED, "pytest.ini": "[pytest]\n"
                                   "pythonpath = . tests\n"})  # fmt: skip
    off = TOOLS_TEST.replace("import tools\n", "import tools\nfrom helpers import disabled\n")
    stage(
        repo,
        {
            "tools.py": TOOLS.replace("x * 2", "x * 3"),
            "tests/test_tools.py": off.replace("\n\ndef test", "\n\n@disabled\ndef test"),
        },
    )
    done = review(repo, format="json")
    assert done.exit_code == 3, done
    assert _kinds(done.json) == {"tests/test_tools.py::test_double": "newly_skipped"}, done


FORMATS = """FORMATS = {"json"}
try:
    import codec_csv  # noqa: F401
except ImportError:
    pass
else:
    FORMATS.add("csv")


def dumps(fmt, value):
    return f"{fmt}:{value}"
"""
FORMATS_TEST = """import pytest

import codec


@pytest.mark.parametrize("fmt", sorted(codec.FORMATS))
def test_roundtrip(fmt):
    assert codec.dumps(fmt, 1) == f"{fmt}:1"
"""


@pytest.mark.parametrize("earlier", ["the-base", "an-earlier-tree", "then-another-branch"])
def test_a_parametrized_case_the_code_no_longer_lists_is_a_question(tmp_path, earlier):
    """`test_roundtrip[csv]` passed in a cached suite run (of the base, or of the change an
    earlier review saw before its commit gained a README line) and is not collected on the
    change, whose code drops the case (and breaks csv); `test_roundtrip[json]` still runs and
    passes, which was taken for the same test under renamed ids: clean, exit 0."""
    repo = make_repo(tmp_path / "repo", {"README.md": "a project\n"})
    stage(repo, {"pyproject.toml": eyeful_config(), "codec.py": FORMATS, "codec_csv.py": "",
                 "tests/test_codec.py": FORMATS_TEST})  # fmt: skip
    confirm(repo)
    assert review(repo, format="json").exit_code == 0  # that tree's suite, run and cached
    if earlier != "the-base":
        stage(repo, {"README.md": "a project of codecs\n"})  # the base: a tree never run
    git(repo, "commit", "-qm", "base")
    if earlier == "then-another-branch":  # an old branch without csv, reviewed in between
        git(repo, "checkout", "-q", "-b", "old", "HEAD~1")
        stage(repo, {"pyproject.toml": eyeful_config(), "codec.py": FORMATS,
                     "codec_csv.py": "raise ImportError('never here')\n",
                     "tests/test_codec.py": FORMATS_TEST})  # fmt: skip
        review(repo, format="json")  # its change's suite (no csv) is now the latest cached
        git(repo, "reset", "-q", "--hard")
        git(repo, "checkout", "-q", "-")
    csv = '    if fmt == "csv":\n        return ""\n'
    broken = FORMATS.replace("    return f", csv + "    return f")
    stage(repo, {"codec_csv.py": "raise ImportError('gone')\n", "codec.py": broken})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_codec.py::test_roundtrip[csv]": "newly_skipped"}, done
    assert done.exit_code == 3, done


def test_a_skip_that_cannot_be_run_by_id_is_looked_for_in_the_bases_suite(tmp_path):
    """A wrapper command with no `test_one`: the change's skip was "not told" although the
    base's suite run this review made named the test as passed: clean, exit 0."""
    skipped = "import pytest\n\nimport tools\n\n\n@pytest.mark.skipif(not tools.FAST, " + (
        "reason='slow here')\ndef test_double():\n    assert tools.double(2) == 4\n"
    )
    wrapper = f'{PYTEST} "$@"\n'
    repo = _pytest_repo(tmp_path, {"scripts/test.sh": wrapper, "tests/test_tools.py": skipped},
                        test="sh scripts/test.sh")  # fmt: skip
    stage(repo, {"tools.py": TOOLS.replace("True", "False").replace("x * 2", "x * 3")})
    done = review(repo, format="json")
    assert _kinds(done.json) == {"tests/test_tools.py::test_double": "newly_skipped"}, done
    assert done.exit_code == 3, done


def test_a_test_another_branch_collected_is_no_question_where_the_bases_suite_has_none(tmp_path):
    """A branch whose `testpaths` adds `integration` was reviewed; back on main, whose suite
    never collects it, a harmless change on a base no review ran: the branch's run is one of the
    recent runs that name tests to look for, its test runs by id on the base (an id run by name
    bypasses `testpaths`) and passes, and would be asked about (helper 43 saw exit 3) but that
    the base's own suite, run live, does not run it."""
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(), "pytest.ini": "[pytest]\ntestpaths = tests\n",
        "tools.py": TOOLS, "tests/test_tools.py": TOOLS_TEST,
        "integration/test_slow.py": OTHER.replace("test_other", "test_slow"),
    })  # fmt: skip
    confirm(repo)
    git(repo, "checkout", "-q", "-b", "ci-everything")
    stage(repo, {"pytest.ini": "[pytest]\ntestpaths = tests integration\n"})
    assert review(repo, format="json").exit_code == 0  # its suite, with integration, cached
    git(repo, "reset", "-q", "--hard")
    git(repo, "checkout", "-q", "-")
    stage(repo, {"README.md": "tools\n"})
    git(repo, "commit", "-qm", "a base no review ran")
    stage(repo, {"tools.py": TOOLS + "\n\ndef half(x):\n    return x / 2\n"})
    done = review(repo, format="json")
    assert _kinds(done.json) == {}, done
    assert done.exit_code == 0, done


CLASS_TESTS = {
    "unittest": "import unittest\n\nfrom tools import double\n\n\n"
    "class ToolsTest(unittest.TestCase):\n"
    "    def test_double(self):\n        self.assertEqual(double(2), 4)\n\n"
    "    def test_double_zero(self):\n        self.assertEqual(double(0), 0)\n",
    "pytest": "from tools import double\n\n\nclass TestTools:\n"
    "    def test_double(self):\n        assert double(2) == 4\n\n"
    "    def test_double_zero(self):\n        assert double(0) == 0\n",
}


@pytest.mark.parametrize(("runner", "edit"), [("unittest", "delete"), ("pytest", "rename")])
def test_a_test_method_the_change_deletes_from_a_class_that_stays_is_no_question(
    tmp_path, runner, edit
):
    """The base's suite is cached (an earlier review); the change deletes (or renames) one test
    method of a class it keeps, deriving from unittest's TestCase alone or from nothing: the
    method is gone, not "still defined" (helper-47, cachetools 59d4db2)."""
    test = f"{shlex.quote(PYTHON)} -m unittest" if runner == "unittest" else PYTEST
    files = {"tests/__init__.py": "", "tests/test_tools.py": CLASS_TESTS[runner],
             "tests/test_other.py": OTHER}  # fmt: skip
    repo = _pytest_repo(tmp_path, files, test=test)
    stage(repo, {"tools.py": TOOLS + "\n# a comment\n"})
    assert review(repo).exit_code == 0  # the earlier review: the base's suite is cached
    git(repo, "commit", "-qm", "a comment")
    kept = CLASS_TESTS[runner].split("\n\n    def test_double_zero")[0] + "\n"
    if edit == "rename":
        kept = CLASS_TESTS[runner].replace("test_double_zero", "test_double_of_zero")
    stage(repo, {"tests/test_tools.py": kept})
    done = review(repo, format="json")
    assert done.exit_code == 0, done
    assert _kinds(done.json) == {}, done


FEATURE_TESTS = (
    "import tools\n\n\nclass TestTools:\n    def test_double(self):\n"
    "        assert tools.double(2) == 4\n\n    if hasattr(tools, 'fast_double'):\n\n"
    "        def test_fast_double(self):\n            assert tools.fast_double(2) == 4\n"
)


def test_a_test_method_defined_under_an_if_in_its_class_is_still_defined(tmp_path):
    """The class defines `test_fast_double` only where the code has `fast_double`: the change
    renames and breaks it, and adds a test to the file. The test is still defined (under its
    `if`), so its leaving the run is a question, not a deletion (helper-48)."""
    fast = "\n\ndef fast_double(x):\n    return x * 2\n"
    repo = _pytest_repo(tmp_path, {"tools.py": TOOLS + fast, "tests/test_tools.py": FEATURE_TESTS})
    stage(repo, {"tools.py": TOOLS + "\n# a comment\n\n\ndef fast_double(x):\n    return x * 2\n"})
    assert review(repo).exit_code == 0  # the earlier review: the base's suite is cached
    git(repo, "commit", "-qm", "a comment")
    stage(
        repo,
        {
            "tools.py": TOOLS + "\n\ndef double_fast(x):\n    return x * 3\n",
            "tests/test_tools.py": FEATURE_TESTS + "\n\ndef test_more():\n    pass\n",
        },
    )
    done = review(repo, format="json")
    assert done.exit_code == 3, done
    assert "tests/test_tools.py::TestTools::test_fast_double" in _kinds(done.json), done
