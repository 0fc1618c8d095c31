"""What the eval counts as verified (issue 25): the `reproduced` level (a finding a test showed:
its reproduction passed runs, not_flaky, fails_as_claimed and introduced), verified recall beside
reported recall, `--min-recall reproduced=X`, and mined reference findings whose `fails` text is
what the fix's test's exception said, so that they pass the gates. The mining test runs a real
history through `eyeful eval mine` and `eyeful eval`."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from eyeful.evaluate.cases import CaseFile, load_case
from eyeful.evaluate.judges import ReportView, judge, reaches, required_met
from eyeful.evaluate.mine import fails_text, feature_reason
from eyeful.evaluate.runner import (
    CaseResult,
    EvalResult,
    missed_thresholds,
    parse_min_recall,
    totals,
)
from eyeful.evaluate.table import to_markdown
from eyeful.failures import Failure
from eyeful.gates import GATE_NAMES
from eyeful.written import named_as_called, written_by_test
from tests.gitrepo import PYTEST, PYTEST_INI, eyeful_config
from tests.test_eval_mine import commit, sealed_env, sh


def gates(failing: str | None = None) -> list[dict]:
    out = []
    for name in GATE_NAMES:
        status = "pass" if name in GATE_NAMES[:4] else "not_reached"
        if failing is not None and GATE_NAMES.index(name) >= GATE_NAMES.index(failing):
            status = "fail" if name == failing else "not_reached"
        out.append({"name": name, "status": status, "detail": f"{name} said so"})
    return out


def finding(kind="review", label="question", path="a.py", line=3, **more) -> dict:
    return {"id": f"f{line}", "path": path, "line": line, "title": "t", "body": "b",
            "kind": kind, "label": label, **more}  # fmt: skip


def view(*findings: dict) -> ReportView:
    blocking = sum(f["kind"] == "fail" for f in findings)
    return ReportView.model_validate(
        {
            "outcome": "blocking" if blocking else "clean",
            "exit_code": 1 if blocking else 0,
            "blocking": blocking,
            "findings": list(findings),
        }
    )


def spec(**truth) -> CaseFile:
    return CaseFile.model_validate({"base": "HEAD~1", "change": "HEAD", **truth})


# The level ---------------------------------------------------------------------------------


def test_reproduced_is_the_four_showing_gates_whatever_the_oracle():
    shown, unshown = view(
        finding(gates=gates()), finding(line=4, gates=gates("fails_as_claimed"))
    ).findings
    # A question whose reproduction passed the four gates was shown by a test, human oracle or not.
    assert reaches(shown, "reproduced") and reaches(shown, "question")
    assert not reaches(unshown, "reproduced")
    assert reaches(unshown, "question")
    blocking = view(finding(kind="fail", label="issue (blocking)", gates=gates())).findings[0]
    assert reaches(blocking, "reproduced") and reaches(blocking, "blocking")
    # Past the gates but its test ran none of the change's lines: eyeful calls it unverified.
    elsewhere = finding(gates=gates(), unverified="its test ran none of the lines the change ...")
    assert not reaches(view(elsewhere).findings[0], "reproduced")
    # Pre-existing: introduced failed; a note is below a question anyway.
    note = finding(label="note (pre-existing)", gates=gates("introduced"))
    assert not reaches(view(note).findings[0], "reproduced")


def test_a_required_reproduced_finding_names_the_gate_that_did_not_hold():
    case = spec(required_findings=[{"path": "a.py", "claim": "", "at_least": "reproduced"}])
    report = view(finding(gates=gates("fails_as_claimed")))
    ok, why = required_met(case.required_findings[0], report.findings)
    assert not ok
    assert (
        why == "no test showed the findings there: 'f3' fails_as_claimed: fails_as_claimed said so"
    )
    (verdict,) = [v for v in judge(case, report, None) if v.judge == "required_findings"]
    assert verdict.status == "fail" and "at least reproduced" in verdict.reason
    shown = view(finding(gates=gates()))
    assert [v.status for v in judge(case, shown, None) if v.judge == "required_findings"] == [
        "pass"
    ]


def test_a_forbidden_floor_of_reproduced_forbids_a_test_showing_the_bait():
    case = spec(forbidden_findings=[{"path": "a.py", "claim": "", "floor": "reproduced"}])
    bad = {v.judge: v.status for v in judge(case, view(finding(gates=gates())), None)}
    fine = {v.judge: v.status for v in judge(case, view(finding(gates=gates("not_flaky"))), None)}
    assert bad["forbidden_findings"] == "fail" and fine["forbidden_findings"] == "pass"


# Recall, reported and verified -------------------------------------------------------------


def row(name: str, met: int, verified: int, total: int) -> CaseResult:
    return CaseResult(
        case=name, condition="execution", status="pass", judges=[], exit_code=0,
        required_met=met, required_verified=verified, required_total=total,
    )  # fmt: skip


def test_verified_recall_beside_reported_recall_and_its_threshold():
    (total,) = totals([row("a", 1, 1, 1), row("b", 1, 0, 1), row("c", 0, 0, 0)], ["execution"])
    assert (total.recall, total.verified_recall) == (1.0, 0.5)
    assert (total.required_met, total.required_verified, total.required_total) == (2, 1, 2)
    assert missed_thresholds([total], parse_min_recall(["reproduced=0.8"]), None) == [
        "execution: verified recall 0.500 < --min-recall reproduced=0.8"
    ]
    assert (
        missed_thresholds([total], parse_min_recall(["reported=1", "reproduced=0.5"]), None) == []
    )
    assert missed_thresholds([total], 1.0, None) == []  # the plain number: reported recall
    table = to_markdown(EvalResult(results=[], totals=[total]))
    assert "| reported recall | verified recall |" in table
    assert "| 1.00 (2/2), 2 cases | 0.50 (1/2) |" in table


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (["0.8"], {"reported": 0.8}),
        (["reproduced=1"], {"reproduced": 1.0}),
        (["0.5", "reproduced=0.8"], {"reported": 0.5, "reproduced": 0.8}),
    ],
)
def test_min_recall_forms(given, expected):
    assert parse_min_recall(given) == expected


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("verified=0.8", "give X, reported=X or reproduced=X (not 'verified')"),
        ("reproduced=high", "'high' is not a number"),
        ("1.5", "1.5 is not in [0, 1]"),
    ],
)
def test_a_bad_min_recall_is_refused(given, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_min_recall([given])


# The mined fails text -----------------------------------------------------------------------


def recorded(*chain: str, message: str | None = None) -> Failure:
    return Failure(type=chain[0].split(":")[0], message=message or chain[0].splitlines()[0],
                   source="probe", chain=list(chain))  # fmt: skip


def test_the_fails_text_is_what_the_exception_said_and_the_test_wrote():
    code = "def test_a():\n    assert add(2, 3) == 5, 'add is off'\n"
    said = recorded("AssertionError: add is off\nassert -1 == 5\n +  where -1 = add(2, 3)")
    assert fails_text([said], code) == "add is off"
    # No message: a literal of the file the explanation holds; else a name both hold.
    code = 'def test_g():\n    assert greet("ada") == "hello ada"\n'
    said = recorded("AssertionError: assert 'helo ada' == 'hello ada'\n  - hello ada\n  + helo ada")
    assert fails_text([said], code) == "hello ada"
    code = "from calc import subtract\n\ndef test_s():\n    assert subtract(3, 2) == 1\n"
    said = recorded("ImportError: cannot import name 'subtract' from 'calc' (/x/calc.py)")
    assert fails_text([said], code) == "subtract"
    assert feature_reason([said]) is not None
    # A literal only inside a longer word is not said ('func' in 'functoolz'); a name the file
    # only imports is not what it writes (eyeful/written.py); an exception type an assertion
    # uses is a name worth quoting, the test's own name in a repr is not.
    code = "from toolz.functoolz import compose_left\n\nFUNC = 'func'\n"
    said = recorded("ImportError: cannot import name 'compose_left' from 'toolz.functoolz'")
    assert fails_text([said], code) is None
    assert fails_text([said], code + "\n\ndef test_c():\n    assert compose_left\n") == (
        "compose_left"
    )
    code = "def test_part():\n    assert raises(LookupError, lambda: part(5))\n"
    said = recorded(
        "AssertionError: assert False\n +  where False = raises(LookupError, "
        "<function test_part.<locals>.<lambda> at 0x7f26a0f4c0e0>)"
    )
    assert fails_text([said], code) == "LookupError"
    # A plain assert with no message: the comparison with its literal, as pytest explains it.
    code = "def test_m():\n    assert mul(2, 3) == 6\n"
    said = recorded("AssertionError: assert 7 == 6\n +  where 7 = mul(2, 3)")
    assert fails_text([said], code) == "== 6" and feature_reason([said]) is None
    # A unittest assertion is an assertion too: the literal it compares against, as its message
    # says it, and the names it uses (cachetools c17b0e3ded, mined).
    code = "class T(TestCase):\n    def test_w(self):\n        self.assertEqual(len(w), 42)\n"
    assert fails_text([recorded("AssertionError: 0 != 42")], code) == "!= 42"
    code = "class T:\n    def test_c(self):\n        self.assertIs(f.cache_condition, None)\n"
    said = recorded("AttributeError: 'function' object has no attribute 'cache_condition'")
    assert fails_text([said], code) == "cache_condition"
    code = code.replace("self.assertIs(f.cache_condition, None)", "f.cache_condition = 1")
    assert fails_text([said], code) is None  # not an assertion
    # A function or method the test calls is its own words: the exception its call raised
    # names it (cachetools 86352aed2b, mined); an argument of that call is not.
    code = "class T:\n    def test_c(self):\n        c.get.cache_clear(size)\n"
    said = recorded("TypeError: cache_clear() missing 1 required positional argument: 'self'")
    assert fails_text([said], code) == "cache_clear"
    said = recorded("TypeError: bad size for cache_clear")
    assert fails_text([said], code.replace("cache_clear(size)", "reset(cache_clear)")) is None
    # Only where the exception names it as called: not a word of another message.
    code = "class T:\n    def test_r(self):\n        c.reload()\n        c.lookup(2)\n"
    assert fails_text([recorded("LookupError: nothing to reload yet")], code) is None
    assert fails_text([recorded("AttributeError: 'C' has no attribute 'reload'")], code) == "reload"
    # A special method's name is no call the test made that failed: its `super().__init__()`
    # is not the `Widget(1, 2)` whose `Widget.__init__() takes ...` the change's signature gave.
    # That message names the class the test called, as constructed: `Widget` is the text
    # (itsdangerous f966a62e4c, mined: `Serializer(..., fallback_signers=...)`).
    code = (
        "class Base(W):\n    def __init__(self):\n        super().__init__()\n\n\n"
        "def test_w():\n    Widget(1, 2)\n"
    )
    said = recorded("TypeError: Widget.__init__() takes 2 positional arguments but 3 were given")
    assert fails_text([said], code) == "Widget"
    assert not written_by_test("__init__", code)
    said = recorded("TypeError: Widget.__new__() got an unexpected keyword argument 'size'")
    assert fails_text([said], code) == "Widget"
    # Not a class the test did not call, nor a word that merely precedes a special method.
    said = recorded("TypeError: Gadget.__init__() takes 2 positional arguments but 3 were given")
    assert fails_text([said], code) is None
    said = recorded("TypeError: MyWidget.__init__() takes 2 positional arguments but 3 were given")
    assert fails_text([said], code) is None
    said = recorded("RuntimeError: Widget.__repr__() failed")
    assert fails_text([said], code) is None
    # A builtin class is never named so by its own construction (`object(1)`: `object() takes
    # no arguments`): `object.__init__()` is another class's `super().__init__(x)`.
    said = "TypeError: object.__init__() takes exactly one argument (the instance to initialize)"
    assert not named_as_called("object", said)
    assert not named_as_called("object", "object.__new__() takes exactly one argument")
    assert not named_as_called("float", "float.__new__(A): A is not a subtype of float")
    assert named_as_called("Widget", "Widget.__new__() takes exactly one argument")
    # Nor a value's repr: Python names a call without its arguments.
    assert not named_as_called("Side", "assert False\n +  where False = fits(2, Side(size=2))")
    assert named_as_called("Side", "TypeError: Side() takes no arguments")
    # What stays unshown (cachetools 18e5930ced): a value a call returns is not a literal the
    # assertion compares against; `!= 2` is generic.
    code = "class T:\n    def test_k(self):\n        self.assertEqual(f.key(42), key2(c, 42))\n"
    assert fails_text([recorded("AssertionError: () != (42,)")], code) is None
    code = "class T:\n    def test_w(self):\n        self.assertEqual(len(w), 2)\n"
    assert fails_text([recorded("AssertionError: 0 != 2")], code) is None
    # The exception a test expects, as the runner says it was not raised (itsdangerous
    # ce5e2cd0af, mined).
    code = "def test_sep():\n    with pytest.raises(ValueError):\n        Signer(sep='-')\n"
    said = recorded("Failed: DID NOT RAISE ValueError")
    assert fails_text([said], code) == "DID NOT RAISE ValueError"
    # Nothing shared (short names, a comment), or read from text: no fails text.
    code = "def test_m():\n    # the product is off\n    check(mul(2, 3))\n"
    assert fails_text([recorded("AssertionError: the product is off")], code) is None
    text = Failure(message="add is off", text="add is off", source="output")
    assert fails_text([text], "assert add(2, 3) == 5, 'add is off'") is None
    # Never an address, a temporary path or the test module's own name.
    said = recorded("AssertionError: <object at 0x7f3a2b1c9d00> in test_things")
    code = "x = '<object at 0x7f3a2b1c9d00>'\ndef test_things(): pass\n"
    assert fails_text([said], code, "test_things") is None


# Mining a real history, then evaluating it ----------------------------------------------------

CALC = (
    "def add(a, b):\n    return a - b\n\n\n"
    "def mul(a, b):\n    return a * b + 1\n\n\n"
    "def greet(name):\n    return 'helo ' + name\n\n\n"
    "def double(n):\n    return n * 3\n\n\n"
    "def chk():\n    raise ValueError('nope')\n"
)
FIXES = [
    ("Fix add", "return a - b", "return a + b", "tests/test_add.py",
     "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5, 'add is off'\n"),
    ("Fix mul", "return a * b + 1", "return a * b", "tests/test_mul.py",
     "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"),
    # Its test imports a helper the fix added: the base keeps it, so the test runs on the change.
    ("Fix greet", "'helo '", "'hello '", "tests/test_greet.py",
     "from calc import greet\nfrom helpers import NAME\n\n\ndef test_greet():\n"
     "    assert greet(NAME) == 'hello ada'\n", {"tests/helpers.py": "NAME = 'ada'\n"}),
    ("Add subtract", "def greet", "def subtract(a, b):\n    return a - b\n\n\ndef greet",
     "tests/test_subtract.py",
     "from calc import subtract\n\n\ndef test_subtract():\n    assert subtract(3, 2) == 1\n"),
    # A top-level test.py is a test file (python-slugify's layout).
    ("Fix double", "return n * 3", "return n * 2", "test.py",
     "from calc import double\n\n\ndef test_double():\n"
     "    assert double(2) == 4, 'double is off'\n"),
    # tests.py at any level; its test writes nothing to quote: no reference finding at all.
    ("Fix check", "raise ValueError('nope')", "return None", "sub/tests.py",
     "from calc import chk\n\n\ndef test_c():\n    chk()\n"),
]  # fmt: skip


def test_mined_cases_require_what_their_reference_can_show(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = sealed_env(home)
    repo = tmp_path / "calc"
    repo.mkdir()
    sh("git", "init", "-q", cwd=repo, env=env)
    files = {"pyproject.toml": eyeful_config(test_one=f"{PYTEST} {{test}}"),
             "pytest.ini": PYTEST_INI, "calc.py": CALC,
             "tests/test_calc.py": "def test_nothing():\n    assert True\n"}  # fmt: skip
    commit(repo, env, files, "calc")
    source, shas = CALC, {}
    for subject, old, new, test, code, *helpers in FIXES:
        source = source.replace(old, new)
        files = {"calc.py": source, test: code, **(helpers[0] if helpers else {})}
        shas[subject] = commit(repo, env, files, subject)[:10]
    out = tmp_path / "cases"
    mined = sh("git", "eyeful", "eval", "mine", "--yes", "--only", "bug", "--include-features",
               str(out), cwd=repo, env=env)  # fmt: skip
    names = {
        "add": f"bug-{shas['Fix add']}",
        "mul": f"bug-{shas['Fix mul']}",
        "greet": f"bug-{shas['Fix greet']}",
        "subtract": f"feature-{shas['Add subtract']}",
        "double": f"bug-{shas['Fix double']}",
        "check": f"bug-{shas['Fix check']}",
    }
    assert sorted(p.name for p in out.iterdir()) == sorted(names.values()), mined.stdout
    # Mined cases run as mined: each lists its reference findings, unless there are none, and
    # then the table and the case file say so.
    for name in ("add", "mul", "greet", "subtract", "double"):
        assert (
            'findings = ["reference-findings.json"]'
            in (out / names[name] / "case.toml").read_text()
        )
    empty = (out / names["check"] / "case.toml").read_text()
    assert "findings =" not in empty and "# No reference findings:" in empty, empty
    assert f"| case {names['check']}, no reference findings:" in mined.stdout, mined.stdout

    def truth(name: str) -> tuple[str, str | None]:
        case = load_case(out / names[name])
        (entry,) = case.spec.required_findings
        reference = json.loads((case.directory / "reference-findings.json").read_text())
        return entry.at_least, reference[0]["repro"]["fails"] if reference else None

    assert truth("add") == ("reproduced", "add is off")
    assert truth("greet") == ("reproduced", "hello ada")
    assert truth("subtract") == ("reproduced", "subtract")
    assert truth("double") == ("reproduced", "double is off")
    # A plain assert with no message: the comparison with its literal (issue 33).
    assert truth("mul") == ("reproduced", "== 6")
    feature = (out / names["subtract"] / "case.toml").read_text()
    assert "# Labelled a feature, not a fix" in feature
    comments = [line for line in feature.splitlines() if line.startswith("#")]
    assert "cannot import name 'subtract' from 'calc'" in " ".join(comments)
    assert not any("/" in line for line in comments[2:])  # the machine's paths are left out

    # Each case with its reference findings (a path relative to the case), and one with the old
    # fails text (the source line pytest marks with `>`): reported, never shown by a test.
    cases = tmp_path / "eval"
    # (mul's and greet's cases, as plain as add's, are checked as mined above.)
    for name in ("add", "subtract"):
        shutil.copytree(out / names[name], cases / name)  # as mined, not edited
    old = cases / "source-line"
    shutil.copytree(cases / "add", old)
    reference = json.loads((old / "reference-findings.json").read_text())
    reference[0]["repro"]["fails"] = "assert add(2, 3) == 5, 'add is off'"
    (old / "reference-findings.json").write_text(json.dumps(reference))
    proc = sh("git", "eyeful", "eval", str(cases), "--yes", "-j", "2", "--format", "json",
              "--min-recall", "0.8", "--min-recall", "reproduced=0.9", cwd=repo, env=env,
              check=False)  # fmt: skip
    assert proc.stdout.startswith("{"), proc.stderr
    result = EvalResult.model_validate_json(proc.stdout)
    rows = {r.case: r for r in result.results}
    got = {c: (r.status, r.required_met, r.required_verified) for c, r in rows.items()}
    assert got == {
        "add": ("pass", 1, 1),
        "subtract": ("pass", 1, 1),
        "source-line": ("fail", 1, 0),
    }, [v.reason for r in rows.values() for v in r.judges if v.status == "fail"]
    (why,) = [v.reason for v in rows["source-line"].judges if v.status == "fail"]
    # The source line is written by no literal or comparison: refused before it runs (issue 33).
    assert "no test showed the findings there: 'mined-1' runs: not_reached" in why
    (total,) = result.totals
    assert (total.recall, round(total.verified_recall, 3)) == (1.0, 0.667)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        "eyeful: threshold missed: execution: verified recall 0.667 < --min-recall reproduced=0.9"
    )
    assert "| 1.00 (3/3), 3 cases | 0.67 (2/3) |" in to_markdown(result)


def test_a_bad_min_recall_is_a_usage_error_before_anything_runs(tmp_path):
    env = sealed_env(tmp_path)
    proc = sh("git", "eyeful", "eval", str(tmp_path / "none"), "--min-recall", "verified=1",
              cwd=tmp_path, env=env, check=False)  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == ""
    assert "--min-recall 'verified=1': give X, reported=X or reproduced=X" in proc.stderr


def test_the_showing_gates_are_the_gates_first_four():
    from eyeful.evaluate.judges import SHOWING_GATES

    assert GATE_NAMES[:4] == SHOWING_GATES
