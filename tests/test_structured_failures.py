"""The failure is the exception, not the text around it; edited tests run as the change wrote
them (issue 20, points 3 and 5).

`fails_as_claimed` and the `implicit` oracle read the failure the runner recorded (the exception
chain's types and messages, the raising frame), never pytest's echo of the arguments or locals,
nor what a test printed. A test file the change edited runs as the change wrote it on the base
too, so a test the change made stricter is no finding the change introduced. Real repositories,
real runs, findings from a file.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from eyeful.failures import Failure, same_failure
from eyeful.implicit import not_runtime
from tests.conftest import seal
from tests.gitrepo import PYTEST, PYTHON, confirm, eyeful, eyeful_config, make_repo, stage

README = "# calc\n\nadd returns the sum of its arguments.\nsub returns the difference of a and b.\n"
SPEC_ADD = {"kind": "specified", "quote": "add returns the sum of its arguments",
            "source": "README.md"}  # fmt: skip
SPEC_SUB = {"kind": "specified", "quote": "sub returns the difference of a and b",
            "source": "README.md"}  # fmt: skip
IMPLICIT = {"kind": "implicit"}

BASE_CALC = (
    "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
    "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n"
)
# add grows a required keyword argument (old calls raise TypeError), sub adds, mean of nothing
# divides by zero in calc.py.
CHANGE_CALC = (
    "def add(a, b, *, carry):\n    return a + b + carry\n\n\ndef sub(a, b):\n    return a + b\n"
    "\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n"
)
# A test helper in the test directory: the error it raises is the test's own verdict.
HELPERS = (
    "def expect(value, want):\n    if value != want:\n"
    "        raise LookupError(f'expected {want}, got {value}')\n"
)


def _finding(fid: str, oracle: dict, repro: dict, **over: object) -> dict:
    finding = {
        "id": fid, "expert": "correctness", "severity": "error", "evidence": "test",
        "path": "calc.py", "line": 1, "title": fid, "body": fid, "oracle": oracle,
        "repro": repro,
    }  # fmt: skip
    finding.update(over)
    return finding


def _new(path: str, code: str, fails: str) -> dict:
    return {"path": path, "code": code, "fails": fails}


def _review(repo: Path, root: Path, findings: list[dict]) -> dict:
    path = root / "findings.json"
    path.write_text(json.dumps(findings), encoding="utf-8")
    proc = eyeful("--findings", str(path), "--format", "json", cwd=repo, timeout=900)
    assert proc.returncode in (0, 1, 3), proc.stderr
    return json.loads(proc.stdout)


def _by_id(report: dict) -> dict[str, dict]:
    return {f["id"]: f for f in report["findings"]}


def _gates(finding: dict) -> dict[str, str]:
    return {g["name"]: g["status"] for g in finding["gates"]}


def _change_runs(finding: dict) -> list[dict]:
    return [r for r in finding["runs"] if r["side"] == "change" and r["name"] == "test_one"]


# --- one pytest repository, many findings --------------------------------------------------


@pytest.fixture(scope="module")
def calc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        root = tmp_path_factory.mktemp("calc")
        repo = make_repo(
            root / "repo",
            {
                "pyproject.toml": eyeful_config(test_one=f"{PYTEST} {{test}}"),
                # --showlocals: pytest's traceback shows each frame's locals, as many projects ask
                "pytest.ini": "[pytest]\npythonpath = .\naddopts = --showlocals\n",
                "README.md": README,
                "calc.py": BASE_CALC,
                "tests/__init__.py": "",
                "tests/helpers.py": HELPERS,
                "tests/test_calc.py": "from calc import sub\n\n\ndef test_sub():\n"
                "    assert sub(3, 1) == 2\n",
            },
        )
        confirm(repo)
        stage(repo, {"calc.py": CHANGE_CALC})
        findings = [
            # The fails text is only a parametrize argument (pytest prints the test function's
            # arguments in its traceback); the failure is a TypeError: add now needs `carry`.
            _finding("param", SPEC_ADD, _new(
                "tests/test_param.py",
                "import pytest\n\nfrom calc import add\n\n\n"
                "@pytest.mark.parametrize('why', ['add returns a wrong sum'])\n"
                "def test_add(why):\n    assert add(1, 2) == 3, why\n",
                "add returns a wrong sum")),
            # The fails text is only a local variable (--showlocals prints it).
            _finding("local", SPEC_ADD, _new(
                "tests/test_local.py",
                "from calc import add\n\n\ndef test_add():\n"
                "    why = \"add returns a wrong sum\"\n    assert add(1, 2) == 3, why\n",
                "add returns a wrong sum")),
            # implicit, but the error is raised by the test's own helper (tests/helpers.py).
            _finding("helper", IMPLICIT, _new(
                "tests/test_helper.py",
                "from calc import sub\nfrom tests.helpers import expect\n\n\n"
                "def test_sub():\n    expect(sub(3, 1), 2)\n",
                "LookupError")),
            # Genuine: the message the test writes, a specified oracle.
            _finding("quoted", SPEC_SUB, _new(
                "tests/test_quoted.py",
                "from calc import sub\n\n\ndef test_sub():\n"
                "    assert sub(3, 1) == 2, 'sub does not subtract'\n",
                "sub does not subtract")),
            # Genuine: a runtime error raised in the project's code (calc.py), implicit.
            _finding("runtime", IMPLICIT, _new(
                "tests/test_runtime.py",
                "from calc import mean\n\n\ndef test_mean_of_nothing():\n"
                "    assert mean([]) == 0.0\n",
                "ZeroDivisionError")),
        ]  # fmt: skip
        return _by_id(_review(repo, root, findings))


def test_fails_text_seen_only_as_a_parametrize_argument_does_not_block(calc):
    found = calc["param"]
    runs = _change_runs(found)
    assert "add returns a wrong sum" in runs[0]["failure"]["text"]  # pytest did print it
    assert found["kind"] != "fail" and found["label"] != "issue (blocking)", found
    assert _gates(found)["fails_as_claimed"] == "fail"
    assert all(r["failure"]["type"] == "TypeError" and r["fails_seen"] is False for r in runs)


def test_fails_text_seen_only_as_a_local_variable_does_not_block(calc):
    found = calc["local"]
    runs = _change_runs(found)
    assert "why" in runs[0]["failure"]["text"]  # --showlocals printed the local
    assert found["kind"] != "fail" and found["label"] != "issue (blocking)", found
    assert _gates(found)["fails_as_claimed"] == "fail"
    assert all(r["failure"]["type"] == "TypeError" and r["fails_seen"] is False for r in runs)


def test_implicit_is_not_granted_to_an_error_the_tests_own_helper_raises(calc):
    found = calc["helper"]
    assert _gates(found)["fails_as_claimed"] == "pass"  # the LookupError did happen
    assert _change_runs(found)[0]["failure"]["raised_in"] == "tests/helpers.py"
    assert found["oracle"]["graded"] == "human", found["oracle"]
    assert "tests/helpers.py" in found["oracle"]["note"]
    assert found["kind"] == "review"


def test_a_quoted_finding_whose_test_writes_the_fails_text_still_blocks(calc):
    found = calc["quoted"]
    assert (found["kind"], found["label"]) == ("fail", "issue (blocking)"), found
    assert all(r["fails_seen"] is True for r in _change_runs(found))


def test_a_runtime_error_in_the_projects_code_still_blocks_as_implicit(calc):
    found = calc["runtime"]
    assert found["oracle"]["graded"] == "implicit", found["oracle"]
    assert (found["kind"], found["label"]) == ("fail", "issue (blocking)"), found
    assert _change_runs(found)[0]["failure"]["raised_in"] == "calc.py"


# --- unittest -b: what a test printed is buffered into its failure's text -------------------

UT_REPRO = """import unittest

