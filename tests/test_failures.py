"""A verdict rests on the failure that happened (issue 7, points 1, 2 and 6).

Real repositories, real pytest runs (with pytest-timeout installed, so its `plugins:` header line
names "timeout"), findings from a file so the reproductions are exactly the issue's cases.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from eyeful.failures import Failure, SectionScanner, describe, scrub
from eyeful.implicit import not_runtime
from eyeful.results import is_pytest_command, parse_junit
from tests.conftest import seal
from tests.core import review
from tests.gitrepo import PYTEST, PYTHON, confirm, eyeful_config, git, make_repo, write

# No -q: pytest prints its header ("plugins: ... timeout-2.4.0 ...") as many projects' do.
# Behind `env`, as the wrapper case: eyeful must still ask pytest for a JUnit report.
# The suite's conftest turns plugin autoloading off for project commands; this one needs
# pytest-timeout's header line, so it loads that plugin by its entry-point name (`-p timeout`),
# which prints the same "plugins: timeout-2.4.0" line. (Autoloading every installed plugin
# instead, xdist and anyio too, costs ~0.3 s more per run, over ~60 runs.)
TEST_ONE = (
    f"env EYEFUL_CASE=1 {shlex.quote(PYTHON)} -m pytest -p no:cacheprovider -p timeout {{test}}"
)

README = "# calc\n\nadd returns the sum of its arguments.\nsub returns the difference of a and b.\n"
BASE_CALC = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
# The change: add grows a required keyword argument (calls without it raise TypeError in the
# caller), sub adds.
CHANGE_CALC = (
    "def add(a, b, *, carry):\n    return a + b + carry\n\n\ndef sub(a, b):\n    return a + b\n"
)


def _finding(fid: str, oracle: dict, path: str, code: str, fails: str) -> dict:
    return {
        "id": fid,
        "expert": "correctness",
        "severity": "error",
        "evidence": "test",
        "path": "calc.py",
        "line": 1,
        "title": fid,
        "body": fid,
        "oracle": oracle,
        "repro": {"path": path, "code": code, "fails": fails},
    }


SPEC_ADD = {"kind": "specified", "quote": "add returns the sum of its arguments",
            "source": "README.md"}  # fmt: skip
SPEC_SUB = {"kind": "specified", "quote": "sub returns the difference of a and b",
            "source": "README.md"}  # fmt: skip
IMPLICIT = {"kind": "implicit"}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    # Module-scoped (one eyeful run for all these tests), so sealed here as conftest's
    # `hermetic` seals each test.
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        return _review(tmp_path_factory.mktemp("failures"))


def _review(root: Path) -> dict:
    # The review's TMPDIR, shared by its reproduction runs (the only place outside a worktree a
    # sandboxed reproduction may write).
    counter = "os.path.join(os.environ['TMPDIR'], 'flaky-base-counter')"
    repo = make_repo(
        root / "repo",
        {
            "pyproject.toml": eyeful_config(test_one=TEST_ONE, extra="repro_runs = 2"),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "README.md": README,
            "calc.py": BASE_CALC,
            "tests/test_calc.py": "from calc import sub\n\n\ndef test_sub():\n"
            "    assert sub(3, 1) == 2\n",
        },
    )
    confirm(repo)
    write(repo, {"calc.py": CHANGE_CALC})
    git(repo, "add", "-A")
    findings = [
        # Case 1: the fails text is only in pytest's echo of the source; the failure is a
        # TypeError (add now needs `carry`).
        _finding("echoed", SPEC_ADD, "tests/test_echoed.py",
                 "from calc import add\n\n\ndef test_negatives():\n"
                 "    assert add(-1, -2) == -3, 'add returns the wrong sum for negatives'\n",
                 "add returns the wrong sum for negatives"),
        # Case 2: "timeout" is only in pytest's header (plugins: ... timeout-2.4.0).
        _finding("header", IMPLICIT, "tests/test_header.py",
                 "from calc import sub\n\n\ndef test_sub_big():\n    assert sub(100, 3) == 97\n",
                 "timeout"),
        # Case 2: an assertion in disguise: the test's own code raises the KeyError.
        _finding("disguised", IMPLICIT, "tests/test_disguised.py",
                 "from calc import sub\n\n\ndef test_sub():\n"
                 "    if sub(3, 1) != 2: {}['sub is wrong']\n",
                 "KeyError"),
        # Adversarial: the test prints the fails text, then fails differently.
        _finding("printed", SPEC_SUB, "tests/test_printed.py",
                 "from calc import sub\n\n\ndef test_sub():\n    print('sub is broken here')\n"
                 "    assert sub(3, 1) == 2\n",
                 "sub is broken here"),
        # Point 6: the problem is there on the base too, in some runs only.
        _finding("flaky-base", SPEC_SUB, "tests/test_flaky_base.py",
                 "import os\n\nfrom calc import sub\n\n\ndef test_sub():\n"
                 f"    fd = os.open({counter}, os.O_WRONLY | os.O_APPEND | os.O_CREAT)\n"
                 "    os.write(fd, b'x')\n    os.close(fd)\n"
                 f"    runs = os.path.getsize({counter})\n"
                 "    assert sub(3, 1) == 2 and runs <= 3, 'sub is unreliable'\n",
                 "sub is unreliable"),
        # The rule still lets a real one through: the message the test writes, in its failure.
        _finding("genuine", SPEC_SUB, "tests/test_genuine.py",
                 "from calc import sub\n\n\ndef test_sub():\n"
                 "    assert sub(3, 1) == 2, 'sub does not subtract'\n",
                 "sub does not subtract"),
    ]  # fmt: skip
    path = root / "findings.json"
    path.write_text(json.dumps(findings), encoding="utf-8")
    # ~30 short pytest runs (two on each side per finding): slow only on a loaded machine.
    proc = review(repo, findings=path, format="json")
    assert proc.exit_code in (0, 1), proc.stderr
    out = json.loads(proc.stdout)
    return {f["id"]: f for f in out["findings"]}


def _gates(finding: dict) -> dict[str, str]:
    return {g["name"]: g["status"] for g in finding["gates"]}


def _change_runs(finding: dict) -> list[dict]:
    return [r for r in finding["runs"] if r["side"] == "change" and r["name"] == "test_one"]


def test_fails_text_in_echoed_source_is_not_the_failure(report):
    found = report["echoed"]
    assert found["kind"] == "review", found
    assert _gates(found)["fails_as_claimed"] == "fail"
    assert "TypeError" in found["unverified"]
    for run in _change_runs(found):
        assert run["fails_seen"] is False
        assert run["failure"]["type"] == "TypeError"
        assert "carry" in run["failure"]["message"]
        assert run["failure"]["source"] == "probe"  # pytest behind `env`: the probe's record
        assert run["failure"]["raised_in"] == "tests/test_echoed.py"
        assert "'add returns the wrong sum" not in run["failure"]["text"]


def test_text_in_pytest_header_is_not_the_failure(report):
    found = report["header"]
    assert "timeout-" in _change_runs(found)[0]["tail"]  # the header is really there
    assert found["kind"] == "review"
    assert _gates(found)["fails_as_claimed"] == "fail"
    assert found["oracle"]["graded"] == "human"
    run = _change_runs(found)[0]
    assert run["failure"]["kind"] == "assertion"
    assert run["fails_seen"] is False


def test_error_raised_by_the_test_itself_is_not_implicit(report):
    found = report["disguised"]
    assert _gates(found)["fails_as_claimed"] == "pass"  # the KeyError did happen
    assert found["oracle"]["graded"] == "human"
    assert "own code raised KeyError" in found["oracle"]["note"]
    assert found["kind"] == "review"
    assert _change_runs(found)[0]["failure"]["raised_in"] == "tests/test_disguised.py"


def test_printed_fails_text_then_another_failure_is_not_the_claim(report):
    found = report["printed"]
    assert "sub is broken here" in _change_runs(found)[0]["tail"]  # printed, in the output
    assert _gates(found)["fails_as_claimed"] == "fail"
    assert found["kind"] == "review"


def test_base_runs_as_often_as_the_change_and_any_same_failure_is_pre_existing(report):
    found = report["flaky-base"]
    base = [r for r in found["runs"] if r["side"] == "base"]
    assert len(base) == len(_change_runs(found)) == 2  # repro_runs, not the default 5
    assert any(r["fails_seen"] for r in base)
    assert any(r["status"] == "PASSED" for r in base)
    assert _gates(found)["introduced"] == "fail"
    assert found["label"] == "note (pre-existing)"
    assert found["kind"] == "review"


def test_the_failure_the_test_writes_still_blocks(report):
    found = report["genuine"]
    assert (found["kind"], found["label"]) == ("fail", "issue (blocking)")
    run = _change_runs(found)[0]
    assert run["fails_seen"] is True
    assert run["failure"]["kind"] == "assertion"
    assert [r["status"] for r in found["runs"] if r["side"] == "base"] == ["PASSED"] * 2


# --- reading failures from real pytest runs, without eyeful around them ----------------------

SAMPLE = """import sys

