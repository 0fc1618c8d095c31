"""Runner records: eyeful's pytest probe in real pytest runs, and the go and unittest readers on
real `go test -json` and `python -m unittest -v` output.

Each project is written once per module and run a handful of times in all (with the probe,
without it, collect-only, under xdist, one killed by os._exit), so the module stays fast.
"""

from __future__ import annotations

import importlib.resources
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eyeful.go_records import go_test_args, read_go_json, split_go_id
from eyeful.pytest_records import PROBE_DIR, PROBE_MODULE, plugin_env, read_pytest
from eyeful.records import RunRecord
from eyeful.unittest_records import read_unittest

CALC = '''\
class ParseError(Exception):
    pass


def add(a, b):
    """Add two numbers.

    >>> add(1, 2)
    3
    """
    return a + b


def parse(text):
    try:
        return int(text)
    except ValueError as error:
        raise ParseError(f"cannot parse {text!r}") from error  # RAISES
'''

BASE_CASES = """\
class Base:
    def test_inherited(self):
        assert self.value == 1
"""

SHAPES = """\
import pytest

import extlib
from pkg import calc
from tests.base_cases import Base


@pytest.mark.parametrize("value", ["a b", "\u00b5", "it's", 'say "hi"', "[x]", "f(", "x::y"])
def test_value(value):
    assert value


class TestChild(Base):
    value = 1


class TestOuter:
    class TestInner:
        def test_deep(self):
            assert extlib.answer() == 42


@pytest.mark.xfail(reason="known bug")
def test_xfail_fails():
    assert False


@pytest.mark.xfail(strict=True, reason="must fail")
def test_xpass_strict():
    pass


@pytest.mark.xfail(reason="may pass")
def test_xpass():
    pass


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


def test_chain():
    calc.parse("zz")


@pytest.mark.parametrize("text", ["boom the needle"])
def test_param_text(text):
    raise RuntimeError("real failure")


def test_prints():
    print("SECRET_STDOUT_MARKER")
    assert calc.add(1, 1) == 3


@pytest.fixture
def broken_teardown():
    yield
    raise OSError("teardown broke")


def test_teardown_error(broken_teardown):
    pass
"""

EXITING = """\
import os
import subprocess
import sys


def test_first(tmp_path):
    # A pytest run inside the recorded one (it inherits the probe's environment) records nothing.
    (tmp_path / "pytest.ini").write_text("[pytest]\\n")
    (tmp_path / "test_inner.py").write_text("def test_inner():\\n    pass\\n")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def test_exit():
    os._exit(0)


def test_never():
    pass
"""


# The Python whose pytest runs the projects: this one, or another environment's to check the probe
# with another pytest (e.g. pytest 7.0 and pytest-xdist 3.5, the oldest checked).
PYTEST_PYTHON = os.environ.get("EYEFUL_PROBE_TEST_PYTHON") or sys.executable


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def clean_env(pythonpath: list[Path] | None = None) -> dict[str, str]:
    """This process's environment without pytest's, xdist's or the probe's variables."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "EYEFUL_PROBE")) and key != "PYTHONPATH"
    }
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # plugins by -p only: a faster start
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(map(str, pythonpath))
    return env


class Run:
    def __init__(
        self, root: Path, args: list[str], probe: Path | None, env: dict[str, str],
        trace: Path | None = None,
    ):  # fmt: skip
        if probe is not None:
            env = {**env, **plugin_env(probe, env)}
        if trace is not None:  # the lines to trace, as eyeful/testrun.py asks for a reproduction
            env["EYEFUL_PROBE_TRACE"] = str(trace)
        command = [PYTEST_PYTHON, "-m", "pytest", "-p", "no:cacheprovider", *args]
        proc = subprocess.run(
            command,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.record = read_pytest(probe) if probe is not None else None
        self.files = sorted(probe.glob("*.jsonl")) if probe is not None else []

    def must_record(self) -> RunRecord:
        assert self.record is not None, self.stdout + self.stderr
        return self.record


SHAPES_ARGS = ["-rA", "--continue-on-collection-errors", "--doctest-modules", "pkg", "tests"]


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shapes")
    write(
        root,
        {
            "pytest.ini": "[pytest]\n",
            "pkg/__init__.py": "",
            "pkg/calc.py": CALC,
            "tests/__init__.py": "",
            "tests/base_cases.py": BASE_CASES,
            "tests/test_shapes.py": SHAPES,
            "tests/test_broken.py": "import does_not_exist_xyz\n",
            "tests/test_other.py": "def test_still_runs():\n    pass\n",
        },
    )
    write(root.parent / "external", {"extlib.py": "def answer():\n    return 42\n"})
    return root


@pytest.fixture(scope="module")
def shapes_env(shapes: Path) -> dict[str, str]:
    return clean_env([shapes.parent / "external"])


@pytest.fixture(scope="module")
def probed(shapes: Path, shapes_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory):
    return Run(shapes, SHAPES_ARGS, tmp_path_factory.mktemp("records"), shapes_env)


@pytest.fixture(scope="module")
def record(probed: Run) -> RunRecord:
    return probed.must_record()


def test_plugin_env_appends_to_what_is_there(tmp_path):
    env = plugin_env(tmp_path, {"PYTEST_PLUGINS": "myplug", "PYTHONPATH": "/a" + os.pathsep})
    assert env["PYTEST_PLUGINS"] == f"myplug,{PROBE_MODULE}"
    assert env["PYTHONPATH"] == os.pathsep.join([str(PROBE_DIR), "/a"])
    assert env["EYEFUL_PROBE_DIR"] == str(tmp_path)
    again = plugin_env(tmp_path, {**env})
    assert again["PYTEST_PLUGINS"] == env["PYTEST_PLUGINS"]
    assert plugin_env(tmp_path, {})["PYTEST_PLUGINS"] == PROBE_MODULE
    assert plugin_env(tmp_path, {})["PYTHONPATH"] == str(PROBE_DIR)


def test_the_probe_ships_in_the_package_alone():
    probe = importlib.resources.files("eyeful") / "data" / "probe"
    names = sorted(p.name for p in PROBE_DIR.iterdir() if p.suffix == ".py")
    assert names == [
        "eyeful_probe.py",
        "eyeful_probe_cov.py",
        "eyeful_probe_deps.py",
        "eyeful_probe_main.py",
        "eyeful_probe_marks.py",
        "eyeful_probe_names.py",
        "eyeful_probe_watch.py",
    ]
    # stdlib and pytest only (and its own watchers): it runs in the project's own environment.
    # What every run imports is the main module and the names it needs; the tracer, the map and
    # the sandbox's watch are imported where a run asks for them (indented: inside functions).
    for name, allowed in (("eyeful_probe.py", {"eyeful_probe_main"}),
                          ("eyeful_probe_main.py", {"pytest", "eyeful_probe_names"}),
                          ("eyeful_probe_cov.py", {"pytest", "eyeful_probe_deps",
                                                   "eyeful_probe_watch", "eyeful_probe_marks"}),
                          ("eyeful_probe_marks.py", {"eyeful_probe_deps", "eyeful_probe_watch",
                                                     "eyeful_probe_names"}),
                          ("eyeful_probe_watch.py", {"eyeful_probe_deps", "eyeful_probe_names"}),
                          ("eyeful_probe_deps.py", {"eyeful_probe_names"}),
                          ("eyeful_probe_names.py", set())):  # fmt: skip
        text = (probe / name).read_text("utf-8")
        imports = re.findall(r"^(?:from|import) (\w+)", text, re.MULTILINE)
        assert set(imports) - set(sys.stdlib_module_names) == allowed, name
        lazy = re.findall(r"^[ \t]+(?:from|import) (\w+)", text, re.MULTILINE)
        found = {n for n in lazy if n.startswith("eyeful_probe")}
        assert found <= {"eyeful_probe_cov", "eyeful_probe_deps", "eyeful_probe_watch"}, name


REWRITTEN = """import json
import os