from calc import sub


class TestSub(unittest.TestCase):
    def test_sub(self):
        print('sub is broken here')
        self.assertEqual(sub(3, 1), 2)
"""


def test_fails_text_only_in_unittests_buffered_output_does_not_block(tmp_path):
    unittest = f"{shlex.quote(PYTHON)} -m unittest -b"
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(unittest, test_one=f"{unittest} {{test}}"),
            "README.md": README,
            "calc.py": BASE_CALC,
            "tests/__init__.py": "",
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": CHANGE_CALC})
    finding = _finding(
        "buffered", SPEC_SUB, _new("tests/test_buffered.py", UT_REPRO, "sub is broken here")
    )
    found = _by_id(_review(repo, tmp_path, [finding]))["buffered"]
    runs = _change_runs(found)
    assert runs, json.dumps({k: found[k] for k in ("unverified", "gates")})
    assert "sub is broken here" in runs[0]["tail"]  # -b printed it with the failure
    assert found["kind"] != "fail" and found["label"] != "issue (blocking)", found
    assert _gates(found)["fails_as_claimed"] == "fail"
    assert runs[0]["failure"]["type"] == "AssertionError"


# --- a test that kills itself ---------------------------------------------------------------

SELF_KILL = """import os
import signal

from calc import sub


def test_sub():
    if sub(3, 1) != 2:
        os.kill(os.getpid(), signal.SIGSEGV)