from helper import boom


def test_echo():
    assert len('abc') == 2, 'the length is wrong'


def test_disguised():
    if 1 + 1 != 3: {}['sums are wrong']


def test_outside():
    boom()


def test_printed():
    print('the length is wrong')
    assert 1 == 2


def test_exec():
    exec("if 1 + 1 != 3: {}['sums are wrong']")


def test_stdlib():
    import json
    json.loads('{' if 1 + 1 != 3 else '{}')
"""
HELPER = "def boom():\n    raise RuntimeError('boom from the helper')\n"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("sample")
    (root / "helper.py").write_text(HELPER, encoding="utf-8")
    (root / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    proc = subprocess.run(
        [PYTHON, "-m", "pytest", "-p", "no:cacheprovider", "--junitxml=r.xml",
         "-o", "junit_family=xunit1", "test_sample.py"],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    scanner = SectionScanner()
    for line in proc.stdout.splitlines():
        scanner.feed(line)
    junit: dict = {}
    parse_junit(root / "r.xml", junit)
    return {"output": proc.stdout, "sections": scanner.sections, "junit": junit}


@pytest.mark.parametrize("source", ["junit", "sections"])
def test_each_failure_is_read_with_its_raising_frame(sample, source):
    if source == "junit":
        got = {k.split("::")[-1]: v for k, v in sample["junit"].items()}
    else:
        got = {k: describe(v) for k, v in sample["sections"].items()}
    assert set(got) == {
        "test_echo", "test_disguised", "test_outside", "test_printed", "test_exec", "test_stdlib"
    }  # fmt: skip
    # Adversarial: an error the test provokes through exec or the standard library is raised
    # outside the test file, but its traceback never reaches the repository's code.
    in_repo = {"helper.py", "test_sample.py", "pytest.ini"}.__contains__
    for name in ("test_exec", "test_stdlib"):
        assert got[name].raised_in != "test_sample.py"
        assert "repository's code" in not_runtime(got[name], "test_sample.py", in_repo)
    assert not_runtime(got["test_outside"], "test_sample.py", in_repo) is None
    # A repository with files named like the standard library's (`decoder.py`, `__init__.py`):
    # the standard library's own frames (absolute, outside any checkout) are still not its code.
    lookalikes = {"helper.py", "test_sample.py", "decoder.py", "__init__.py", "json/decoder.py"}
    assert "repository's code" in not_runtime(
        got["test_stdlib"], "test_sample.py", lookalikes.__contains__
    )
    assert got["test_echo"].kind == "assertion"
    # Absolute frames (a runner that prints them, unittest say) count inside eyeful's checkouts.
    checkout = "/home/u/proj/.git/eyeful/worktrees/wt-1"
    for where, counts in ((checkout, True), ("/usr/lib/python3.11", False),
                          (f"{checkout}/.venv/lib/python3.11/site-packages", False)):  # fmt: skip
        failure = Failure(
            type="KeyError", message="'x'", kind="exception", raised_in=f"{where}/helper.py",
            frames=[f"{checkout}/test_sample.py", f"{where}/helper.py"],
        )  # fmt: skip
        said = not_runtime(failure, "test_sample.py", in_repo)
        assert (said is None) == counts, (where, said)
    assert got["test_disguised"].type == "KeyError"
    assert got["test_disguised"].raised_in == "test_sample.py"
    assert not_runtime(got["test_disguised"], "test_sample.py") is not None
    assert got["test_outside"].type == "RuntimeError"
    assert got["test_outside"].raised_in.endswith("helper.py")
    assert not_runtime(got["test_outside"], "test_sample.py") is None
    assert not_runtime(got["test_echo"], "test_sample.py") is not None
    # What the test printed is not in its failure; the message its assert writes is.
    assert "the length is wrong" not in scrub(got["test_printed"].text, SAMPLE)
    assert "the length is wrong" in scrub(got["test_echo"].text, SAMPLE)
    assert "'the length is wrong'" not in scrub(got["test_echo"].text, SAMPLE)


def test_scrub_removes_only_lines_of_the_test_file():
    failure = describe(">       assert f(1) == 2, 'f is off'\nE       AssertionError: f is off\n"
                       "E       assert 3 == 2\n\nt.py:4: AssertionError")  # fmt: skip
    cleaned = scrub(failure.text, "def test():\n    assert f(1) == 2, 'f is off'\n")
    assert "assert f(1)" not in cleaned
    assert "E       AssertionError: f is off" in cleaned
    assert failure.raised_in == "t.py" and failure.type == "AssertionError"


def test_go_sections_and_panics():
    scanner = SectionScanner()
    output = [
        "=== RUN   TestA", "    a_test.go:9: want 2, got 3", "--- FAIL: TestA (0.00s)",
        "=== RUN   TestB", "--- PASS: TestB (0.00s)", "=== RUN   TestC",
        "--- FAIL: TestC (0.00s)",
        "panic: runtime error: index out of range [5] with length 3 [recovered]",
        "goroutine 7 [running]:", "testing.tRunner.func1.2({0x1})",
        "\t/usr/local/go/src/testing/testing.go:1545 +0x238",
        "example.com/m.pick(...)", "\t/src/m/pick.go:4 +0x1d", "FAIL\texample.com/m\t0.005s",
    ]  # fmt: skip
    for line in output:
        scanner.feed(line)
    sections = scanner.sections
    assert set(sections) == {"TestA", "TestC"}
    a, c = describe(sections["TestA"]), describe(sections["TestC"])
    assert a.raised_in == "a_test.go" and a.message == "want 2, got 3"
    assert not_runtime(a, "a_test.go") is not None
    assert (c.type, c.raised_in) == ("panic", "/src/m/pick.go")
    assert not_runtime(c, "m/pick_test.go") is None


@pytest.mark.parametrize(
    ("command", "wanted"),
    [
        ("env X=1 python -m pytest -q -x", True),
        ("env -u HOME X=1 uv run pytest", True),
        ("python -m pytest", True),
        ("uv run pytest -q", True),
        ("tox -e py -- -q", True),
        ("tox -e py", False),  # posargs cannot be passed
        ("env --split-string='a b' pytest", False),
        ("tox -- --junitxml=x.xml", False),
    ],
)
def test_pytest_is_recognised_behind_wrappers(command, wanted):
    assert is_pytest_command(command) is wanted


# --- point 11: each regression shows its own failure -----------------------------------------

MANY_TESTS = (
    "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 2) == 4, 'add is off'\n\n\n"
    "def test_sub():\n"
    + "".join(f"    print('noise {n}')\n" for n in range(3))
    + "    assert sub(5, 3) == 2, 'sub is off'\n"
)


@pytest.mark.parametrize(
    "command",
    # A JUnit report, and output only (shell syntax; -rA names the passes on the base).
    [f"{PYTEST}", f"{PYTEST} -rA 2>&1"],
    ids=["junit", "output"],
)
def test_each_regression_shows_its_own_failure(tmp_path, command):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(command, test_one=f"{PYTEST} {{test}}"),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": BASE_CALC,
            "tests/test_calc.py": MANY_TESTS,
        },
    )
    confirm(repo)
    write(repo, {"calc.py": "def add(a, b):\n    return a * 3\n\n\ndef sub(a, b):\n"
                            "    return a + b\n"})  # fmt: skip
    git(repo, "add", "-A")
    proc = review(repo, format="json")
    assert proc.exit_code == 1, proc.stdout
    found = {r["test"].split("::")[-1]: r for r in json.loads(proc.stdout)["regressions"]}
    assert set(found) == {"test_add", "test_sub"}
    add, sub = found["test_add"], found["test_sub"]
    # test_sub's failure comes last in the output: it must not stand under test_add's name.
    assert "add is off" in add["excerpt"] and "sub is off" not in add["excerpt"]
    assert "sub is off" in sub["excerpt"] and "add is off" not in sub["excerpt"]
    # What the test printed is not its failure (its source, echoed by pytest, may show).
    assert "noise 0" not in [line.strip() for line in sub["excerpt"].splitlines()]
    assert add["message"].startswith("AssertionError: add is off")