def pytest_unconfigure(config):
    names = getattr(config.pluginmanager.rewrite_hook, "_rewritten_names", {})
    with open(os.environ["REWRITTEN"], "w") as file:
        json.dump(sorted(str(path) for path in names.values()), file)
"""


def test_pytest_rewrites_only_the_few_lines_that_hand_it_the_probe(tmp_path):
    """pytest's assertion rewriting parses and compiles the module a plugin is named by on every
    run where it cannot keep the result (PYTHONDONTWRITEBYTECODE, a read-only installation): of
    the probe, only the few lines that hand pytest the probe itself; that one is imported as any
    module is, from its compiled file."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "conftest.py").write_text(REWRITTEN)
    (project / "test_x.py").write_text("def test_x():\n    assert True\n")
    (tmp_path / "probe").mkdir()
    out = tmp_path / "rewritten.json"
    env = {**os.environ, **plugin_env(tmp_path / "probe", os.environ),
           "REWRITTEN": str(out), "PYTHONDONTWRITEBYTECODE": "1"}  # fmt: skip
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          cwd=project, env=env, capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rewritten = [Path(path) for path in json.loads(out.read_text())]
    probe = [path for path in rewritten if path.name.startswith("eyeful_probe")]
    assert [path.name for path in probe] == [f"{PROBE_MODULE}.py"]
    assert len(probe[0].read_text().splitlines()) < 20  # not the probe's 900 lines
    assert list(tmp_path.glob("probe/*.jsonl"))  # and the probe recorded the run


def test_no_record_without_the_probe(tmp_path):
    assert read_pytest(tmp_path) is None
    assert read_pytest(tmp_path / "missing") is None


def test_outcomes(probed: Run, record: RunRecord):
    assert probed.returncode == 1, probed.stdout
    assert record.finished and record.exitstatus == 1
    outcomes = {test_id: test.outcome for test_id, test in record.tests.items()}
    shapes = "tests/test_shapes.py::"
    assert outcomes[shapes + "test_xfail_fails"] == "xfailed"
    assert outcomes[shapes + "test_xpass_strict"] == "xpass_strict"
    assert outcomes[shapes + "test_xpass"] == "xpassed"
    assert outcomes[shapes + "test_skipped"] == "skipped"
    assert record.tests[shapes + "test_skipped"].reason == "Skipped: not here"
    assert record.tests[shapes + "test_xfail_fails"].reason == "known bug"
    assert outcomes[shapes + "test_chain"] == "failed"
    assert outcomes[shapes + "TestChild::test_inherited"] == "passed"
    assert outcomes[shapes + "TestOuter::TestInner::test_deep"] == "passed"
    assert outcomes["pkg/calc.py::pkg.calc.add"] == "passed"  # a doctest
    # the other module's tests ran although one module failed to import
    assert outcomes["tests/test_other.py::test_still_runs"] == "passed"
    teardown = record.tests[shapes + "test_teardown_error"]
    assert (teardown.outcome, teardown.phase) == ("error", "teardown")
    assert teardown.failure is not None
    assert [(link.type, link.message) for link in teardown.failure.chain] == [
        ("OSError", "teardown broke")
    ]
    assert set(record.collected) == set(record.tests)
    # what is not a test function says so: a doctest's file is the code under test
    assert record.kinds == {"pkg/calc.py::pkg.calc.add": "DoctestItem"}
    assert not record.notes


def test_the_record_says_which_words_pytest_took_as_paths(record: RunRecord):
    # `-p no:cacheprovider` comes first (Run's own), then SHAPES_ARGS: `pkg` and `tests` are paths
    assert record.invocation is not None
    assert record.invocation.args == ["-p", "no:cacheprovider", *SHAPES_ARGS]
    assert record.invocation.paths == [5, 6]