"""


def test_implicit_is_not_granted_to_a_test_that_kills_itself_with_a_signal(tmp_path):
    # Read from text (the probe unloaded): pytest's faulthandler names the test's own frame.
    bare = f"env -u PYTEST_PLUGINS -u PYTEST_ADDOPTS {PYTEST}"
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(bare, test_one=f"{bare} {{test}}"),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": BASE_CALC,
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": CHANGE_CALC})
    finding = _finding(
        "signal", IMPLICIT, _new("tests/test_signal.py", SELF_KILL, "Segmentation fault")
    )
    found = _by_id(_review(repo, tmp_path, [finding]))["signal"]
    assert _gates(found)["fails_as_claimed"] == "pass", json.dumps(found["gates"])
    assert found["oracle"]["graded"] != "implicit", found
    assert found["kind"] != "fail" and found["label"] != "issue (blocking)", found


def test_a_crash_the_test_signals_itself_is_not_runtime():
    crash = Failure(type=None, message="Fatal Python error: Segmentation fault",
                    text="Fatal Python error: Segmentation fault\n", kind="crash")  # fmt: skip
    assert not_runtime(crash, "tests/test_x.py", test_file=SELF_KILL) is not None
    assert not_runtime(crash, "tests/test_x.py", test_file="def test(): crash()\n") is None


# --- edited tests run as the change wrote them ----------------------------------------------

STRICT_BASE_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
STRICT_CHANGE_TEST = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    "    assert isinstance(add(2, 3), float), 'add must return a float'\n"
)
STRICT_FIX = """--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return b + a
+    return float(b + a)
"""


def test_a_derived_finding_on_a_test_the_change_made_stricter_is_pre_existing(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(test_one=f"{PYTEST} {{test}}"),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_calc.py": STRICT_BASE_TEST,
        },
    )
    confirm(repo)
    # The code's behaviour is unchanged; the test asks more of it.
    stage(repo, {"calc.py": "def add(a, b):\n    return b + a\n",
                 "tests/test_calc.py": STRICT_CHANGE_TEST})  # fmt: skip
    repro = {"path": "tests/test_calc.py", "test": "tests/test_calc.py::test_add",
             "fails": "add must return a float"}  # fmt: skip
    finding = _finding("stricter", {"kind": "derived"}, repro, fix={"diff": STRICT_FIX})
    report = _review(repo, tmp_path, [finding])
    found = _by_id(report)["stricter"]
    assert found["kind"] != "fail" and found["label"] != "issue (blocking)", found
    assert found["fix_verified"] is False
    assert found["label"] == "note (pre-existing)"
    assert _gates(found)["introduced"] == "fail"
    base = [r for r in found["runs"] if r["side"] == "base"]
    assert base and all(r["fails_seen"] for r in base)
    # The regression and the finding say the same thing of the same test.
    kinds = {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}
    assert kinds == {"tests/test_calc.py::test_add": "pre_existing"}, kinds


BOX = "class Box:\n    def __init__(self, value):\n        self.value = value\n"
EDITED_BASE_TEST = (
    "from calc import Box\n\n\ndef test_box(tmp_path):\n    box = Box(1)\n"
    "    assert box.value == 1\n"
)
# The change's version fails on both codes, its message holding an address and a tmp_path.
EDITED_CHANGE_TEST = (
    "from calc import Box\n\n\ndef test_box(tmp_path):\n    box = Box(1)\n"
    "    assert box.value == 1\n"
    "    assert hasattr(box, 'label'), f'{box!r} has no label (in {tmp_path})'\n"
)


def test_an_edited_test_failing_with_an_address_and_a_tmp_path_still_fails_exactly_as_on_the_change(
    tmp_path,
):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(test_one=f"{PYTEST} {{test}}"),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": BOX,
            "tests/test_box.py": EDITED_BASE_TEST,
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": BOX + "\n\nVERSION = 2\n", "tests/test_box.py": EDITED_CHANGE_TEST})
    proc = eyeful("--format", "json", cwd=repo, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    kinds = {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}
    assert kinds == {"tests/test_box.py::test_box": "pre_existing"}, kinds
    assert not report["regressions"]
    assert proc.returncode == 0


def test_same_failure_ignores_addresses_temporary_paths_and_object_ids():
    def failure(message: str, raised_in: str = "tests/test_box.py") -> Failure:
        chain = [f"AssertionError: {message}"]
        return Failure(type="AssertionError", message=message, text=message, kind="assertion",
                       raised_in=raised_in, source="probe", chain=chain)  # fmt: skip

    box = "<calc.Box object at 0x{}> in /tmp/pytest-of-me/pytest-{}/test_box0 id={}"
    a = failure(box.format("7f3a2b1c9d50", 3, 140234567891234))
    b = failure(box.format("7f11aa22bb90", 7, 139876543219876))
    assert same_failure(a, b)
    wt = "/r/.git/eyeful/worktrees/wt-{}/data/x.txt missing"
    assert same_failure(failure(wt.format(1)), failure(wt.format(4)))
    assert not same_failure(a, failure("<calc.Box object at 0x7f11aa22bb90> has no value"))
    assert not same_failure(a, failure(a.message, raised_in="calc.py"))


def test_a_derived_finding_in_an_edited_file_the_base_cannot_import_still_blocks(tmp_path):
    """The change breaks add and adds `double` with its test to the same file: the change's
    version of the file cannot import on the base, so it says nothing there, and the base's own
    copy decides: test_add passed there, the change broke it."""
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(test_one=f"{PYTEST} {{test}}"),
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "calc.py": "def add(a, b):\n    return a + b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
            "    assert add(2, 3) == 5, 'add does not add'\n",
        },
    )
    confirm(repo)
    stage(repo, {
        "calc.py": "def add(a, b):\n    return a - b\n\n\ndef double(a):\n    return 2 * a\n",
        "tests/test_calc.py": "from calc import add, double\n\n\ndef test_add():\n"
        "    assert add(2, 3) == 5, 'add does not add'\n\n\ndef test_double():\n"
        "    assert double(2) == 4\n",
    })  # fmt: skip
    repro = {"path": "tests/test_calc.py", "test": "tests/test_calc.py::test_add",
             "fails": "add does not add"}  # fmt: skip
    found = _by_id(_review(repo, tmp_path, [_finding("broken", {"kind": "derived"}, repro)]))
    assert (found["broken"]["kind"], found["broken"]["label"]) == ("fail", "issue (blocking)")
    assert _gates(found["broken"])["introduced"] == "pass"


def test_a_failure_raised_in_a_library_is_one_failure_whichever_worktrees_virtualenv_ran_it(
    tmp_path,
):
    """With a setup, each worktree has its own virtualenv: pytest.raises' `Failed` (raised in
    `_pytest/outcomes.py`) comes from `.../venvs/wt-0/...` in one run and `.../venvs/wt-1/...` in
    the next. Seen on itsdangerous: every such regression was taken for failing differently alone
    than in the suite and confirmed again in its file and in the suite, for nothing."""
    from eyeful.evidence import failure_of
    from eyeful.records import ChainLink, FailureRecord, Location

    def seen(worktree: int) -> Failure:
        site = tmp_path / f"eyeful/venvs/wt-{worktree}/lib/python3.11/site-packages"
        record = FailureRecord(
            chain=[ChainLink(type="Failed", message="DID NOT RAISE BadSignature")],
            crash_message="Failed: DID NOT RAISE BadSignature",
            raised_in=Location(file=str(site / "_pytest/outcomes.py"), line=162),
        )
        return failure_of(record, root=tmp_path / f"eyeful/worktrees/wt-{worktree}")

    assert seen(0).raised_in == seen(1).raised_in == "<site-packages>/_pytest/outcomes.py"
    assert same_failure(seen(0), seen(1))


def test_numbers_set_aside_for_a_cause_include_their_sign_and_decimals():
    """`assert -4 == 4` and `assert 0 == 2` at one line are one cause (seen in the README's
    quick start: a negative result made a second item); a name's digits are kept."""
    from eyeful.failures import cause

    def at_line_8(message: str) -> Failure:
        return Failure(type="AssertionError", message=message, text=message, kind="assertion",
                       raised_in="tests/test_calc.py", raised_line=8, source="probe",
                       chain=[f"AssertionError: {message}"])  # fmt: skip

    one = {cause(at_line_8(m)) for m in ("assert -4 == 4", "assert 0 == 2", "assert 1.5 == +2")}
    assert len(one) == 1, one
    assert cause(at_line_8("v1 is not v2")) != cause(at_line_8("v3 is not v4"))
    # A number with its unit (a duration), and the commit `git describe` names (the change's
    # checkout is another commit than the base's): one cause on both sides.
    timed = {cause(at_line_8(f"too slow: took {t}s")) for t in ("0.010084", "0.010311")}
    assert len(timed) == 1, timed
    built = {cause(at_line_8(f"untagged build v1.0-{n}")) for n in ("1-g96b7b3b", "2-gab12cd3")}
    assert len(built) == 1, built