OPTIONS_CONFTEST = """\
def pytest_addoption(parser):
    parser.addoption("--myopt", default=None)
"""
OPTIONS_PLUGIN = """\
def pytest_addoption(parser):
    parser.addoption("--plug-fast", action="store_true")
    parser.addoption("--plug-n", type=int, default=0)
    parser.addoption("--plug-mode", choices=["tests", "fast"], default="fast")
"""


def test_the_project_and_its_plugins_options_are_parsed_by_pytest_itself(tmp_path):
    # Option values that look like paths, a flag before a path, `--opt=value`, `-k`:
    # which word is a path only pytest's parser, with the conftest's and the plugin's options
    # in it, can tell.
    root = write(tmp_path / "project", {
        "conftest.py": OPTIONS_CONFTEST, "plug.py": OPTIONS_PLUGIN,
        "tests/test_a.py": "def test_a():\n    pass\n",
    })  # fmt: skip
    args = ["-p", "plug", "--plug-fast", "tests", "--myopt", "tests", "-k", "tests or a",
            "--plug-n", "2", "--myopt=x", "--plug-mode", "tests", "tests/test_a.py"]  # fmt: skip
    run = Run(root, args, tmp_path / "rec", clean_env([root]))
    invocation = run.must_record().invocation
    assert invocation is not None, run.stdout
    assert invocation.args == ["-p", "no:cacheprovider", *args]
    paths = [invocation.args[at] for at in invocation.paths]
    # never `--myopt tests`, `-k tests or a` nor `--plug-mode tests` (a choice: parsed word by
    # word, as a marker in its place is refused)
    assert invocation.paths == [5, 15], paths


def test_ids_are_pytests_own(shapes: Path, shapes_env: dict[str, str], record: RunRecord, tmp_path):
    collect = Run(shapes, [*SHAPES_ARGS, "--collect-only", "-q"], tmp_path / "rec", shapes_env)
    listed = [line for line in collect.stdout.splitlines() if "::" in line]
    assert listed == record.collected
    for param in ["a b", "\\xb5", "it's", 'say "hi"', "[x]", "f(", "x::y"]:
        assert f"tests/test_shapes.py::test_value[{param}]" in record.tests
    collected_only = collect.must_record()
    assert collected_only.collected == record.collected
    assert collected_only.finished and not collected_only.tests


def test_collection_error(record: RunRecord):
    errors = {error.id: error for error in record.collect_errors}
    assert list(errors) == ["tests/test_broken.py"]
    failure = errors["tests/test_broken.py"].failure
    assert failure.chain[0].type == "ModuleNotFoundError"
    assert "does_not_exist_xyz" in failure.chain[0].message
    assert failure.raised_in is not None
    assert "does_not_exist_xyz" in failure.text  # pytest's report, bounded


def test_exception_chain_and_raising_frame(shapes: Path, record: RunRecord):
    failure = record.tests["tests/test_shapes.py::test_chain"].failure
    assert failure is not None
    assert [link.type for link in failure.chain] == ["pkg.calc.ParseError", "ValueError"]
    assert failure.chain[0].message == "cannot parse 'zz'"
    assert "invalid literal" in failure.chain[1].message
    calc = shapes / "pkg" / "calc.py"
    line = next(n for n, text in enumerate(CALC.splitlines(), 1) if "# RAISES" in text)
    assert failure.raised_in is not None
    assert (failure.raised_in.file, failure.raised_in.line) == (str(calc), line)
    assert [(f.file, f.function) for f in failure.frames] == [
        (str(shapes / "tests" / "test_shapes.py"), "test_chain"),
        (str(calc), "parse"),
    ]
    assert failure.crash_message == "pkg.calc.ParseError: cannot parse 'zz'"


def test_failure_is_the_exception_not_the_id_or_the_output(record: RunRecord):
    param = record.tests["tests/test_shapes.py::test_param_text[boom the needle]"]
    assert param.failure is not None
    assert [(link.type, link.message) for link in param.failure.chain] == [
        ("RuntimeError", "real failure")
    ]
    # What a verdict reads (the chain, the crash line, where it was raised) never holds the id;
    # `text` is pytest's rendering for the reader, which echoes the arguments.
    assert "needle" not in param.failure.model_dump_json(exclude={"text"})
    printed = record.tests["tests/test_shapes.py::test_prints"]
    assert printed.failure is not None
    # What it printed is kept apart: not in the verdict's fields, not in pytest's rendering
    # (which echoes the test's source, the print() line included, but not its output).
    assert "SECRET_STDOUT_MARKER" not in printed.failure.model_dump_json(exclude={"text"})
    assert "Captured stdout" not in printed.failure.text
    assert printed.captured is not None
    assert printed.captured.stdout == len("SECRET_STDOUT_MARKER\n")
    assert "assert 2 == 3" in (printed.failure.crash_message or "")  # pytest's explanation


def test_imported_shows_modules_from_outside_the_checkout(shapes: Path, record: RunRecord):
    assert str(shapes.parent / "external" / "extlib.py") in record.imported
    assert str(shapes / "pkg" / "calc.py") in record.imported
    assert not [path for path in record.imported if "site-packages" in path]
    assert not [path for path in record.imported if Path(path).name.startswith("eyeful_probe")]


def test_the_probe_changes_no_outcome(shapes: Path, shapes_env: dict[str, str], probed: Run):
    plain = Run(shapes, SHAPES_ARGS, None, shapes_env)

    def summary(run: Run) -> list[str]:
        lines = run.stdout.splitlines()
        start = next(n for n, line in enumerate(lines) if "short test summary info" in line)
        # Timings and memory addresses differ from one run to the next, probe or not.
        return [
            re.sub(r"0x[0-9a-f]+", "0x", re.sub(r" in [\d.]+s", "", line)) for line in lines[start:]
        ]

    assert plain.returncode == probed.returncode
    assert summary(plain) == summary(probed)
    assert "eyeful_probe" not in probed.stdout + probed.stderr


def test_a_truncated_record_is_read(probed: Run, tmp_path):
    (main,) = probed.files
    data = main.read_bytes()
    cut = data[: data.rindex(b'{"t":"imported"') + 20]  # killed in the middle of a line
    (tmp_path / main.name).write_bytes(cut)
    record = read_pytest(tmp_path)
    assert record is not None
    assert not record.finished and record.exitstatus is None
    assert len(record.tests) == len(probed.must_record().tests)
    assert any("incomplete" in note for note in record.notes)


def test_xdist_each_test_once(
    shapes: Path, shapes_env: dict[str, str], record: RunRecord, tmp_path
):
    run = Run(shapes, [*SHAPES_ARGS, "-p", "xdist.plugin", "-n", "2"], tmp_path, shapes_env)
    assert run.returncode == 1, run.stdout
    roles = sorted(path.stem.split("-")[1] for path in run.files)
    assert roles == ["controller", "worker", "worker"]
    calls: dict[str, int] = {}
    for path in run.files:
        for line in path.read_text("utf-8").splitlines():
            event = json.loads(line)
            if event["t"] == "phase" and event["when"] == "teardown":
                calls[event["id"]] = calls.get(event["id"], 0) + 1
    assert set(calls.values()) == {1}
    xdist = run.must_record()
    assert xdist.finished and xdist.exitstatus == 1
    assert xdist.invocation is not None and xdist.invocation.paths == [5, 6]  # the controller's
    assert {i: t.outcome for i, t in xdist.tests.items()} == {
        i: t.outcome for i, t in record.tests.items()
    }
    assert xdist.collected == record.collected
    assert [error.id for error in xdist.collect_errors] == ["tests/test_broken.py"]
    chain = xdist.tests["tests/test_shapes.py::test_chain"].failure
    assert chain is not None and chain.chain[0].type == "pkg.calc.ParseError"