def test_a_cause_raised_in_a_library_is_placed_at_the_repositorys_last_frame(tmp_path):
    """pytest.raises' `Failed: DID NOT RAISE` is raised in `_pytest/outcomes.py` for every test
    that uses it: two tests expecting it at different lines of the repository are two causes
    (itsdangerous: test_bad_signature_exception and test_changed_value were one item), and the
    report places each at the repository's line."""
    from eyeful.evidence import failure_of
    from eyeful.failures import cause
    from eyeful.records import ChainLink, FailureRecord, Frame, Location

    site = "/venv/lib/python3.11/site-packages/_pytest"

    def failed_at(line: int) -> Failure:
        record = FailureRecord(
            chain=[ChainLink(type="Failed", message="DID NOT RAISE BadSignature")],
            crash_message="Failed: DID NOT RAISE BadSignature",
            frames=[
                Frame(file=str(tmp_path / "tests/test_s.py"), line=line, function="test_x"),
                Frame(file=f"{site}/raises.py", line=699, function="__exit__"),
                Frame(file=f"{site}/outcomes.py", line=162, function="__call__"),
            ],
            raised_in=Location(file=f"{site}/outcomes.py", line=162),
        )
        return failure_of(record, root=tmp_path)

    assert failed_at(74).in_repository == "tests/test_s.py:74"
    assert cause(failed_at(74)) == cause(failed_at(74)) != cause(failed_at(68))