@pytest.fixture(scope="module")
def exiting(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("exiting")
    return write(root, {"pytest.ini": "[pytest]\n", "tests/test_exit.py": EXITING})


def test_a_run_that_exits_early_is_not_finished(exiting: Path, tmp_path):
    run = Run(exiting, ["tests"], tmp_path, clean_env())
    assert run.returncode == 0  # os._exit(0): the exit code says all is well
    record = run.must_record()
    assert not record.finished and record.exitstatus is None
    assert {i: t.outcome for i, t in record.tests.items()} == {
        "tests/test_exit.py::test_first": "passed"
    }
    assert record.collected[-1] == "tests/test_exit.py::test_never"
    # the test it ended in began: its setup line was written
    assert any("tests/test_exit.py::test_exit: started" in note for note in record.notes)
    # the nested pytest run of test_first wrote nothing
    assert len(run.files) == 1
    assert not [test_id for test_id in record.collected if "test_inner" in test_id]


def test_a_worker_that_dies_is_reported_by_the_controller(exiting: Path, tmp_path):
    run = Run(exiting, ["-p", "xdist.plugin", "-n", "2", "tests"], tmp_path, clean_env())
    record = run.must_record()
    assert record.finished and record.exitstatus == 1, run.stdout
    crashed = record.tests["tests/test_exit.py::test_exit"]
    assert (crashed.outcome, crashed.phase) == ("failed", "crash")
    assert crashed.failure is not None and "crashed" in crashed.failure.text
    assert record.tests["tests/test_exit.py::test_first"].outcome == "passed"
    assert any("crashed" in note for note in record.notes)
    assert not [test_id for test_id in record.collected if "test_inner" in test_id]


# --- go test -json ---

GO_FILES = {
    "go.mod": "module example.com/m\n\ngo 1.19\n",
    "a/a.go": "package a\n\nfunc Parse(s string) int { return len(s) }\n",
    "a/a_test.go": """package a

import "testing"

func TestParse(t *testing.T) {
	if Parse("ab") != 2 {
		t.Fatal("bad")
	}
}

func TestCases(t *testing.T) {
	for _, name := range []string{"one", "two words", "x.y"} {
		name := name
		t.Run(name, func(t *testing.T) {
			if name == "two words" {
				t.Errorf("case %q failed", name)
			}
		})
	}
}

func TestSkip(t *testing.T) { t.Skip("not today") }
""",
    "b/b.go": "package b\n\nfunc Parse(s string) int { return 0 }\n",
    "b/b_test.go": """package b

import "testing"

func TestParse(t *testing.T) {
	if got := Parse("ab"); got != 2 {
		t.Errorf("Parse(ab) = %d, want 2", got)
	}
}
""",
    "c/c.go": "package c\n\nfunc Broken() int { return undefinedThing }\n",
    "c/c_test.go": 'package c\n\nimport "testing"\n\nfunc TestC(t *testing.T) {}\n',
    "d/d_test.go": """package d

import "testing"

func index(xs []int, i int) int { return xs[i] }

func TestOK(t *testing.T) {}

func TestPanic(t *testing.T) { index(nil, 3) }
""",
}

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed")


@pytest.fixture(scope="module")
def go_env() -> dict[str, str]:
    env = clean_env()
    cache = subprocess.run(
        ["go", "env", "GOCACHE"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    env.update(GOCACHE=cache.stdout.strip(), GOPROXY="off", GOFLAGS="", GOTOOLCHAIN="local")
    return env


@pytest.fixture(scope="module")
def go_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write(tmp_path_factory.mktemp("gomod"), GO_FILES)


def go_json(root: Path, env: dict[str, str], *args: str) -> RunRecord:
    proc = subprocess.run(
        ["go", "test", "-json", *args],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # go 1.19 prints a build failure's details on stderr
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode != 0
    return read_go_json(proc.stdout.splitlines(keepends=True))


@needs_go
def test_go_ids_are_qualified_by_package(go_module: Path, go_env: dict[str, str]):
    record = go_json(go_module, go_env, "./...")
    outcomes = {test_id: test.outcome for test_id, test in record.tests.items()}
    assert outcomes == {
        "example.com/m/a.TestParse": "passed",
        "example.com/m/a.TestCases": "failed",
        "example.com/m/a.TestCases/one": "passed",
        "example.com/m/a.TestCases/two_words": "failed",
        "example.com/m/a.TestCases/x.y": "passed",
        "example.com/m/a.TestSkip": "skipped",
        "example.com/m/b.TestParse": "failed",
        "example.com/m/d.TestOK": "passed",
        "example.com/m/d.TestPanic": "failed",
    }
    assert record.tests["example.com/m/a.TestSkip"].reason == "not today"
    failed = record.tests["example.com/m/b.TestParse"].failure
    assert failed is not None and failed.crash_message == "b_test.go:7: Parse(ab) = 0, want 2"
    assert failed.raised_in is not None and failed.raised_in.line == 7
    panic = record.tests["example.com/m/d.TestPanic"].failure
    assert panic is not None and panic.chain[0].type == "panic"
    assert "index out of range" in panic.chain[0].message
    assert panic.raised_in is not None
    assert (panic.raised_in.file, panic.raised_in.line) == (str(go_module / "d" / "d_test.go"), 5)
    assert [error.id for error in record.collect_errors] == ["example.com/m/c"]
    assert "undefinedThing" in record.collect_errors[0].failure.text
    assert record.finished


@needs_go
def test_go_ids_run_again(go_module: Path, go_env: dict[str, str]):
    test_id = "example.com/m/a.TestCases/two_words"
    assert split_go_id(test_id) == ("example.com/m/a", "TestCases/two_words")
    assert split_go_id("example.com/m/a.TestCases/x.y", ["example.com/m", "example.com/m/a"]) == (
        "example.com/m/a",
        "TestCases/x.y",
    )
    args = go_test_args(test_id)
    assert args == ["example.com/m/a", "-run", "^TestCases$/^two_words$"]
    again = go_json(go_module, go_env, *args)
    assert set(again.tests) == {"example.com/m/a.TestCases", test_id}
    assert again.tests[test_id].outcome == "failed"


# --- python -m unittest -v ---

UNITTEST_MODULE = """\
import unittest


def helper():
    try:
        raise KeyError("inner")
    except KeyError as error:
        raise ValueError("outer msg") from error


class TestA(unittest.TestCase):
    def test_ok(self):
        pass

    def test_fail(self):
        print("printed out")
        self.assertEqual(1, 2)

    def test_error(self):
        helper()

    @unittest.skip("no reason really")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_xf(self):
        self.assertTrue(False)

    @unittest.expectedFailure
    def test_xp(self):
        pass

    def test_doc(self):
        \"\"\"A docstring's first line.\"\"\"

    def test_sub(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertEqual(i, 0)


class TestB(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("class setup")

    def test_never(self):
        pass
"""

UNITTEST_EXPECTED = {
    "ut_pkg.test_mod.TestA.test_ok": "passed",
    "ut_pkg.test_mod.TestA.test_fail": "failed",
    "ut_pkg.test_mod.TestA.test_error": "error",
    "ut_pkg.test_mod.TestA.test_skip": "skipped",
    "ut_pkg.test_mod.TestA.test_xf": "xfailed",
    "ut_pkg.test_mod.TestA.test_xp": "xpass_strict",  # unittest fails the run for it
    "ut_pkg.test_mod.TestA.test_doc": "passed",
    "ut_pkg.test_mod.TestA.test_sub": "failed",
    "ut_pkg.test_mod.TestB": "error",
}

# Python 3.10's -v output of the same run (before 3.11 a test's id was its class's).
UNITTEST_310 = """\
test_doc (ut_pkg.test_mod.TestA)
A docstring's first line. ... ok
test_error (ut_pkg.test_mod.TestA) ... ERROR
test_fail (ut_pkg.test_mod.TestA) ... printed out
FAIL
test_ok (ut_pkg.test_mod.TestA) ... ok
test_skip (ut_pkg.test_mod.TestA) ... skipped 'no reason really'
test_sub (ut_pkg.test_mod.TestA) ... test_xf (ut_pkg.test_mod.TestA) ... expected failure
test_xp (ut_pkg.test_mod.TestA) ... unexpected success
ERROR
test_broken (unittest.loader._FailedTest) ... ERROR

======================================================================
ERROR: test_error (ut_pkg.test_mod.TestA)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/w/ut_pkg/test_mod.py", line 6, in helper
    raise KeyError("inner")
KeyError: 'inner'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/w/ut_pkg/test_mod.py", line 20, in test_error
    helper()
  File "/w/ut_pkg/test_mod.py", line 8, in helper
    raise ValueError("outer msg") from error
ValueError: outer msg

======================================================================
ERROR: setUpClass (ut_pkg.test_mod.TestB)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/w/ut_pkg/test_mod.py", line 45, in setUpClass
    raise RuntimeError("class setup")
RuntimeError: class setup

======================================================================
ERROR: test_broken (unittest.loader._FailedTest)
----------------------------------------------------------------------
ImportError: Failed to import test module: test_broken
Traceback (most recent call last):
  File "/usr/lib/python3.10/unittest/loader.py", line 154, in loadTestsFromName
    module = __import__(module_name)
  File "/w/ut_pkg/test_broken.py", line 1, in <module>
    import nonexistent_zzz
ModuleNotFoundError: No module named 'nonexistent_zzz'


======================================================================
FAIL: test_fail (ut_pkg.test_mod.TestA)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/w/ut_pkg/test_mod.py", line 17, in test_fail
    self.assertEqual(1, 2)
AssertionError: 1 != 2

======================================================================
FAIL: test_sub (ut_pkg.test_mod.TestA) (i=1)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/w/ut_pkg/test_mod.py", line 38, in test_sub
    self.assertEqual(i, 0)
AssertionError: 1 != 0

----------------------------------------------------------------------
Ran 9 tests in 0.001s

FAILED (failures=2, errors=3, skipped=1, expected failures=1, unexpected successes=1)
"""


def check_unittest_record(record: RunRecord, root: str) -> None:
    assert {i: t.outcome for i, t in record.tests.items()} == UNITTEST_EXPECTED
    assert record.tests["ut_pkg.test_mod.TestA.test_skip"].reason == "no reason really"
    assert record.tests["ut_pkg.test_mod.TestB"].phase == "setup"
    error = record.tests["ut_pkg.test_mod.TestA.test_error"].failure
    assert error is not None
    assert [(link.type, link.message) for link in error.chain] == [
        ("ValueError", "outer msg"),
        ("KeyError", "'inner'"),
    ]
    assert error.raised_in is not None
    assert (error.raised_in.file, error.raised_in.line) == (f"{root}/ut_pkg/test_mod.py", 8)
    assert [frame.function for frame in error.frames] == ["test_error", "helper"]
    fail = record.tests["ut_pkg.test_mod.TestA.test_fail"].failure
    assert fail is not None and fail.crash_message == "AssertionError: 1 != 2"
    sub = record.tests["ut_pkg.test_mod.TestA.test_sub"].failure
    assert sub is not None and sub.crash_message == "AssertionError: 1 != 0"
    assert [error.id for error in record.collect_errors] == ["test_broken"]
    broken = record.collect_errors[0].failure
    assert broken.chain[0].type == "ModuleNotFoundError"
    assert record.finished


def test_unittest_run(tmp_path):
    write(
        tmp_path,
        {
            "ut_pkg/__init__.py": "",
            "ut_pkg/test_mod.py": UNITTEST_MODULE,
            "ut_pkg/test_broken.py": "import nonexistent_zzz\n",
        },
    )
    proc = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", "ut_pkg.test_mod", "ut_pkg.test_broken"],
        cwd=tmp_path,
        env=clean_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    record = read_unittest(proc.stderr)
    check_unittest_record(record, str(tmp_path))
    assert record.collected[0] == "ut_pkg.test_mod.TestA.test_doc"
    assert not record.notes


def test_unittest_before_3_11():
    check_unittest_record(read_unittest(UNITTEST_310), "/w")


TRACED_CODE = """\
import threading


def in_fixture():
    return "setup"  # line 5


def in_test():
    return "call"  # line 9


def in_teardown():
    return "teardown"  # line 13


def in_thread():
    return "thread"  # line 17


def in_report():
    return "report"  # line 21
"""

TRACED_CONFTEST = """\
import threading

import pytest

import traced


@pytest.fixture(scope="session")
def server():
    seen = []
    ready = threading.Event()
    go = threading.Event()

    def serve():
        ready.set()
        go.wait(60)
        seen.append(traced.in_thread())

    thread = threading.Thread(target=serve)
    thread.start()  # started before the test, it runs the code while the test waits for it
    ready.wait(60)
    yield go, seen
    thread.join(60)


@pytest.fixture
def resource():
    traced.in_fixture()
    yield
    traced.in_teardown()


def pytest_runtest_logreport(report):
    traced.in_report()  # pytest's reporting, not the test
"""

TRACED_TEST = """\
import traced


def test_uses_it(server, resource):
    go, seen = server
    go.set()
    assert traced.in_test() == "call"
    for _ in range(600):
        if seen:
            break
        import time
        time.sleep(0.1)
    assert seen == ["thread"]
"""


def test_the_tracer_sees_a_tests_phases_and_threads_not_pytests_own_reporting(tmp_path):
    # A line that only pytest's report of a test runs (a conftest's logreport hook) is no line
    # the test ran (its setup, call and teardown, and its threads, are): it ran outside any
    # test, which is where the tracer puts it (a report hook may decide an outcome: helper-74).
    root = write(tmp_path / "proj", {"traced.py": TRACED_CODE, "conftest.py": TRACED_CONFTEST,
                                     "tests/test_traced.py": TRACED_TEST})  # fmt: skip
    code = os.path.realpath(root / "traced.py")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({code: [5, 9, 13, 17, 21]}), encoding="utf-8")
    probe = tmp_path / "probe"
    run = Run(root, ["-q", "tests"], probe, clean_env(), trace=spec)
    record = run.must_record()
    assert run.returncode == 0, run.stdout + run.stderr
    assert record.executed == {code: [5, 9, 13, 17]}, (record.executed, record.executed_at_import)
    assert record.executed_at_import == {code: [21]}, record.executed_at_import
    assert record.edited_entered  # (each function holds a traced line: entering one counts)


def test_a_suite_run_without_a_tracer_registers_no_phase_wrappers(tmp_path):
    # The wrappers that turn the tracer on and off around each test's phases cost every test
    # three more hook calls: only a traced run (a reproduction's) has them.
    conftest = (
        "def pytest_sessionfinish(session):\n"
        "    print('PHASES', session.config.pluginmanager.has_plugin('eyeful_probe_phases'))\n"
    )
    files = {"conftest.py": conftest, "traced.py": TRACED_CODE,
             "tests/test_one.py": "def test_one():\n    pass\n"}  # fmt: skip
    root = write(tmp_path / "proj", files)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({os.path.realpath(root / "traced.py"): [5]}), encoding="utf-8")
    plain = Run(root, ["-q", "-s", "tests"], tmp_path / "p1", clean_env())
    traced = Run(root, ["-q", "-s", "tests"], tmp_path / "p2", clean_env(), trace=spec)
    assert "PHASES False" in plain.stdout, plain.stdout + plain.stderr
    assert "PHASES True" in traced.stdout, traced.stdout + traced.stderr


def test_the_probes_realpath_resolving_each_directory_once_is_realpath(tmp_path: Path) -> None:
    # eyeful_probe._realpath stands for os.path.realpath on every module a session imported.
    code = (
        "import json, os, sys\n"
        "from eyeful_probe import _realpath\n"
        "paths = json.loads(sys.argv[1])\n"
        "dirs = {}\n"
        "print(json.dumps([[_realpath(p, dirs), os.path.realpath(p)] for p in paths]))\n"
    )
    (tmp_path / "tree" / "pkg").mkdir(parents=True)
    (tmp_path / "tree" / "pkg" / "mod.py").write_text("", encoding="utf-8")
    (tmp_path / "into").symlink_to(tmp_path / "tree" / "pkg")
    (tmp_path / "tree" / "linked.py").symlink_to(tmp_path / "tree" / "pkg" / "mod.py")
    (tmp_path / "tree" / "dangling.py").symlink_to(tmp_path / "gone.py")
    names = ["tree/pkg/mod.py", "into/mod.py", "tree/linked.py", "tree/dangling.py",
             "into/../mod.py", "missing/x.py"]  # fmt: skip
    paths = [os.path.join(tmp_path, name) for name in names]
    env = {**os.environ, "PYTHONPATH": str(PROBE_DIR)}
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(paths)], env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    pairs = json.loads(proc.stdout)
    assert [ours for ours, _ in pairs] == [real for _, real in pairs]
    assert pairs[1][0] == paths[0] and pairs[4][0] == str(tmp_path / "tree" / "mod.py")


def test_what_a_test_hides_from_the_watch_still_counts_as_looked_at(tmp_path):
    """A reproduction tells the trees apart by how the code is written, where the watch did not
    look: reading the source at its module's top level (collection), through a link under another
    name, or after taking the tracer away (sys.settrace: the lines it ran and what it read are
    unseen). Each changed file it could have looked at so counts as looked at."""
    code = os.path.realpath(tmp_path / "proj" / "calc.py")
    cases = {
        "top_level": "SOURCE = open(calc.__file__).read()\n\n\ndef test_a():\n    assert SOURCE\n",
        "link": (
            "import os\n\n\ndef test_a(tmp_path):\n    os.link(calc.__file__, tmp_path / 'hard')\n"
            "    os.symlink(calc.__file__, tmp_path / 'soft')\n"
            "    assert (tmp_path / 'soft').read_text() == (tmp_path / 'hard').read_text()\n"
        ),
        "tracer": "import sys\n\n\ndef test_a():\n    sys.settrace(lambda *a: None)\n",
    }
    files = {"calc.py": "def add(a, b):\n    return a + b\n"}
    files |= {f"tests/test_{name}.py": "import calc\n" + body for name, body in cases.items()}
    root = write(tmp_path / "proj", files)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({code: [2]}), encoding="utf-8")
    for name in cases:
        run = Run(root, ["-q", f"tests/test_{name}.py"], tmp_path / name, clean_env(), trace=spec)
        record = run.must_record()
        assert run.returncode == 0, run.stdout + run.stderr
        assert record.read_as_text == [code], (name, record)
        how = record.looked[code]
        assert how.startswith("set a tracer") if name == "tracer" else how == "read", (name, how)


def test_the_probe_and_the_core_name_the_same_outcome_hooks():
    # The probe runs in the project's Python and cannot import eyeful: its list of the hooks
    # that decide outcomes is a copy, which must stay the core's (testside.OUTCOME_HOOKS).
    import ast

    from eyeful.probeload import PROBE_DIR
    from eyeful.testside import OUTCOME_HOOKS

    module = ast.parse((PROBE_DIR / "eyeful_probe_main.py").read_text(encoding="utf-8"))
    [listed] = [
        node.value for node in module.body
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_OUTCOME_HOOKS" for t in node.targets
        )
    ]  # fmt: skip
    assert ast.literal_eval(listed) == OUTCOME_HOOKS


DROPS_CODE = '''import abc


class Traced:
    def __init__(self, func):
        self.func = func


def off(cls):
    cls.__test__ = False
    return cls


@off
class Base:
    pass


class Abstract(abc.ABC):
    @abc.abstractmethod
    def backend(self): ...


def hides(func):
    def wrapper(*args):
        return func(*args)
    return wrapper


@hides
def documented():
    """>>> documented()"""


class Plugin:
    def __init__(self):
        self.ready = True
'''
DROPS_TESTS = '''import abc

import dropcode
from dropcode import documented  # noqa: F401  (a function of another module: not this one's)


@dropcode.Traced
def test_traced():
    pass


class TestOff(dropcode.Base):
    def test_x(self):
        pass


class TestAbstract(dropcode.Abstract):
    def test_x(self):
        pass


def hides(func):  # doctest looks for examples in this module's own functions
    def wrapper(*args):
        return func(*args)
    return wrapper


@hides
def here():
    """>>> here()"""


@dropcode.hides  # another module's decorator without functools.wraps hides it too
def there():
    """>>> there()"""


class TestPlugin(dropcode.Plugin):  # a constructor from the code: pytest collects no such class
    def test_x(self):
        pass
'''
# What a project names `test...` on purpose and pytest rightly leaves alone: not counted.
KEPT_TESTS = """import abc
import unittest


class TestCaseStyle(unittest.TestCase):  # its constructor is unittest's: pytest runs it
    def test_x(self):
        pass


class TestBase(abc.ABC):
    @abc.abstractmethod
    def backend(self): ...

    def test_backend(self):
        assert self.backend()


class TestHelper:
    __test__ = False


test_cases = [(1, 2), (2, 4)]
test_data = {"a": 1}
test_dir = None  # set by setup_module
try:
    import testfixtures_not_installed as testfixtures
except ImportError:
    testfixtures = None


class Client:
    pass


test_client = Client()


def test_real():
    pass
"""