def test_same_failure_sets_numbers_aside_and_keeps_types_and_raising_lines_apart():
    def failure(message: str, type_: str = "AssertionError", line: int = 8) -> Failure:
        return Failure(type=type_, message=message, text=message, kind="assertion",
                       raised_in="tests/test_add.py", raised_line=line, source="probe",
                       chain=[f"{type_}: {message}"])  # fmt: skip

    a = failure("add(-1, 1) is not 0 at 12.5071")
    assert same_failure(a, failure("add(-1, 1) is not 0 at 13.0002"))
    assert not same_failure(a, failure(a.message, type_="ValueError"))
    assert not same_failure(a, failure(a.message, line=9))
    assert not same_failure(a, failure("add(-1, 1) gave a string at 12.5071"))


def test_one_failure_whose_set_or_dict_diff_is_ordered_by_string_hashing_is_the_same():
    """pytest lists a set's or a dict's differing items in the order the process's string
    hashing gives (PYTHONHASHSEED is random): one failure, seen alone and in the suite, read as
    two, and the regression went through three contexts (six more suite runs) for nothing."""

    def seen(message: str, explanation: list[str]) -> Failure:
        text = "\n".join([message, *explanation])
        return Failure(type="AssertionError", message=message, text=text, kind="assertion",
                       raised_in="tests/test_f.py", raised_line=4, source="probe",
                       chain=[f"AssertionError: {text}"])  # fmt: skip

    one = seen("assert {'cat', 'dog', 'eel'} == {'ant'}", ["Extra items in the left set:",
                                                          "'dog'", "'cat'", "'eel'"])  # fmt: skip
    two = seen("assert {'eel', 'cat', 'dog'} == {'ant'}", ["Extra items in the left set:",
                                                          "'cat'", "'eel'", "'dog'"])  # fmt: skip
    assert same_failure(one, two)
    other = seen("assert {'eel', 'cat', 'dog'} == {'bee'}", ["Extra items in the left set:",
                                                            "'cat'", "'eel'", "'dog'"])  # fmt: skip
    assert not same_failure(one, other)