def test_tests_pytest_drops_without_a_word_are_counted_and_helpers_are_not(tmp_path):
    """The probe's sign that collected tests were dropped (helper-49): a decorator's object that
    holds the test, a class turned off or made abstract by its base in another module, a doctest
    a decorator hid; the names a project gives helpers on purpose are not counted."""
    root = write(tmp_path / "p", {"pytest.ini": "[pytest]\npythonpath = .\n",
                                  "dropcode.py": DROPS_CODE, "drops/test_drops.py": DROPS_TESTS,
                                  "kept/test_kept.py": KEPT_TESTS})  # fmt: skip
    # (pytest's warning for the class with a constructor silenced, as many projects do)
    quiet = ["-W", "ignore::pytest.PytestCollectionWarning"]
    dropped = Run(root, ["-q", "--doctest-modules", *quiet, "drops"], tmp_path / "r1", clean_env())
    assert dropped.must_record().narrowed is not None, dropped.stdout
    assert dropped.must_record().narrowed.startswith("6 tests pytest dropped"), dropped.stdout
    kept = Run(root, ["-q", "--doctest-modules", "kept"], tmp_path / "r2", clean_env())
    assert kept.must_record().narrowed is None, kept.stdout
    assert sorted(kept.must_record().tests) == [
        "kept/test_kept.py::TestCaseStyle::test_x",
        "kept/test_kept.py::test_real",
    ]


def test_what_collection_leaves_out_by_a_conftests_word_is_recorded(tmp_path):
    """A conftest's `collect_ignore` and a directory that looks like a virtualenv are recorded
    (the code or the change may decide them); `--ignore` and `norecursedirs` (`build`), alike on
    every tree, are not, nor a `setup.py` (never a test module)."""
    root = write(tmp_path / "p", {
        "pytest.ini": "[pytest]\n", "conftest.py": 'collect_ignore = ["manual", "setup.py"]\n',
        "setup.py": "", "test_a.py": "def test_a():\n    pass\n",
        "manual/test_m.py": "def test_m():\n    pass\n",
        "venvish/pyvenv.cfg": "home = /usr/bin\n", "venvish/test_v.py": "def test_v():\n    pass\n",
        "skipped/test_s.py": "def test_s():\n    pass\n",
        "build/test_b.py": "def test_b():\n    pass\n",
    })  # fmt: skip
    run = Run(root, ["-q", "--ignore=skipped"], tmp_path / "r", clean_env())
    record = run.must_record()
    assert list(record.tests) == ["test_a.py::test_a"], run.stdout
    real = os.path.realpath(root)
    assert [os.path.relpath(p, real) for p in record.left_out] == ["manual", "venvish"]
    # A run of one directory leaves out nothing beside it: it was never asked for.
    sub = Run(root, ["-q", "manual"], tmp_path / "r2", clean_env())
    assert list(sub.must_record().tests) == ["manual/test_m.py::test_m"], sub.stdout
    assert sub.must_record().left_out == []


# A failure a hook of the project passes (helper-55) ---------------------------------------------

RERUNS = """\
import pytest
from _pytest.runner import runtestprotocol

ATTEMPTS = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    # pytest-rerunfailures in a few lines: a failed attempt is reported as a rerun, then again
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for attempt in range(3):
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        failed = any(r.failed for r in reports)
        for report in reports:
            if failed and attempt < 2:
                report.outcome = "rerun"
            item.ihook.pytest_runtest_logreport(report=report)
        if not failed:
            break
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True
"""
QUARANTINES = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and item.name == "test_quarantined":
        report.outcome = "passed"
"""
ATTEMPTED = """\
import pytest

SEEN = []


def test_flaky():
    SEEN.append(1)
    assert len(SEEN) > 1


def test_quarantined():
    assert False


@pytest.mark.xfail(reason="known")
def test_known():
    assert False


def test_skipped():
    pytest.skip("not here")
"""


def test_the_watch_of_a_tests_end_leaves_the_test_function_as_it_is(tmp_path):
    """helper-59: where the project implements an outcome hook (an ordinary `pytest_runtest_setup`
    that skips slow tests), the probe watched the test function by putting a wrapper in its
    place, so `request.function` was the probe's and `inspect.getfile` of it named the probe's
    directory: a test reading its data beside it failed on both sides (a false clean)."""
    conftest = "def pytest_runtest_setup(item):\n    pass\n"
    tests = ("import inspect\n\n\ndef test_own(request):\n"
             "    assert request.function is test_own\n"
             "    assert inspect.getfile(request.function) == __file__\n")  # fmt: skip
    root = write(tmp_path / "project", {"conftest.py": conftest, "test_a.py": tests})
    record = Run(root, ["-q"], tmp_path / "rec", clean_env()).must_record()
    assert record.tests["test_a.py::test_own"].outcome == "passed"


@pytest.mark.parametrize("hook", ["quarantine", "reruns"])
def test_a_failure_a_hook_passes_is_recorded_and_a_rerun_that_passed_is_not(tmp_path, hook):
    conftest = QUARANTINES if hook == "quarantine" else RERUNS + "\n\n" + QUARANTINES
    root = write(tmp_path / "project", {"conftest.py": conftest, "test_a.py": ATTEMPTED})
    run = Run(root, ["-q"], tmp_path / "rec", clean_env())
    record = run.must_record()
    assert record.tests["test_a.py::test_quarantined"].outcome == "passed", run.stdout
    assert record.hidden == ["test_a.py::test_quarantined"], run.stdout


def test_an_earlier_unittest_sessions_verdict_is_no_test():
    """helper-75/77: a quiet session's `FAILED (failures=1)` before a verbose one's listing
    was read as a test `failures=1.FAILED`."""
    text = (
        "F\n" + "=" * 70 + "\nFAIL: test_add (a.T.test_add)\n" + "-" * 70 + "\n"
        "AssertionError: 1 != 3\n\n" + "-" * 70 + "\nRan 1 test in 0.001s\n\n"
        "FAILED (failures=1)\n"
        "test_other (b.U.test_other) ... ok\n\n" + "-" * 70 + "\nRan 1 test in 0.000s\n\nOK\n"
    )
    record = read_unittest(text)
    assert not any("FAILED" in test for test in record.collected), record.collected
    assert "b.U.test_other" in record.collected, record.collected
