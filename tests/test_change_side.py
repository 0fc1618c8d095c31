"""A block names what the change's code did (issue 33): the base runs the change's tests, and a
reproduction blocks only on the changed code's behaviour. Each shape here blocked before."""

from __future__ import annotations

import shlex
from pathlib import Path

import pygit2
import pytest

from eyeful.testside import side_paths
from eyeful.written import written_texts
from tests.core import review
from tests.gitrepo import (
    PYTEST,
    PYTEST_INI,
    PYTHON,
    confirm,
    eyeful_config,
    git,
    make_repo,
    stage,
    write,
)

CALC = "def add(a, b):\n    return abs(a) + b\n"  # a bug for negatives, on both sides
ADD_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _review(repo: Path, **options: object) -> tuple[int, dict]:
    done = review(repo, format="json", **options)
    return done.exit_code, done.json


def _kinds(report: dict) -> dict[str, str]:
    return {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}


def _calc_repo(tmp_path: Path, files: dict[str, str] | None = None, extra: str = "") -> Path:
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(extra=extra), "pytest.ini": PYTEST_INI, "calc.py": CALC,
         "README.md": "add returns the sum of its arguments\n",
         "tests/test_add.py": ADD_TEST, **(files or {})},
    )  # fmt: skip
    confirm(repo)
    return repo


def test_a_stricter_test_whose_message_holds_a_timestamp_is_pre_existing(tmp_path):
    # The change only makes the test stricter; the old code fails it too, by the same cause,
    # though the message's number differs on every run.
    repo = _calc_repo(tmp_path, extra="reruns = 2")
    stage(repo, {"tests/test_add.py": (
        "import time\n\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
        "    assert add(-1, 1) == 0, f'add(-1, 1) is not 0 at {time.perf_counter()}'\n"
    )})  # fmt: skip
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "pre_existing"}, report
    # Alone then in its file (a failure on both sides alone is judged with its file), two pairs
    # each, and the base's version of the file once on each code: the message's number does not
    # send it on to the suite.
    runs = report["runs"]
    assert sum(1 for r in runs if r["name"] == "test_one") <= 10, runs
    assert sum(1 for r in runs if r["name"] == "test") == 1, runs  # the change's suite only
    assert code == 0


DOCUMENTED = '''def add(a, b):
    """The sum.

    >>> add(2, 3)
    5
    """
    return abs(a) + b
'''


def _doctest_repo(tmp_path: Path) -> Path:
    ini = PYTEST_INI + "addopts = --doctest-modules\n"
    return _calc_repo(tmp_path, {"pytest.ini": ini, "calc.py": DOCUMENTED})


def test_a_doctest_a_docs_only_change_adds_for_an_old_bug_is_pre_existing(tmp_path):
    """The change only documents: a new example in add's docstring shows the old bug for
    negatives. The docstring is the doctest's side: on the base's code it fails alike."""
    repo = _doctest_repo(tmp_path)
    stage(repo, {"calc.py": DOCUMENTED.replace("    5\n", "    5\n    >>> add(-1, 1)\n    0\n")})
    code, report = _review(repo)
    assert _kinds(report) == {"calc.py::calc.add": "pre_existing"}, report
    assert code == 0


@pytest.mark.parametrize("where", ["in-another-module", "in-another-function"])
def test_a_doctest_example_the_change_writes_that_fails_is_no_block(tmp_path, where):
    """helper-67: a new example in add's docstring shows the old bug for negatives, its prose
    edited too, and the change refactors other code: the module is the code, so the base ran
    its own docstring, and the new example's failure blocked. The example that fails is the
    change's own writing: not shown to be what the change's code does."""
    other = "def mul(a, b):\n    return a * b\n"
    repo = _calc_repo(
        tmp_path,
        {"pytest.ini": PYTEST_INI + "addopts = --doctest-modules\n", "calc.py": DOCUMENTED,
         "other.py": other},
    )  # fmt: skip
    documented = DOCUMENTED.replace("The sum.", "The sum, of negatives too.").replace(
        "    5\n", "    5\n    >>> add(-1, 1)\n    0\n"
    )
    refactor = "def mul(a, b):\n    product = a * b\n    return product\n"
    if where == "in-another-module":
        stage(repo, {"calc.py": documented, "other.py": refactor})
    else:
        stage(repo, {"calc.py": documented + "\n\n" + refactor})
    code, report = _review(repo)
    assert _kinds(report) == {"calc.py::calc.add": "unconfirmed"}, report
    [failure] = report["other_failures"]
    assert "add(-1, 1)" in failure["message"] or "add(-1, 1)" in str(failure), failure
    assert code == 3


MAKE = (
    'class Box:\n    value = 3\n\n\ndef make():\n    """\n    >>> x = make()\n    >>> x.value\n'
    '    3\n    """\n    return Box()\n\n\ndef g():\n    """\n    >>> g()\n    1\n    """\n'
    "    return 1\n"
)
SCALED = 'def scaled(a):\n    """\n    >>> scaled(2)\n    2\n    """\n    return a\n'
REPORT = (
    'def report(n):\n    """\n    >>> print(report(2))\n    Total: 2\n    Got it\n    """\n'
    '    return f"Total: {n}\\nGot it"\n'
)
TEST_DICT = (
    'def add(a, b):\n    return a + b\n\n\n__test__ = {"adding": """\n>>> add(1, 2)\n3\n"""}\n'
)
SLUG = (
    '"""Slugs.\n\n>>> calc(\'x\')\n\'x\'\n"""\n\n\ndef calc(text, sep="-"):\n    """Make one.\n\n'
    "    >>> sep = '_'\n    >>> calc('A B', sep)\n    'a_b'\n    \"\"\"\n"
    "    return sep.join(text.lower().split())\n"
)
BOX = (
    "class Box:\n    def __init__(self):\n        self._w = 2\n\n    @property\n"
    '    def width(self):\n        """The width.\n\n        >>> Box().width\n        2\n'
    '        """\n        return self._w\n\n    @width.setter\n    def width(self, value):\n'
    "        self._w = value\n"
)
GUARDED = (
    "try:\n    import fastmath  # noqa: F401\nexcept ImportError:\n\n    def add(a, b):\n"
    '        """Add.\n\n        >>> add(1, 2)\n        3\n        """\n        return a + b\n'
)
GOT = (
    'def report(items):\n    """Say how many.\n\n    >>> report(["a", "b"])\n    Got: 2 items\n'
    '    """\n    print(f"Got: {len(items)} items")\n'
)
RECT = (
    "class Rect:\n    def __init__(self, w, h):\n        self.w, self.h = w, h\n\n"
    '    def _get_area(self):\n        """The area.\n\n        >>> Rect(2, 3).area\n        6\n'
    '        """\n        return self.w * self.h\n\n    area = property(_get_area)\n'
)
DOC_CASES = {
    # (calc.py on the base, on the change, addopts beyond --doctest-modules, the kind)
    # an example another docstring of the file holds is not this doctest's
    "another docstring's example": (
        MAKE, MAKE.replace("    >>> g()\n    1\n", "    >>> g()\n    1\n    >>> x.value\n    3\n")
        .replace("return 1", "return int('1')"), "", "unconfirmed"),
    # an untouched example after one the change wrote before it
    "an example written before it": (
        SCALED, SCALED.replace("    >>> scaled(2)",
                               "    >>> scaled = lambda a: a * 3\n    >>> scaled(2)")
        + "\n\ndef other():\n    return 1\n", "", "unconfirmed"),
    # doctest's --doctest-continue-on-failure: several failures, the first one's example
    "continue on failure": (
        DOCUMENTED, DOCUMENTED.replace("    5\n", "    5\n    >>> add(-1, 1)\n    0\n")
        + "\n\ndef sub(a, b):\n    return a - b\n", " --doctest-continue-on-failure",
        "unconfirmed"),
    # helper-70: the module's docstring where the module holds a function of its name
    "module and function of one name": (
        SLUG, SLUG.replace("'x'\n\"\"\"", "'x'\n>>> calc('A B', sep)\n'a_b'\n\"\"\"")
        .replace("return sep.join", "words = sep.join\n    return words"), "", "unconfirmed"),
    # ... and a getter's, where a setter follows; one defined under `try:`
    "a property with a setter": (BOX, BOX.replace("self._w = 2", "self._w = 3"), "",
                                 "regression"),
    "a def under try": (GUARDED, GUARDED.replace("a + b", "a - b"), "", "regression"),
    # helper-72: a new example that expects nothing; a doctest named by an attribute
    "an example expecting nothing": (
        DOCUMENTED, DOCUMENTED.replace(
            "    5\n", "    5\n    >>> total = add(2, 2)\n    >>> add(total, 1)\n"
        ).replace("abs(a) + b", "b + abs(a)"), "", "unconfirmed"),
    "a property by its attribute": (
        RECT, RECT.replace("        6\n", "        6\n        >>> Rect(0, 3).area\n        3\n")
        .replace("self.w * self.h", "self.h * self.w"), "", "unconfirmed"),
    # the code's own regressions still block: in `__test__`, an expected output with "Got"
    "__test__": (TEST_DICT, TEST_DICT.replace("a + b", "a - b"), "", "regression"),
    "expected Got": (REPORT, REPORT.replace("{n}", "{n + 1}"), "", "regression"),
    # helper-73: what it expects starts "Got: ", and it now prints nothing
    "expected starting Got:": (GOT, GOT.replace("    print(", "    str("), "", "regression"),
}  # fmt: skip


@pytest.mark.parametrize("case", DOC_CASES)
def test_a_doctests_examples_the_change_wrote_are_told_from_the_codes(tmp_path, case):
    """helper-69, on the rule above: the examples the base's doctest runs up to the failing one
    are compared with the change's, doctest by doctest."""
    base, change, more, kind = DOC_CASES[case]
    ini = PYTEST_INI + f"addopts = --doctest-modules{more}\n"
    repo = _calc_repo(tmp_path, {"pytest.ini": ini, "calc.py": base})
    stage(repo, {"calc.py": change})
    code, report = _review(repo)
    # (tests/test_add.py imports an add some of these modules lack: pre-existing, aside)
    mine = {test: k for test, k in _kinds(report).items() if test.startswith("calc.py::")}
    assert set(mine.values()) == {kind}, report
    assert code == (1 if kind == "regression" else 3), report


COUNTER = (
    'class Counter:\n    """A counter.\n\n    >>> c = Counter()\n    >>> c.value\n    0\n'
    '    >>> c.bump()\n    >>> c.reset()\n    >>> c.value\n    0\n    """\n\n'
    "    def __init__(self):\n        self.value = 0\n\n    def bump(self):\n"
    "        self.value += 1\n\n    def reset(self):\n"
    "        self.value = max(self.value - 1, 0)\n"
)
SHOUT = (
    'def shout(text):\n    """\n    >>> shout("hi")\n    \'HI!\'\n    """\n'
    '    return text.upper() + "!"\n'
)


@pytest.mark.parametrize("case", ["module named as its package", "an example held twice"])
def test_a_doctests_examples_are_found_by_its_modules_dotted_name(tmp_path, case):
    """helper-71: `textkit/textkit.py` (a module named as its package) cut the doctest's name
    at the package, found no doctest, and the code's regression was a question; and an
    example the doctest holds twice (`c.value`) was compared up to its first place, where the
    change wrote one before its second: a block."""
    ini = PYTEST_INI + "addopts = --doctest-modules\n"
    if case == "module named as its package":
        files = {"textkit/__init__.py": "", "textkit/textkit.py": SHOUT}
        staged = {"textkit/textkit.py": SHOUT.replace('+ "!"', '+ "?"')}
        want = ("textkit/textkit.py::textkit.textkit.shout", "regression")
    else:
        files = {"counter.py": COUNTER}
        staged = {"counter.py": COUNTER.replace("    >>> c.bump()\n", "    >>> c.bump()\n" * 2)
                  .replace("self.value += 1", "self.value = self.value + 1")}  # fmt: skip
        want = ("counter.py::counter.Counter", "unconfirmed")
    repo = _calc_repo(tmp_path, {"pytest.ini": ini, **files})
    stage(repo, staged)
    code, report = _review(repo)
    assert want in _kinds(report).items(), report
    assert code == (1 if want[1] == "regression" else 3), report


def test_a_doctest_under_a_rootdir_below_the_root_still_blocks(tmp_path):
    """helper-69: pytest's rootdir below the repository (`cd pkg && pytest`): the doctest's
    file was looked for at the root, not found on the base, and a break was a question."""
    pytest_in_pkg = "cd pkg && " + PYTEST
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(pytest_in_pkg, test_one=f"{pytest_in_pkg} {{test}}"),
        "pkg/pytest.ini": PYTEST_INI + "addopts = --doctest-modules\n", "pkg/calc.py": DOCUMENTED,
    })  # fmt: skip
    confirm(repo)
    stage(repo, {"pkg/calc.py": DOCUMENTED.replace("abs(a) + b", "abs(a) - b")})
    code, report = _review(repo)
    assert list(_kinds(report).values()) == ["regression"], report
    assert code == 1


def test_a_docstring_the_code_reads_is_the_code(tmp_path):
    """The code returns its own docstring's first word: a docstring-only change is a change of
    what it does, and the test it breaks blocks."""
    greet = 'def greeting():\n    """Hello\n\n    >>> 1 + 1\n    2\n    """\n'
    greet += "    return greeting.__doc__.split()[0]\n"
    test = (
        "from greet import greeting\n\n\ndef test_greeting():\n    assert greeting() == 'Hello'\n"
    )
    ini = PYTEST_INI + "addopts = --doctest-modules\n"
    repo = _calc_repo(tmp_path, {"pytest.ini": ini, "greet.py": greet, "tests/test_greet.py": test})
    stage(repo, {"greet.py": greet.replace('"""Hello', '"""Goodbye')})
    code, report = _review(repo)
    assert _kinds(report).get("tests/test_greet.py::test_greeting") == "regression", report
    assert code == 1


def test_a_docstring_and_a_break_in_one_file_still_blocks(tmp_path):
    """Code and docstring edited together: the file is the code, the break blocks."""
    repo = _doctest_repo(tmp_path)
    broken = DOCUMENTED.replace("    5\n", "    5\n    >>> add(0, 0)\n    0\n")
    stage(repo, {"calc.py": broken.replace("abs(a) + b", "abs(a) + b + (a == 2)")})
    code, report = _review(repo)
    assert _kinds(report).get("calc.py::calc.add") == "regression", report
    assert code == 1
    # The doctest's failure in its own words, not `<DocTest calc.add from ...>`.
    excerpt = next(f["excerpt"] for f in report["regressions"] if f["test"] == "calc.py::calc.add")
    assert "Failed example: add(2, 3)\nExpected: 5\nGot: 6" in excerpt, excerpt


def test_a_doctest_that_a_break_elsewhere_fails_still_blocks(tmp_path):
    """Docstring-only in calc.py, but the break is in the module it calls."""
    calls = DOCUMENTED.replace("def add", "from absolute import magnitude\n\n\ndef add")
    calls = calls.replace("abs(a)", "magnitude(a)")
    magnitude = "def magnitude(x):\n    return abs(x)\n"
    ini = PYTEST_INI + "addopts = --doctest-modules\n"
    repo = _calc_repo(tmp_path, {"pytest.ini": ini, "calc.py": calls, "absolute.py": magnitude})
    stage(repo, {"calc.py": calls.replace("    5\n", "    5\n    >>> add(1, 1)\n    2\n"),
                 "absolute.py": "def magnitude(x):\n    return abs(x) + (x == 2)\n"})  # fmt: skip
    code, report = _review(repo)
    assert _kinds(report).get("calc.py::calc.add") == "regression", report
    assert code == 1


def _finding(code: str, fails: str, oracle: dict, path: str = "calc.py") -> dict:
    return {
        "id": "f1", "expert": "correctness", "severity": "error", "evidence": "test",
        "path": path, "line": 1, "title": "a problem", "body": "a claim.", "oracle": oracle,
        "repro": {"path": "tests/test_repro.py", "code": code, "fails": fails},
    }  # fmt: skip


def _one_finding(repo: Path, finding: dict) -> tuple[int, dict]:
    code, report = _review(repo, findings=[finding])
    (found,) = report["findings"]
    return code, found


SUB_REPRO = (
    "from calc import add\n\n\ndef test_add():\n"
    "    assert add(4, 1) == 5, 'add returns a wrong sum'\n"
)
WRONG_FOR_ONE = CALC.replace("abs(a) + b", "abs(a) + b if b != 1 else a")  # tests/ still pass


def test_a_quote_of_backticks_is_no_specification(tmp_path):
    repo = _calc_repo(tmp_path)
    stage(repo, {"calc.py": WRONG_FOR_ONE})
    oracle = {"kind": "specified", "quote": "``` ``` ```", "source": "README.md"}
    code, found = _one_finding(repo, _finding(SUB_REPRO, "add returns a wrong sum", oracle))
    assert found["oracle"]["graded"] == "human", found["oracle"]
    assert found["kind"] != "fail"
    assert code != 1


def test_a_quote_of_three_real_words_still_blocks(tmp_path):
    repo = _calc_repo(tmp_path)
    stage(repo, {"calc.py": WRONG_FOR_ONE})
    oracle = {"kind": "specified", "quote": "`add` returns the sum", "source": "README.md"}
    code, found = _one_finding(repo, _finding(SUB_REPRO, "add returns a wrong sum", oracle))
    assert (found["oracle"]["graded"], found["kind"]) == ("specified", "fail"), found
    assert code == 1


GREET = 'def greet():\n    return "hello"\n\n\ndef parse(text):\n    return int(text)\n'


def test_implicit_through_unchanged_code_on_a_chosen_input_does_not_block(tmp_path):
    # An intended change to greet; the test feeds parse, which the change did not touch, an
    # input it chose from greet's answer: parse raises, but not in code the change touched.
    repo = _calc_repo(tmp_path, {"app.py": GREET})
    stage(repo, {"app.py": GREET.replace('"hello"', '"hi"')})
    code = (
        "from app import greet, parse\n\n\ndef test_greet():\n"
        '    parse("1" if greet() == "hello" else "not a number")\n'
    )
    code_, found = _one_finding(repo, _finding(code, "ValueError", {"kind": "implicit"}, "app.py"))
    assert found["oracle"]["graded"] == "human", found["oracle"]
    assert "no function the change touched" in found["oracle"]["note"]
    assert code_ != 1


def test_implicit_through_a_function_the_change_touched_still_blocks(tmp_path):
    repo = _calc_repo(tmp_path, {"app.py": GREET})
    stage(repo, {"app.py": GREET.replace("int(text)", "int(text.split()[1])")})
    code = "from app import parse\n\n\ndef test_parse():\n    assert parse('7') == 7\n"
    code_, found = _one_finding(repo, _finding(code, "IndexError", {"kind": "implicit"}, "app.py"))
    assert (found["oracle"]["graded"], found["kind"]) == ("implicit", "fail"), found
    assert code_ == 1


DOUBLE = "def double(x):\n    return 3 * x\n"  # wrong on the base already: double(-1) is -3


def test_a_reproduction_skipped_on_the_base_is_no_evidence_the_change_brought_the_bug(tmp_path):
    repo = _calc_repo(tmp_path, {"double.py": DOUBLE})
    stage(repo, {"double.py": DOUBLE + "\n\nVERSION = 2\n"})
    code = (
        "import pytest\n\nimport double\n\n\ndef test_double():\n"
        "    if not hasattr(double, 'VERSION'):\n        pytest.skip('no version')\n"
        "    assert double.double(2) == 4, 'double(2) is not 4'\n"
    )
    oracle = {"kind": "specified", "quote": "double returns twice its argument",
              "source": "README.md"}  # fmt: skip
    stage(repo, {"README.md": "double returns twice its argument\n"})
    exit_code, found = _one_finding(repo, _finding(code, "double(2) is not 4", oracle, "double.py"))
    assert found["kind"] != "fail", found
    assert "could not be run on the base" in found["unverified"], found["unverified"]
    assert exit_code != 1


def test_a_base_failure_of_the_same_cause_is_pre_existing_whatever_the_message(tmp_path):
    # The fails text is one the test writes only when the result is -4 (the change's); the base
    # fails the same assertion with -3: one cause, a pre-existing wrong result.
    repo = _calc_repo(tmp_path, {"double.py": DOUBLE})
    stage(repo, {"double.py": DOUBLE.replace("3 * x", "4 * x")})
    code = (
        "from double import double\n\n\ndef test_double():\n"
        "    got = double(-1)\n"
        "    assert got == -2, 'double(-1) gave -4' if got == -4 else f'double(-1) gave {got}'\n"
    )
    oracle = {"kind": "specified", "quote": "add returns the sum", "source": "README.md"}
    exit_code, found = _one_finding(repo, _finding(code, "double(-1) gave -4", oracle, "double.py"))
    assert found["label"] == "note (pre-existing)", found
    assert exit_code != 1


def test_a_base_failing_alike_in_other_words_is_no_evidence_the_change_brought_it(tmp_path):
    # The change only reorders the sum: add(None, 1) raises the same TypeError in calc.py on
    # both sides, its message naming the operands in the other order (helper-62).
    repo = _calc_repo(tmp_path, {"calc.py": "def add(a, b):\n    return a + b\n"})
    stage(repo, {"calc.py": "def add(a, b):\n    return b + a\n"})
    code = "from calc import add\n\n\ndef test_none():\n    add(None, 1)\n"
    finding = _finding(code, "'int' and 'NoneType'", {"kind": "implicit"})
    exit_code, found = _one_finding(repo, finding)
    assert found["kind"] != "fail", found
    said = found["unverified"]
    assert "fails on the base too (2 of 2 runs: TypeError raised in calc.py" in said, said
    assert exit_code != 1


def test_a_reproduction_only_the_tracer_fails_does_not_block(tmp_path):
    # The first run on the change is traced (the lines it ran); a test that fails under any
    # tracer (a timing, here `sys.gettrace()` itself) fails there alone, never on the untraced
    # base: that is no problem of the change's code (helper-62).
    repo = _calc_repo(tmp_path)
    stage(repo, {"calc.py": CALC.replace("abs(a) + b", "b + abs(a)")})
    code = (
        "import sys\n\nfrom calc import add\n\n\ndef test_untraced():\n    add(1, 2)\n"
        "    assert sys.gettrace() is None, 'add ran too slowly'\n"
    )
    oracle = {"kind": "specified", "quote": "add returns the sum", "source": "README.md"}
    exit_code, found = _one_finding(repo, _finding(code, "add ran too slowly", oracle))
    assert found["kind"] != "fail", found
    gates = {g["name"]: g for g in found["gates"]}
    assert gates["not_flaky"]["status"] == "fail", gates
    assert exit_code != 1


def test_a_fails_text_written_only_in_a_comment_is_not_the_tests_own(tmp_path):
    repo = _calc_repo(tmp_path, {"double.py": DOUBLE})
    stage(repo, {"double.py": DOUBLE.replace("3 * x", "4 * x")})
    code = (
        "from double import double\n\n\ndef test_double():\n"
        "    # double(-1) gave -4\n"
        "    assert double(-1) == -2, f'double(-1) gave {double(-1)}'\n"
    )
    oracle = {"kind": "specified", "quote": "add returns the sum", "source": "README.md"}
    exit_code, found = _one_finding(repo, _finding(code, "double(-1) gave -4", oracle, "double.py"))
    assert found["kind"] != "fail", found
    assert "not written by the test file itself" in found["unverified"], found["unverified"]
    assert exit_code != 1


def test_the_name_of_a_method_the_test_calls_is_its_own_words(tmp_path):
    # A plain call, no assertion: the change made `clear` need an argument, and the TypeError of
    # the test's own call names it (cachetools 86352aed2b). Still a regression the quote backs.
    cache = "class Cache:\n    def clear(self):\n        return 0\n"
    repo = _calc_repo(tmp_path, {"cache.py": cache, "README.md": "clear empties the cache\n"})
    stage(repo, {"cache.py": cache.replace("clear(self)", "clear(self, size)")})
    code = "from cache import Cache\n\n\ndef test_clear():\n    Cache().clear()\n"
    oracle = {"kind": "specified", "quote": "clear empties the cache", "source": "README.md"}
    exit_code, found = _one_finding(repo, _finding(code, "clear", oracle, "cache.py"))
    assert found["unverified"] in (None, ""), found
    assert (found["oracle"]["graded"], found["kind"]) == ("specified", "fail"), found
    assert exit_code == 1


def test_a_word_of_an_unrelated_exception_is_not_the_name_of_a_call_of_the_test(tmp_path):
    # The change means to drop the empty last part. The test calls `got.index(...)`, which
    # works; its subscript then fails with "list index out of range": "index" is in that
    # message, but no call named index failed, so it is not the test's claim.
    parts = "def parts(s):\n    return s.split(',')\n"
    repo = _calc_repo(tmp_path, {"parts.py": parts, "README.md": "parts splits on commas\n"})
    stage(repo, {"parts.py": parts.replace("s.split(',')", "[p for p in s.split(',') if p]")})
    code = (
        "from parts import parts\n\n\ndef test_parts():\n    got = parts('a,b,')\n"
        "    first = got.index('a')\n    assert got[first + 2] == ''\n"
    )
    oracle = {"kind": "specified", "quote": "parts splits on commas", "source": "README.md"}
    exit_code, found = _one_finding(repo, _finding(code, "index", oracle, "parts.py"))
    assert found["kind"] != "fail", found
    assert exit_code != 1


# The change means Shape to take no size now, and `fits` to be strict: both deliberate. The
# reproductions below fail by them, each in a way a name the test only calls is no claim of.
SHAPES = (
    "class Shape:\n    def __init__(self, size):\n        self.size = size\n\n\n"
    "def fits(box, side):\n    return side.size <= box\n"
)
STALE_SUBCLASS = (
    "from types import SimpleNamespace\n\nfrom shapes import Shape, fits\n\n\n"
    "class Square(Shape):\n    def __init__(self, side):\n        super().__init__(side)\n\n\n"
    "def test_square():\n    missing = object()\n    assert fits(3, SimpleNamespace(size=2))\n"
    "    assert getattr(Square(2), 'size', missing) == 2\n"
)
REPR_ARGUMENT = (
    "from dataclasses import dataclass\n\nfrom shapes import fits\n\n\n@dataclass\n"
    "class Side:\n    size: int\n\n\ndef test_fits():\n    side = Side(2)\n"
    "    assert fits(2, side)\n"
)


@pytest.fixture(scope="module")
def stale_tests(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, dict]]:
    repo = _calc_repo(
        tmp_path_factory.mktemp("stale"),
        {"shapes.py": SHAPES, "README.md": "fits tells whether a side fits a box\n"},
    )
    stage(repo, {"shapes.py": (
        "class Shape:\n    size = 1\n\n\ndef fits(box, side):\n    return side.size < box\n"
    )})  # fmt: skip
    oracle = {"kind": "specified", "quote": "whether a side fits", "source": "README.md"}
    findings = [
        {**_finding(STALE_SUBCLASS, "object", oracle, "shapes.py"), "id": "object"},
        {**_finding(REPR_ARGUMENT, "Side", oracle, "shapes.py"), "id": "repr", "line": 5},
    ]
    findings[1]["repro"] = {**findings[1]["repro"], "path": "tests/test_repro2.py"}
    code, report = _review(repo, findings=findings)
    return code, {f["id"]: f for f in report["findings"]}


def _refused_as_claimed(reviewed: tuple[int, dict[str, dict]], finding: str, said: str) -> None:
    """The finding is not shown, at fails_as_claimed, for its failure ``said``; nothing blocks."""
    code, found = reviewed
    one = found[finding]
    assert one["kind"] != "fail", one
    assert one["unverified"].startswith(f"fails_as_claimed: the test's failure ({said}")
    assert code != 1


def test_a_builtin_class_the_test_calls_is_not_named_by_another_classs_construction(stale_tests):
    # The test's own stale subclass passes a size up: `object.__init__() takes exactly one
    # argument`. The test called `object()` for a sentinel, which works (`object(1)` would say
    # `object() takes no arguments`): no construction of the test's failed as `object`.
    _refused_as_claimed(stale_tests, "object", "TypeError: object")


def test_a_class_the_test_calls_is_not_named_as_called_by_a_repr_of_its_value(stale_tests):
    # `assert fits(2, side)` fails as the change means (`where False = fits(2, Side(size=2))`):
    # the repr of the test's dataclass value is no call of `Side` that failed.
    _refused_as_claimed(stale_tests, "repr", "AssertionError")


# --- the base runs the change's tests (point 1) ---------------------------------------------

NEG = "def magnitude(x):\n    if x < 0:\n        raise ValueError('no negatives')\n    return x\n"
FIXTURE = "import pytest\n\n\n@pytest.fixture\ndef value():\n    return 1\n"
USES_FIXTURE = (
    "from neg import magnitude\n\n\ndef test_magnitude(value):\n    assert magnitude(value) >= 0\n"
)


def test_a_conftest_fixture_value_the_change_made_negative_is_pre_existing(tmp_path):
    repo = _calc_repo(
        tmp_path, {"neg.py": NEG, "tests/conftest.py": FIXTURE, "tests/test_neg.py": USES_FIXTURE}
    )
    stage(repo, {"tests/conftest.py": FIXTURE.replace("return 1", "return -1")})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_neg.py::test_magnitude": "pre_existing"}, report
    assert code == 0


CASES = "CASES = [1, 2]\n"
USES_CASES = (
    "import pytest\n\nfrom neg import magnitude\nfrom tests.cases import CASES\n\n\n"
    "@pytest.mark.parametrize('x', CASES)\ndef test_magnitude(x):\n    assert magnitude(x) == x\n"
)


def test_a_case_the_change_added_to_a_shared_case_list_is_pre_existing(tmp_path):
    files = {"neg.py": NEG, "tests/__init__.py": "", "tests/cases.py": CASES,
             "tests/test_neg.py": USES_CASES}  # fmt: skip
    repo = _calc_repo(tmp_path, files)
    stage(repo, {"tests/cases.py": "CASES = [1, 2, -3]\n"})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_neg.py::test_magnitude[-3]": "pre_existing"}, report
    assert code == 0


def test_a_case_added_to_a_module_only_tests_import_is_pre_existing_the_code_still_blocks(
    tmp_path,
):
    # testing/cases.py sits outside the test directories and only tests import it: the change's
    # test side. calc.py too is imported by tests only, but it is the project's code: the
    # change's bug there blocks in the same review.
    files = {"neg.py": NEG, "testing/__init__.py": "", "testing/cases.py": CASES,
             "tests/test_neg.py": USES_CASES.replace("tests.cases", "testing.cases")}  # fmt: skip
    repo = _calc_repo(tmp_path, files)
    stage(repo, {"testing/cases.py": "CASES = [1, 2, -3]\n",
                 "calc.py": CALC.replace("abs(a) + b", "abs(a) - b")})  # fmt: skip
    code, report = _review(repo)
    assert _kinds(report) == {
        "tests/test_neg.py::test_magnitude[-3]": "pre_existing",
        "tests/test_add.py::test_add": "regression",
    }, report
    assert code == 1


def test_a_shipped_testing_module_beside_the_packages_code_stays_the_projects_code(tmp_path):
    # pkg/testing.py is the package's own public helper (as click.testing is), imported by the
    # tests alone: a break in it is the change's code, not its test side, and blocks.
    test = "from pkg.testing import runner\n\n\ndef test_runner():\n    assert runner() == 'ok'\n"
    files = {"pkg/__init__.py": "", "pkg/core.py": "def one():\n    return 1\n",
             "pkg/testing.py": "def runner():\n    return 'ok'\n",
             "tests/test_runner.py": test}  # fmt: skip
    repo = _calc_repo(tmp_path, files)
    stage(repo, {"pkg/testing.py": "def runner():\n    return 'ko'\n"})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_runner.py::test_runner": "regression"}, report
    assert code == 1


def test_without_test_one_the_base_suite_runs_the_changes_test_side(tmp_path):
    # `env` before pytest: no test_one is derived, so the whole suite runs on the base, with the
    # change's conftest: the fixture's new value fails the untouched code there too.
    files = {"pyproject.toml": eyeful_config(f"env {PYTEST}"), "neg.py": NEG,
             "tests/conftest.py": FIXTURE, "tests/test_neg.py": USES_FIXTURE}  # fmt: skip
    repo = _calc_repo(tmp_path, files)
    stage(repo, {"tests/conftest.py": FIXTURE.replace("return 1", "return -1")})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_neg.py::test_magnitude": "pre_existing"}, report
    runs = [(r["side"], r["name"]) for r in report["runs"]]
    # The base's own suite first (a conftest edit can change what is collected: compared with
    # it), then the base's code with the change's tests.
    assert runs == [("change", "test"), ("base", "test"), ("base", "test")], runs
    assert code == 0


VERSION = "def version():\n    return 1\n"
EXPECTED = "import pytest\n\n\n@pytest.fixture\ndef expected():\n    return 1\n"
VERSION_TEST = (
    "from ver import version\n\n\ndef test_version(expected):\n    assert version() == expected\n"
)


def test_a_conftest_value_changed_with_a_break_is_a_regression(tmp_path):
    """The change breaks the code and bumps the fixture the test compares with: on the base's
    code with the change's conftest the test fails too (1 == 2 against 3 == 2, numbers aside one
    cause), and the review said pre-existing. The base's conftest on the change's code fails
    (3 == 1) where it passed on the base's: the change's code fails what the test asked before."""
    version, conftest = VERSION, EXPECTED
    repo = _calc_repo(tmp_path, {"ver.py": version, "tests/conftest.py": conftest,
                                 "tests/test_v.py": VERSION_TEST})  # fmt: skip
    stage(repo, {"ver.py": version.replace("1", "3"),
                 "tests/conftest.py": conftest.replace("return 1", "return 2")})  # fmt: skip
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_v.py::test_version": "regression"}, report
    assert code == 1


def test_a_conftest_value_changed_alone_is_still_pre_existing(tmp_path):
    version, conftest = VERSION, EXPECTED
    repo = _calc_repo(tmp_path, {"ver.py": version, "tests/conftest.py": conftest,
                                 "tests/test_v.py": VERSION_TEST})  # fmt: skip
    stage(repo, {"ver.py": version + "\n\ndef other():\n    return 0\n",
                 "tests/conftest.py": conftest.replace("return 1", "return 2")})  # fmt: skip
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_v.py::test_version": "pre_existing"}, report
    assert code == 0


def test_a_stricter_test_failing_on_the_new_code_by_another_cause_is_a_regression(tmp_path):
    # The change breaks magnitude(2) and makes the test stricter (it asks about -1 too): on the
    # base's code the stricter test fails at -1 (a ValueError in neg.py), on the change's at 2.
    plain = "from neg import magnitude\n\n\ndef test_magnitude():\n    assert magnitude(2) == 2\n"
    repo = _calc_repo(tmp_path, {"neg.py": NEG, "tests/test_neg.py": plain})
    stricter = plain.replace("== 2\n", "== 2 and magnitude(-1) == 1\n")
    stage(repo, {"neg.py": NEG.replace("return x", "return x + 1"), "tests/test_neg.py": stricter})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_neg.py::test_magnitude": "regression"}, report
    assert code == 1


# --- behaviour, not representation (point 5) ------------------------------------------------

REFACTORED = "def add(a, b):\n    total = abs(a) + b\n    return total\n"  # a pure refactor
LOOKS = {
    "__code__": "assert 'total' not in add.__code__.co_varnames, 'add was refactored'",
    "os.path.getsize": "assert os.path.getsize(calc.__file__) == 37, 'add was refactored'",
    "get_data": "assert b'total' not in calc.__loader__.get_data(calc.__file__), "
    "'add was refactored'",
    "child process": "assert b'total' not in subprocess.run(['cat', 'calc.py'], "
    "capture_output=True).stdout, 'add was refactored'",
    "README": "assert 'refactored' not in open('README.md').read(), 'add was refactored'",
    "symlink": "os.symlink(calc.__file__, 'source'); "
    "assert b'total' not in open('source', 'rb').read(), 'add was refactored'",
    "sys.settrace": "sys.settrace(lambda *a: None); "
    "assert os.path.getsize(calc.__file__) == 37, 'add was refactored'",
}


def test_a_reproduction_telling_the_trees_apart_by_representation_does_not_block(tmp_path):
    repo = _calc_repo(tmp_path)
    stage(repo, {"calc.py": REFACTORED, "README.md": "add returns the sum (refactored)\n"})
    findings = [
        {**_finding(
            "import os\nimport subprocess\nimport sys\n\nimport calc\nfrom calc import add\n\n\n"
            f"def test_looks():\n    assert add(2, 3) == 5\n    {check}\n",
            "add was refactored",
            {"kind": "specified", "quote": "add returns the sum", "source": "README.md"},
        ), "id": name.replace(" ", "-").replace(".", "-"),
           "repro": {"path": f"tests/test_{i}.py", "fails": "add was refactored", "code": (
            "import os\nimport subprocess\nimport sys\n\nimport calc\nfrom calc import add\n\n\n"
            f"def test_looks():\n    assert add(2, 3) == 5\n    {check}\n")}}
        for i, (name, check) in enumerate(LOOKS.items())
    ]  # fmt: skip
    # inspect.signature reads add's __code__ too, for its parameters: what the code does (its
    # API), not how it is written. Here the test fails on both sides alike: pre-existing.
    signature = (
        "import inspect\n\nfrom calc import add\n\n\ndef test_sig():\n"
        "    assert list(inspect.signature(add).parameters) == ['a', 'b']\n"
        "    assert add(-2, 3) == 1, 'add is wrong for negatives'\n"
    )
    oracle = {"kind": "specified", "quote": "add returns the sum", "source": "README.md"}
    # Read at the test module's top level, while it is collected.
    top = (
        "import calc\n\nSOURCE = open(calc.__file__).read()\n\n\ndef test_top():\n"
        "    assert calc.add(2, 3) == 5\n    assert 'total' not in SOURCE, 'add was refactored'\n"
    )
    findings.append({**_finding(top, "add was refactored", oracle), "id": "top",
                     "repro": {"path": "tests/test_top.py", "code": top,
                               "fails": "add was refactored"}})  # fmt: skip
    findings.append({**_finding(signature, "add is wrong for negatives", oracle), "id": "sig",
                     "repro": {"path": "tests/test_sig.py", "code": signature,
                               "fails": "add is wrong for negatives"}})  # fmt: skip
    code, report = _review(repo, findings=findings)
    by_id = {f["id"]: f for f in report["findings"]}
    sig = by_id.pop("sig")
    assert [r["looked"] for r in sig["runs"] if r["side"] == "change"] == [None, None], sig
    assert sig["label"] == "note (pre-existing)", sig
    for name, found in by_id.items():
        assert found["kind"] != "fail", (name, found["gates"], found["unverified"])
        assert "its test " in (found["unverified"] or ""), (name, found["unverified"])
    assert "code object of a function of calc.py" in by_id["__code__"]["unverified"]
    assert "size or times of calc.py" in by_id["os-path-getsize"]["unverified"]
    assert "read calc.py as text" in by_id["get_data"]["unverified"]
    assert "child process (cat calc.py)" in by_id["child-process"]["unverified"]
    assert "read README.md as text" in by_id["README"]["unverified"]
    assert "read calc.py as text" in by_id["symlink"]["unverified"]
    assert "read calc.py as text" in by_id["top"]["unverified"]
    assert "size or times of calc.py" in by_id["sys-settrace"]["unverified"]
    assert code != 1


def test_the_test_side_is_tests_and_their_directories_never_the_code_beside_them(tmp_path):
    files = {
        "pytest.ini": "[pytest]\ntestpaths = tests spec lib\n", "calc.py": "X = 1\n",
        "test_calc.py": "X = 1\n", "pkg/mod.py": "X = 1\n", "pkg/test_mod.py": "X = 1\n",
        "tests/test_x.py": "X = 1\n", "tests/cases.json": "[1]\n", "spec/cases.yml": "X = 1\n",
        "spec/test_s.py": "X = 1\n", "src/testing/util.py": "X = 1\n",
        # A testpaths directory holding code besides tests is not the tests' (toolz's package).
        "lib/__init__.py": "X = 1\n", "lib/core.py": "X = 1\n", "lib/test_core.py": "X = 1\n",
        "lib/data.txt": "1\n",
        # Files only tests import: testing/cases.py, pkg/fixtures.py (a relative import). Not
        # testing/util.py nor testing/__init__.py (the project's lib.py imports them), nor
        # calc.py (only tests import it, but nothing in its path names it as the tests').
        "testing/__init__.py": "X = 1\n", "testing/cases.py": "X = 1\n",
        "testing/util.py": "X = 1\n", "lib.py": "from testing.util import X\n",
        "tests/test_y.py": "from testing.cases import X\nimport calc\n",
        "pkg/fixtures.py": "X = 1\n", "pkg/test_uses.py": "from .fixtures import X\n",
        # Named as a test module but no test collected there: code (a statistics module).
        "stats/t_test.py": "X = 1\n",
        # numpy's layout: testing/ is public code, its tests are in testing/tests/.
        "mylib/testing/__init__.py": "X = 1\n", "mylib/testing/tests/test_c.py": "X = 1\n",
        "mylib/testing/tests/data.json": "[1]\n",
        # Data beside a test module in a folder not named as tests: the code's, maybe.
        "rules/discounts.json": "[1]\n", "rules/test_discounts.py": "X = 1\n",
        "unit_tests/data.json": "[1]\n", "unit_tests/test_u.py": "X = 1\n",
        "gopkg/testdata/case.txt": "1\n", "gopkg/x_test.go": "package x // 1\n",
        "ut/test_dotted.py": "X = 1\n",  # collected as unittest names it
        "uttests/tests/data/cases.json": "[1]\n",  # unittest's dotted ids name tests/ too
        "uttests/tests/test_cases.py": "X = 1\n",
        # A package named like a test ("ab_test"), its tests in ab_test/tests/: only those.
        "ab_test/__init__.py": "X = 1\n", "ab_test/stats.py": "X = 1\n",
        "ab_test/tests/test_stats.py": "X = 1\n",
        # A public helper subpackage (numpy.testing's shape) is code, whoever imports it.
        "mylib/__init__.py": "X = 1\n", "mylib/testing/_asserts.py": "X = 1\n",
        "tests/test_asserts.py": "from mylib.testing._asserts import X\n",
        # A helper in tests_support/ only tests import; a doctest text file collected.
        "tests_support/__init__.py": "", "tests_support/helpers.py": "X = 1\n",
        "tests/test_helped.py": "from tests_support.helpers import X\n",
        "docs/test_usage.txt": ">>> 1\n1\n",
    }  # fmt: skip
    repo = make_repo(tmp_path / "repo", files)
    stage(repo, {path: text.replace("1", "2") for path, text in files.items()})
    git_repo = pygit2.Repository(str(repo))
    base = str(git_repo.revparse_single("HEAD").tree_id)
    head = str(git_repo.index.write_tree())
    collected = ["test_calc.py::t", "pkg/test_mod.py::t", "tests/test_x.py::t",
                 "tests/test_y.py::t", "pkg/test_uses.py::t", "lib/test_core.py::t",
                 "spec/test_s.py::t", "mylib/testing/tests/test_c.py::t",
                 "rules/test_discounts.py::t", "unit_tests/test_u.py::t",
                 "ut.test_dotted.T.test_x", "uttests.tests.test_cases.T.test_x",
                 "ab_test/tests/test_stats.py::t", "tests/test_asserts.py::t",
                 "tests/test_helped.py::t", "docs/test_usage.txt::test_usage.txt"]  # fmt: skip
    assert side_paths(git_repo, base, head, collected) == [
        "ab_test/tests/test_stats.py", "docs/test_usage.txt",
        "gopkg/testdata/case.txt", "gopkg/x_test.go",
        "lib/test_core.py", "mylib/testing/tests/data.json", "mylib/testing/tests/test_c.py",
        "pkg/fixtures.py", "pkg/test_mod.py", "rules/test_discounts.py", "spec/test_s.py",
        "test_calc.py", "testing/cases.py", "tests/cases.json", "tests/test_x.py",
        "tests_support/helpers.py", "unit_tests/data.json", "unit_tests/test_u.py",
        "ut/test_dotted.py", "uttests/tests/data/cases.json", "uttests/tests/test_cases.py",
    ]  # fmt: skip


def test_a_rootdir_below_the_repository_names_its_testpaths(tmp_path):
    files = {
        "sub/pytest.ini": "[pytest]\ntestpaths = e2e-tests\n", "sub/e2e-tests/cases.json": "[1]\n",
        "sub/e2e-tests/test_a.py": "X = 1\n", "sub/calc.py": "X = 1\n",
        "e2e-tests/other.json": "[1]\n",
    }  # fmt: skip
    repo = make_repo(tmp_path / "repo", files)
    stage(repo, {path: text.replace("1", "2") for path, text in files.items()})
    git_repo = pygit2.Repository(str(repo))
    base = str(git_repo.revparse_single("HEAD").tree_id)
    head = str(git_repo.index.write_tree())
    found = side_paths(git_repo, base, head, [], "sub")
    assert found == ["sub/e2e-tests/cases.json", "sub/e2e-tests/test_a.py"]


def test_a_rootdir_below_the_repository_keeps_its_test_directory_on_the_test_side(tmp_path):
    """pytest's ids start at its rootdir (`sub`): `tests/test_more.py` there is the repository's
    `sub/tests/test_more.py`, so `sub/tests/` is a test directory and the change's case file in
    it is its test side too. Read as the root's `tests/`, the base ran the change's new test
    module (pairs `[n, want]`) with the base's case file (`[want, n]`), failed on the same line,
    and the change's break (for n >= 2) read as pre-existing: clean."""
    load = (
        "import json\nimport pathlib\n\nfrom pkg.calc import double\n\n"
        'CASES = json.loads((pathlib.Path(__file__).parent / "cases.json").read_text())\n\n\n'
    )
    first = "def test_first():\n    {}, {} = CASES[0]\n    assert double(n) == want\n"
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(f"{PYTEST} sub"),
        "sub/pytest.ini": PYTEST_INI,
        "sub/pkg/__init__.py": "",
        "sub/pkg/calc.py": "def double(n):\n    return 2 * n\n",
        "sub/tests/cases.json": "[[2, 1]]\n",
        "sub/tests/test_calc.py": load + first.format("want", "n"),
    })  # fmt: skip
    confirm(repo)
    stage(repo, {
        "sub/pkg/calc.py": "def double(n):\n    return 2 * n if n < 2 else 3 * n\n",
        "sub/tests/cases.json": "[[1, 2], [2, 4]]\n",
        "sub/tests/test_calc.py": load + first.format("n", "want"),
        "sub/tests/test_more.py": (
            load + "def test_all():\n    for n, want in CASES:\n        assert double(n) == want\n"
        ),
    })  # fmt: skip
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_more.py::test_all": "regression"}, report
    assert code == 1


def test_an_assertion_calls_words_are_what_its_runner_says():
    """An assertion call's own message, by its whole name: `assertIsNone(x, "msg")` says no
    `is not "msg"`, `assertIsNot` says no `is 2`, `failover()` is no assertion; the expected
    exception or warning as unittest and pytest say it was missing."""

    def said(code: str) -> list[str]:
        texts = written_texts(code)
        assert texts is not None
        return texts

    assert "is not 'msg'" not in said("self.assertIsNone(x, 'msg')\n")
    assert "is 2" not in said("self.assertIsNot(x, 2)\n")
    assert "is not 2" in said("self.assertIs(x, 2)\n")
    assert "!= 3" in said("self.assertEquals(x, 3)\n")
    assert "region" not in said("failover(region)\n")
    assert "region" in said("self.fail(region)\n")
    assert "ValueError not raised" in said("with self.assertRaisesRegex(ValueError, 'x'): f()\n")
    assert "UserWarning not triggered" in said("with self.assertWarns(UserWarning): f()\n")
    assert "DID NOT WARN" in said("with pytest.warns(UserWarning): f()\n")


def test_a_findings_existing_test_is_the_repository_path_it_names_whatever_the_rootdir(tmp_path):
    """The suite runs below `sub` (its rootdir), where `tests/test_area.py` is
    `sub/tests/test_area.py`. A finding names the repository's own `tests/test_area.py`, outside
    the suite, which the change breaks: that file is the one its gates run, not the suite's file
    of the same path below the rootdir (which passes everywhere)."""
    lib = "def area(w):\n    return w * w\n"
    root_test = (
        "from lib import area\n\n\ndef test_area():\n    assert area(3) == 9, 'area is wrong'\n"
    )
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(f"{PYTEST} sub"),
        "sub/pytest.ini": PYTEST_INI,
        "sub/tests/test_area.py": "def test_area():\n    assert 'area is wrong'\n",
        "lib.py": lib,
        "tests/test_area.py": root_test,
        "README.md": "area returns the area of a square of side w\n",
    })  # fmt: skip
    confirm(repo)
    stage(repo, {"lib.py": lib.replace("w * w", "w + w")})
    finding = _finding("", "area is wrong", {"kind": "human"}, "lib.py")
    finding["repro"] = {
        "path": "tests/test_area.py", "test": "tests/test_area.py::test_area",
        "fails": "area is wrong",
    }  # fmt: skip
    _, found = _one_finding(repo, finding)
    gates = {gate["name"]: gate["status"] for gate in found["gates"]}
    assert (gates["fails_as_claimed"], gates["introduced"]) == ("pass", "pass"), found["gates"]
    assert {run["command"].split()[-1] for run in found["runs"]} == {
        "tests/test_area.py::test_area"
    }


def test_testpaths_naming_the_package_keeps_its_code_off_the_test_side(tmp_path):
    """toolz's layout: `testpaths = ["toolz"]`, its tests in `toolz/tests/`. The package's code
    is no test file because pytest looks for tests there: taken as the change's test side, the
    base ran the change's code, every break read as pre-existing, and the review said clean."""
    second = "def second(seq):\n    seq = iter(seq)\n    next(seq)\n    return next(seq)\n"
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config() + '[tool.pytest.ini_options]\ntestpaths = ["toolz"]\n',
         "toolz/__init__.py": "from .itertoolz import second\n", "toolz/itertoolz.py": second,
         "toolz/data.json": "[1]\n", "toolz/tests/cases.json": "[1]\n",
         "toolz/tests/test_itertoolz.py": (
             "from toolz import second\n\n\ndef test_second():\n    assert second('ABC') == 'B'\n"
         )},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"toolz/itertoolz.py": second.replace("    next(seq)\n", "")})
    code, report = _review(repo)
    assert _kinds(report) == {"toolz/tests/test_itertoolz.py::test_second": "regression"}, report
    assert code == 1
    # What the change may carry to the base there: its tests' directory, never the package.
    git_repo = pygit2.Repository(str(repo))
    base = str(git_repo.revparse_single("HEAD").tree_id)
    changed = ["toolz/itertoolz.py", "toolz/data.json", "toolz/tests/cases.json"]
    changed.append("toolz/tests/h.py")
    stage(repo, dict.fromkeys(changed, "X = 2\n"))
    head = str(git_repo.index.write_tree())
    assert side_paths(git_repo, base, head) == ["toolz/tests/cases.json", "toolz/tests/h.py"]


def test_a_stricter_pytest_ini_is_the_tests_and_no_regression(tmp_path):
    """The change only turns warnings into errors in pytest.ini: the code warned before too, so
    the failure is the tests' new demand, pre-existing, not a regression of the code."""
    warns = (
        "import warnings\n\n\ndef add(a, b):\n"
        "    warnings.warn('add is deprecated', DeprecationWarning)\n    return a + b\n"
    )
    repo = _calc_repo(tmp_path, {"calc.py": warns})
    stage(repo, {"pytest.ini": PYTEST_INI + "filterwarnings = error\n"})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "pre_existing"}, report
    assert code == 0


def test_a_reproduction_reading_a_docstring_the_change_rewrote_does_not_block(tmp_path):
    """A docstring is what the code says of itself, not what it does: the module's runs at
    import (`__doc__`), so a test that then called the module's code counted as running the
    change, and a docstring-only change blocked on a test of `calc.__doc__`."""
    documented = '"""Arithmetic: the sum of two numbers."""\n\n\n' + CALC
    repo = _calc_repo(tmp_path, {"calc.py": documented})
    stage(repo, {"calc.py": documented.replace("the sum of two numbers", "helpers")})
    check = (
        "import calc\n\n\ndef test_documented():\n    assert calc.add(2, 3) == 5\n"
        "    assert 'sum' in calc.__doc__, 'calc no longer says it sums'\n"
    )
    oracle = {"kind": "specified", "quote": "add returns the sum", "source": "README.md"}
    code, found = _one_finding(repo, {**_finding(check, "calc no longer says it sums", oracle)})
    assert found["kind"] != "fail", (found["gates"], found["unverified"])
    assert "ran none of the lines the change touched" in (found["unverified"] or ""), found
    assert code != 1


def test_a_module_with_doctests_is_code_and_its_break_blocks(tmp_path):
    """`stats/t_test.py` is named like a test module and, under --doctest-modules, pytest
    collects its doctests: still the code under test. Laid over the base as a test file, the
    base ran the change's code and every break read as pre-existing (clean)."""
    mean = (
        'def mean(xs):\n    """\n    >>> mean([1, 2, 3])\n    2.0\n    """\n'
        "    return sum(xs) / len(xs)\n"
    )
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(f"{PYTEST} --doctest-modules stats tests"),
         "pytest.ini": PYTEST_INI, "stats/__init__.py": "", "stats/t_test.py": mean,
         "tests/test_mean.py": "from stats.t_test import mean\n\n\ndef test_mean():\n"
                               "    assert mean([2, 4]) == 3.0\n"},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"stats/t_test.py": mean.replace("/ len(xs)", "/ (len(xs) + 1)")})
    code, report = _review(repo)
    assert _kinds(report) == {
        "tests/test_mean.py::test_mean": "regression",
        "stats/t_test.py::stats.t_test.mean": "regression",
    }, report
    assert code == 1


def test_the_code_under_test_reading_its_own_files_is_behaviour_and_blocks(tmp_path):
    """Reproductions that show the changed code misbehaving, where the code itself reads files:
    it logs an exception (logging renders the traceback, and linecache reads the changed
    source), or its import loads a data file the change also edited. Neither is the test looking
    at the source: both block, as a reading by the test's own code would not."""
    net = (
        "import json\nimport logging\nimport pathlib\n\nlog = logging.getLogger(__name__)\n"
        "RATES = json.loads((pathlib.Path(__file__).parent / 'rates.json').read_text())\n\n\n"
        "def parse_port(text, default=8080):\n    try:\n        return int(text)\n"
        "    except ValueError:\n        log.exception('bad port %r', text)\n"
        "        return default\n\n\ndef convert(amount, currency):\n"
        "    return amount * RATES[currency]\n"
    )
    repo = _calc_repo(tmp_path, {"net.py": net, "rates.json": '{"EUR": 2}\n'})
    stage(repo, {
        "net.py": net.replace("        return default\n", "        return default if text else 0\n")
        .replace("RATES[currency]", "RATES[currency.lower()]"),
        "rates.json": '{"EUR": 2, "GBP": 3}\n',
    })  # fmt: skip
    oracle = {"kind": "specified", "quote": "add returns the sum", "source": "README.md"}
    port = "from net import parse_port\n\n\ndef test_empty():\n"
    port += "    assert parse_port('') == 8080, 'no fallback'\n"
    rate = "from net import convert\n\n\ndef test_eur():\n    assert convert(1, 'EUR') == 2\n"
    findings = [
        {**_finding(port, "no fallback", oracle, "net.py"), "id": "port",
         "repro": {"path": "tests/test_port.py", "code": port, "fails": "no fallback"}},
        {**_finding(rate, "KeyError", {"kind": "implicit"}, "net.py"), "id": "rate",
         "repro": {"path": "tests/test_rate.py", "code": rate, "fails": "KeyError"}},
    ]  # fmt: skip
    code, report = _review(repo, findings=findings)
    by_id = {f["id"]: f for f in report["findings"]}
    for name in ("port", "rate"):
        assert by_id[name]["kind"] == "fail", (
            name,
            by_id[name]["gates"],
            by_id[name]["unverified"],
        )
    assert code == 1


# (pyproject.toml's section: test_warnings_made_errors_in_addopts_are_the_tests; each kind of
# file and of option is reviewed once, every pairing is testconfig's, read in tests below.)
@pytest.mark.parametrize(
    ("name", "stricter"),
    [("tox.ini", lambda text: text + "filterwarnings = error\n")],
    ids=["tox"],
)  # fmt: skip
def test_a_stricter_pytest_section_of_a_shared_file_is_the_tests(tmp_path, name, stricter):
    """The change only turns warnings into errors in the pytest section of a file it shares with
    the project (tox.ini; pyproject.toml below): the base runs with that section, the rest of the
    file its own, and the failure is pre-existing, as with pytest.ini."""
    warns = (
        "import warnings\n\n\ndef add(a, b):\n"
        "    warnings.warn('add is deprecated', DeprecationWarning)\n    return a + b\n"
    )
    config = eyeful_config()
    files = {"calc.py": warns, "pytest.ini": None}
    if name == "pyproject.toml":
        config = "[project]\nname = 'calc'\nversion = '1'\n\n[tool.pytest.ini_options]\n"
        config += "pythonpath = ['.']\n\n" + eyeful_config()
    else:
        files["tox.ini"] = "[tox]\nenvlist = py\n\n[pytest]\npythonpath = .\n"
    repo = _calc_repo(tmp_path, {k: v for k, v in files.items() if v is not None})
    (repo / "pytest.ini").unlink()
    write(repo, {"pyproject.toml": config})
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "config")
    confirm(repo)
    stage(repo, {name: stricter((repo / name).read_text())})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "pre_existing"}, report
    assert code == 0


def test_a_configuration_moved_from_pytest_ini_to_pyproject_stays_the_bases(tmp_path):
    """The change moves the pytest configuration from pytest.ini into pyproject.toml: laid on
    the base, the deletion of pytest.ini left it no configuration at all (the section's
    `addopts` is the code's layout and stays the base's), and pytest took the working tree's."""
    warns = (
        "import warnings\n\n\ndef add(a, b):\n"
        "    warnings.warn('add is deprecated', DeprecationWarning)\n    return a + b\n"
    )
    ini = PYTEST_INI + "addopts = -W error::DeprecationWarning\n"
    repo = _calc_repo(tmp_path, {"calc.py": warns, "pytest.ini": ini})
    section = "\n[tool.pytest.ini_options]\npythonpath = ['.']\n"
    section += "addopts = '-W error::DeprecationWarning'\n"
    (repo / "pytest.ini").unlink()
    stage(repo, {"pyproject.toml": (repo / "pyproject.toml").read_text() + section})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "pre_existing"}, report
    assert code == 0


OLD_BUG = "def add(a, b):\n    return a + b if a >= 0 else a - b\n"  # wrong for a < 0
STRICTER = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def test_a_test_module_named_by_python_files_is_the_tests(tmp_path):
    """`python_files = check_*.py`: the module the change made stricter was collected, but its
    name is not pytest's default, and the base ran its old version: a block."""
    ini = PYTEST_INI + "python_files = check_*.py\n"
    repo = _calc_repo(tmp_path, {"pytest.ini": ini, "calc.py": OLD_BUG,
                                 "checks/check_calc.py": STRICTER})  # fmt: skip
    stage(repo, {"checks/check_calc.py": STRICTER + "    assert add(-1, 2) == 1\n"})
    code, report = _review(repo)
    assert _kinds(report) == {"checks/check_calc.py::test_add": "pre_existing"}, report
    assert code == 0


def test_a_module_of_code_with_tests_written_in_it_stays_the_code(tmp_path):
    """`pytest calc.py tests` collects the tests written in calc.py: collected, it is still the
    code, and a break of it blocks."""
    inline = OLD_BUG + "\n\ndef test_inline():\n    assert add(1, 2) == 3\n"
    config = eyeful_config(f"{PYTEST} calc.py tests")
    repo = _calc_repo(tmp_path, {"pyproject.toml": config, "calc.py": inline})
    stage(repo, {"calc.py": inline.replace("a + b if", "a - b if")})
    code, report = _review(repo)
    assert _kinds(report).get("calc.py::test_inline") == "regression", report
    assert code == 1


CASES_TEST = (
    "from calc import add\nfrom tests_support import CASES\n\n\ndef test_add():\n"
    "    for a, b, total in CASES:\n        assert add(a, b) == total\n"
)
FIXTURE_TEST = (
    "from calc import add\n\n\ndef test_add(cases):\n"
    "    for a, b, total in cases:\n        assert add(a, b) == total\n"
)
PLUGIN = "import pytest\n\n\n@pytest.fixture\ndef cases():\n    return [(1, 2, 3)]\n"


def test_a_tests_support_module_beside_the_code_is_the_tests(tmp_path):
    """`tests_support.py` at the root beside `calc.py`, imported by tests alone: its name says
    it is the tests', whatever sits beside it (only an ambiguous `testing.py` may be public)."""
    repo = _calc_repo(tmp_path, {"calc.py": OLD_BUG, "tests_support.py": "CASES = [(1, 2, 3)]\n",
                                 "tests/test_add.py": CASES_TEST})  # fmt: skip
    stage(repo, {"tests_support.py": "CASES = [(1, 2, 3), (-1, 2, 1)]\n"})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "pre_existing"}, report
    assert code == 0


def test_a_fixture_plugin_named_in_pytest_plugins_is_the_tests(tmp_path):
    """`pytest_plugins = ["testing.fixtures"]` in a conftest loads the fixture the change made
    stricter: a plugin named as a string is no import statement, and the base ran the old one."""
    repo = _calc_repo(tmp_path, {"calc.py": OLD_BUG, "testing/__init__.py": "",
                                 "testing/fixtures.py": PLUGIN,
                                 "conftest.py": 'pytest_plugins = ["testing.fixtures"]\n',
                                 "tests/test_add.py": FIXTURE_TEST})  # fmt: skip
    stage(repo, {"testing/fixtures.py": PLUGIN.replace("(1, 2, 3)]", "(1, 2, 3), (-1, 2, 1)]")})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "pre_existing"}, report
    assert code == 0


CODE_NAMED_AS_TESTS = {
    "a module of code with a test written in it": (
        {
            "stats/__init__.py": "",
            "stats/ab_test.py": (
                "def lift(a, b):\n    return (a - b) / b\n\n\n"
                "def test_lift_sign():\n    assert lift(2, 1) > 0\n"
            ),
            "tests/test_stats.py": (
                "from stats.ab_test import lift\n\n\n"
                "def test_lift():\n    assert lift(3, 2) == 0.5\n"
            ),
        },
        {
            "stats/ab_test.py": (
                "def lift(a, b):\n    return (a - b) / a\n\n\n"
                "def test_lift_sign():\n    assert lift(2, 1) > 0\n"
            )
        },
        "tests/test_stats.py::test_lift",
    ),
    "code under a testdata directory": (
        {
            "geo/__init__.py": "",
            "geo/testdata/__init__.py": "def points():\n    return [0, 1]\n",
            "geo/api.py": (
                "from geo.testdata import points\n\n\ndef demo():\n    return len(points())\n"
            ),
            "tests/test_geo.py": (
                "from geo.api import demo\n\n\ndef test_demo():\n    assert demo() == 2\n"
            ),
        },
        {"geo/testdata/__init__.py": "def points():\n    return [0]\n"},
        "tests/test_geo.py::test_demo",
    ),
    "a deleted module of code named test_": (
        {
            "pkg/__init__.py": "",
            "pkg/test_signal.py": "def snr(a, b):\n    return a / b\n",
            "pkg/api.py": (
                "from pkg.test_signal import snr\n\n\ndef ratio(a, b):\n    return snr(a, b)\n"
            ),
            "tests/test_api.py": (
                "from pkg.api import ratio\n\n\ndef test_ratio():\n    assert ratio(4, 2) == 2\n"
            ),
        },
        {"pkg/test_signal.py": None},
        "tests/test_api.py",
    ),
}


@pytest.mark.parametrize("case", sorted(CODE_NAMED_AS_TESTS))
def test_code_named_as_tests_that_other_code_imports_stays_the_code(tmp_path, case):
    """A Python file on the test side by its name alone (not in a test directory) that another
    file imports is code: laid over the base, the change's break ran there too (clean)."""
    files, change, test = CODE_NAMED_AS_TESTS[case]
    repo = _calc_repo(tmp_path, files)
    for path, text in change.items():
        if text is None:
            git(repo, "rm", "-q", path)
    stage(repo, {p: t for p, t in change.items() if t is not None})
    code, report = _review(repo)
    assert _kinds(report).get(test) == "regression", report
    assert code == 1


@pytest.mark.parametrize("named", [False, "pyproject", "setup.cfg"])
def test_a_project_named_as_test_helpers_is_code(tmp_path, named):
    """The project is a library called `testfixtures` (or `testtools`): its package's name says
    tests, and only tests import it; taken for a test helper, its break was pre-existing."""
    files = {"testfixtures/__init__.py": "from testfixtures.compare import compare\n",
             "testfixtures/compare.py": "def compare(a, b):\n    return a == b\n",
             "tests/test_compare.py": (
                 "from testfixtures import compare\n\n\ndef test_equal():\n"
                 "    assert compare(1, 1)\n")}  # fmt: skip
    if named == "pyproject":  # beside other code: the distribution's name says which is it
        files["pyproject.toml"] = "[project]\nname = 'testfixtures'\nversion = '1'\n\n"
        files["pyproject.toml"] += eyeful_config()
    elif named == "setup.cfg":  # its name unquoted
        files["setup.cfg"] = "[metadata]\nname = testfixtures\n"
    repo = _calc_repo(tmp_path, files)
    if not named:
        git(repo, "rm", "-q", "calc.py", "tests/test_add.py")
        git(repo, "commit", "-q", "-m", "only the library")
    stage(repo, {"testfixtures/compare.py": "def compare(a, b):\n    return a != b\n"})
    code, report = _review(repo)
    assert _kinds(report).get("tests/test_compare.py::test_equal") == "regression", report
    assert code == 1


LOADS = {
    "a-literal": "importlib.import_module('fixtures.users').USERS",
    "a-setting": "[importlib.import_module(name) for name in SEEDS][0].USERS",
    "relative": "importlib.import_module('.users', package='fixtures').USERS",
}


@pytest.mark.parametrize("loads", list(LOADS))
def test_a_module_the_code_loads_by_its_name_is_code_whatever_its_folder(tmp_path, loads):
    """helper-61: the app loads its seed data with `importlib.import_module("fixtures.users")`
    and the tests import it too; by its folder's name, and read only by import statements, it
    was the tests' own, so the base ran the change's copy, failed alike, and the break of the
    app was pre-existing: clean. helper-65: by a name in a list of settings, or relative."""
    app = (
        "import importlib\n\nSEEDS = ['fixtures.users']\n\n\ndef admins():\n"
        f"    users = {LOADS[loads]}\n"
        "    return [u for u, role in users if role == 'admin']\n"
    )
    test = (
        "import app\nfrom fixtures.users import USERS\n\n\ndef test_has_admin():\n"
        "    assert app.admins() == ['ada']\n\n\ndef test_users():\n    assert len(USERS) == 2\n"
    )
    users = "USERS = [('ada', 'admin'), ('bob', 'user')]\n"
    repo = _calc_repo(tmp_path, {"app.py": app, "fixtures/users.py": users,
                                 "tests/test_app.py": test})  # fmt: skip
    stage(repo, {"fixtures/users.py": users.replace("'admin'", "'user'")})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_app.py::test_has_admin": "regression"}, report
    assert code == 1


def test_a_string_naming_a_test_helper_outside_an_import_leaves_it_the_tests(tmp_path):
    """helper-64: a script's output path and a nox session's `-m tests_support.cases` name the
    tests' case list in strings; counted as imports, the list was the code's, so the base kept
    its old cases and a new case the old code fails too blocked."""
    files = {
        "double.py": "def double(x):\n    return abs(x) * 2\n",
        "tests_support/__init__.py": "",
        "tests_support/cases.py": "CASES = [(1, 2), (2, 4)]\n",
        "tests/test_double.py": "from double import double\nfrom tests_support.cases import CASES"
        "\n\n\ndef test_all():\n    for a, b in CASES:\n        assert double(a) == b\n",
        "scripts/gen_cases.py": '"""Regenerate the cases."""\nOUT = "tests_support/cases.py"\n',
        "noxfile.py": "def cases(session):\n"
        "    session.run('python', '-m', 'tests_support.cases')\n",
    }
    repo = _calc_repo(tmp_path, files)
    stage(repo, {"tests_support/cases.py": "CASES = [(1, 2), (2, 4), (-1, -2)]\n",
                 "double.py": files["double.py"] + "\n# doubling\n"})  # fmt: skip
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_double.py::test_all": "pre_existing"}, report
    assert code == 0


def test_a_reproduction_asserting_a_precondition_first_still_blocks(tmp_path):
    """helper-64: the base fails the reproduction's first assertion (no yen sign there), the
    change its second (the decimals it brought): both AssertionErrors of the test's own file,
    which says nothing of whether the base has the problem."""
    prices = 'def price(amount, currency="USD"):\n    return "$%.2f" % amount\n'
    repo = _calc_repo(tmp_path, {"prices.py": prices})
    yen = ('SIGNS = {"USD": "$", "JPY": "Y"}\n\n\ndef price(amount, currency="USD"):\n'
           '    return "%s%.2f" % (SIGNS[currency], amount)\n')  # fmt: skip
    stage(repo, {"prices.py": yen, "README.md": "Yen prices have no decimals.\n"})
    code = (
        "from prices import price\n\n\ndef test_yen():\n    p = price(100, 'JPY')\n"
        "    assert p.startswith('Y'), 'no yen sign'\n"
        "    assert p == 'Y100', 'yen shown with decimals'\n"
    )
    oracle = {"kind": "specified", "quote": "Yen prices have no decimals", "source": "README.md"}
    exit_code, found = _one_finding(
        repo, _finding(code, "yen shown with decimals", oracle, "prices.py")
    )
    assert found["kind"] == "fail", found
    assert exit_code == 1


def test_a_public_testing_module_beside_a_root_conftest_stays_the_code(tmp_path):
    """`testing.py` beside `calc.py` is the project's public helper (as `click.testing` is); a
    root `conftest.py` beside them made the folder look like one of tests, and its break hid."""
    testing = "from calc import add\n\n\ndef total(*values):\n    return sum(values)\n"
    test = "from testing import total\n\n\ndef test_total():\n    assert total(1, 2) == 3\n"
    conftest = "import pytest\n\n\n@pytest.fixture\ndef one():\n    return 1\n"
    repo = _calc_repo(tmp_path, {"testing.py": testing, "conftest.py": conftest,
                                 "tests/test_total.py": test})  # fmt: skip
    stage(repo, {"testing.py": testing.replace("sum(values)", "sum(values) + 1")})
    code, report = _review(repo)
    assert _kinds(report).get("tests/test_total.py::test_total") == "regression", report
    assert code == 1


def test_a_test_module_another_test_module_imports_is_still_the_tests(tmp_path):
    """`pkg/test_b.py` imports CASES from `pkg/test_a.py`: a test module imported by another
    test module is not code, and the change that made test_a stricter is no regression."""
    test_a = (
        "from pkg.calc import add\n\nCASES = [(1, 2, 3)]\n\n\n"
        "def test_add():\n    assert add(-1, 2) == 1\n"
    )
    test_b = (
        "from pkg.calc import add\nfrom pkg.test_a import CASES\n\n\n"
        "def test_cases():\n    for a, b, total in CASES:\n        assert add(a, b) == total\n"
    )
    repo = _calc_repo(tmp_path, {"pkg/__init__.py": "", "pkg/calc.py": OLD_BUG,
                                 "pkg/test_a.py": test_a.replace("add(-1, 2) == 1", "True"),
                                 "pkg/test_b.py": test_b})  # fmt: skip
    stage(repo, {"pkg/test_a.py": test_a})
    code, report = _review(repo)
    assert _kinds(report) == {"pkg/test_a.py::test_add": "pre_existing"}, report
    assert code == 0


POLLUTES = "import registry\n\n\ndef test_override():\n    registry.HANDLERS['double'] = 3\n"
RESETS = "import registry\n\n\ndef test_reset():\n    registry.HANDLERS['double'] = 2\n"
USES = "import registry\n\n\ndef test_double():\n    assert registry.HANDLERS['double'] == 2\n"


@pytest.mark.parametrize("how", ["delete", "rename"])
def test_a_test_module_the_change_deleted_is_gone_on_the_base_too(tmp_path, how):
    """The change deletes (or renames) a top-level test module whose test restored what an
    earlier one changed: the base kept it, ran another suite, and the order-dependent failure
    blocked."""
    repo = _calc_repo(tmp_path, {"registry.py": "HANDLERS = {'double': 2}\n",
                                 "test_0_override.py": POLLUTES, "test_1_reset.py": RESETS,
                                 "test_2_use.py": USES})  # fmt: skip
    git(repo, "rm", "-q", "test_1_reset.py")
    stage(repo, {"test_9_reset.py": RESETS} if how == "rename" else {})
    code, report = _review(repo)
    assert report["regressions"] == [], report
    assert code != 1


UT_STRICTER = (
    "import unittest\n\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n"
)


def test_a_unittest_module_found_from_a_start_directory_is_the_tests(tmp_path):
    """`discover -s tests`: the ids (`test_calc.TestAdd.test_add`) start at `tests/`, and the
    edited `tests/test_calc.py` was not taken for the test module they name."""
    unittest = f"{shlex.quote(PYTHON)} -m unittest"
    config = eyeful_config(f"{unittest} discover -s tests",
                           test_one=f"env PYTHONPATH=tests {unittest} {{test}}")  # fmt: skip
    repo = _calc_repo(tmp_path, {"pyproject.toml": config, "calc.py": OLD_BUG,
                                 "tests/test_calc.py": UT_STRICTER})  # fmt: skip
    stricter = UT_STRICTER + "        self.assertEqual(add(-1, 2), 1)\n"
    stage(repo, {"tests/test_calc.py": stricter})
    code, report = _review(repo)
    assert _kinds(report) == {"test_calc.TestAdd.test_add": "pre_existing"}, report
    assert code == 0


@pytest.mark.parametrize("name", ["pyproject.toml"])  # (pytest.ini: filterwarnings, above)
def test_warnings_made_errors_in_addopts_are_the_tests(tmp_path, name):
    """`-W error::DeprecationWarning` added to `addopts`: the tests' demand, as `filterwarnings`
    is; `addopts` stayed the base's, and the old code's warning blocked a config-only change."""
    warns = (
        "import warnings\n\n\ndef add(a, b):\n"
        "    warnings.warn('add is deprecated', DeprecationWarning)\n    return a + b\n"
    )
    if name == "pytest.ini":
        files = {"pytest.ini": PYTEST_INI + "addopts = -ra\n"}
    else:
        section = "\n[tool.pytest.ini_options]\npythonpath = ['.']\naddopts = '-ra'\n"
        files = {"pyproject.toml": eyeful_config() + section}
    repo = _calc_repo(tmp_path, {"calc.py": warns, **files})
    if name == "pyproject.toml":
        (repo / "pytest.ini").unlink()
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "config")
    text = (repo / name).read_text()
    stage(repo, {name: text.replace("-ra", "-ra -W error::DeprecationWarning")})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "pre_existing"}, report
    assert code == 0


def test_addopts_moves_only_for_words_of_demand():
    from eyeful.testconfig import overlaid

    ini = "[pytest]\naddopts = -ra\n"
    made = overlaid("pytest.ini", ini, ini.replace("-ra", "-ra -W error --strict-markers"))
    assert made == "[pytest]\naddopts = -ra -W error --strict-markers\n"
    others = ("-ra -k add", "-ra -p no:cacheprovider", "-ra tests", "-ra --import-mode=append",
              "-ra -vvopythonpath=src", "-ra -rap no:x", "-ra -vvx", "-ra -Werror -x")  # fmt: skip
    for other in others:
        assert overlaid("pytest.ini", ini, ini.replace("-ra", other)) is None, other


def test_pytest_9s_toml_configuration_moves_and_differs_as_the_ini_files_do():
    """pytest.toml's `[pytest]` table and pyproject.toml's `[tool.pytest]` (pytest 9, native
    TOML) are pytest's configuration like the INI sections: a change to a demand moves to the
    base, one to the layout does not, and any change to them decides collection."""
    from eyeful.testconfig import overlaid, section_differs

    toml = '[pytest]\npythonpath = ["."]\n'
    stricter = toml + 'filterwarnings = ["error"]\n'
    assert overlaid("pytest.toml", "# ours\n" + toml, stricter) == "# ours\n" + stricter
    assert overlaid(".pytest.toml", toml, toml.replace('"."', '"src"')) is None
    native = '[project]\nname = "x"\n\n[tool.pytest]\npythonpath = ["."]\n'
    assert section_differs("pyproject.toml", native, native + 'addopts = ["--ignore=t"]\n')
    assert not section_differs("pyproject.toml", native, native.replace('"x"', '"y"'))


def test_a_shared_files_pytest_section_moves_alone_or_not_at_all():
    from eyeful.testconfig import overlaid
    from eyeful.tomlcompat import tomllib

    base = (
        "[project]\nname = 'x'\nversion = '1'\n\n[tool.pytest.ini_options]\n"
        "filterwarnings = [\n  'ignore::UserWarning',\n]\n\n[tool.ruff]\nline-length = 100\n"
    )
    head = base.replace("version = '1'", "version = '2'").replace(
        "'ignore::UserWarning',", "'error', 'ignore::UserWarning',"
    )
    made = overlaid("pyproject.toml", base, head)
    assert made is not None
    data = tomllib.loads(made)
    assert data["project"]["version"] == "1"  # the base's
    warnings = data["tool"]["pytest"]["ini_options"]["filterwarnings"]
    assert warnings == ["error", "ignore::UserWarning"]  # the change's
    assert data["tool"]["ruff"] == {"line-length": 100}
    # Added by the change, removed by it, or alike: appended, taken out, nothing.
    plain = "[project]\nname = 'x'\n"
    strict = plain + "\n[tool.pytest.ini_options]\nxfail_strict = true\n"
    added = overlaid("pyproject.toml", plain, strict)
    assert added is not None
    assert tomllib.loads(added)["tool"]["pytest"]["ini_options"] == {"xfail_strict": True}
    removed = overlaid("pyproject.toml", strict, plain)
    assert removed is not None and "pytest" not in tomllib.loads(removed).get("tool", {})
    assert overlaid("pyproject.toml", base, base.replace("'1'", "'3'")) is None
    # Where the code is imported from and which tests exist are the code's layout, never moved:
    # a pythonpath the change moved with its modules made a broken import look pre-existing.
    for option in ("pythonpath = ['src']", "addopts = '-p pkg.plugin'", "testpaths = ['t']"):
        assert overlaid("pyproject.toml", strict, f"{strict}{option}\n") is None, option
    # setup.cfg's [tool:pytest], the other sections the base's.
    cfg = "[metadata]\nname = x\n\n[tool:pytest]\nxfail_strict = false\n\n[flake8]\nmax = 1\n"
    changed = cfg.replace("= false", "= true").replace("max = 1", "max = 2")
    assert overlaid("setup.cfg", cfg, changed) == cfg.replace("= false", "= true")
    # What cannot be read back as the base's file with the change's section is not used.
    assert overlaid("pyproject.toml", base, "[tool.pytest.ini_options\n") is None


def test_a_pythonpath_the_change_moved_with_a_broken_module_still_blocks(tmp_path):
    """The change moves the code to src/ under another name and points pythonpath there: the
    import breaks. pythonpath says where the code is, not what the tests demand: the base keeps
    its own, passes, and the break blocks (laid over the base, it failed there too: clean)."""
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": "[tool.pytest.ini_options]\npythonpath = ['lib']\n\n" + eyeful_config(),
         "lib/calc.py": CALC, "tests/test_add.py": ADD_TEST,
         "tests/test_misc.py": "def test_other():\n    assert True\n"},
    )  # fmt: skip
    confirm(repo)
    (repo / "src").mkdir()
    git(repo, "mv", "lib/calc.py", "src/calcs.py")
    config = (repo / "pyproject.toml").read_text().replace("['lib']", "['src']")
    stage(repo, {"pyproject.toml": config})
    code, report = _review(repo)
    assert "tests/test_add.py" in {f["test"] for f in report["regressions"]}, report
    assert code == 1


def test_a_look_at_the_source_through_a_helper_or_a_traceback_is_the_tests(tmp_path):
    """Representation-only reproductions that read the changed source through an unchanged
    helper under tests/, through the project's own function handed the path, or by rendering a
    traceback themselves: each is the test looking, a question, never a block. Running the
    changed file as a script (runpy) is what it does: that one blocks."""
    helper = "import inspect\n\n\ndef source_of(obj):\n    return inspect.getsource(obj)\n"
    files = {"tests/helpers/__init__.py": "", "tests/helpers/source.py": helper,
             "textio.py": "def read_text(path):\n    with open(path) as f:\n"
                          "        return f.read()\n",
             "tool.py": "import sys\n\nprint(int(sys.argv[1]) * 2)\n"}  # fmt: skip
    repo = _calc_repo(tmp_path, files, extra="")
    write(repo, {"pytest.ini": "[pytest]\npythonpath = . tests\n"})
    git(repo, "commit", "-qam", "helpers")
    stage(repo, {"calc.py": REFACTORED, "tool.py": "import sys\n\nprint(int(sys.argv[1]) * 3)\n"})
    oracle = {"kind": "specified", "quote": "add returns the sum", "source": "README.md"}
    checks = {
        "helper": "from helpers.source import source_of\n\n\ndef test_it():\n"
        "    assert 'total' not in source_of(add), 'add was refactored'\n",
        "textio": "import textio\n\n\ndef test_it():\n"
        "    assert 'total' not in textio.read_text(calc.__file__), 'add was refactored'\n",
        "traceback": "import traceback\n\n\ndef test_it():\n    try:\n        add(None, 1)\n"
        "    except TypeError:\n        text = traceback.format_exc()\n"
        "    assert 'total' not in text, 'add was refactored'\n",
    }
    findings = [
        {**_finding(f"import calc\nfrom calc import add\n{code}", "add was refactored", oracle),
         "id": name, "repro": {"path": f"tests/test_{name}.py", "fails": "add was refactored",
                               "code": f"import calc\nfrom calc import add\n{code}"}}
        for name, code in checks.items()
    ]  # fmt: skip
    script = (
        "import runpy\nimport sys\n\n\ndef test_doubles(capsys):\n    sys.argv = ['tool.py', '2']\n"
        "    runpy.run_path('tool.py', run_name='__main__')\n"
        "    assert capsys.readouterr().out == '4\\n', 'tool does not double'\n"
    )
    findings.append({**_finding(script, "tool does not double", oracle, "tool.py"),
                     "id": "runpy", "repro": {"path": "tests/test_tool.py", "code": script,
                                              "fails": "tool does not double"}})  # fmt: skip
    code, report = _review(repo, findings=findings)
    by_id = {f["id"]: f for f in report["findings"]}
    for name in checks:
        assert by_id[name]["kind"] != "fail", (name, by_id[name]["gates"])
        assert "read calc.py as text" in (by_id[name]["unverified"] or ""), by_id[name]
    assert by_id["runpy"]["kind"] == "fail", (by_id["runpy"]["gates"], by_id["runpy"]["unverified"])
    assert code == 1


# A test that fails on the base already (a distribution that is not installed), rewritten by the
# change to call a helper the same change adds: on the base's code that version fails by another
# cause (the helper is missing), which says nothing of the change's code. The base's own version
# of the test failed on the base's code by the change's very cause: pre-existing (a helper bot
# found this blocking toolz's `test_has_version`).
UTIL_ONLY = "def double(x):\n    return 2 * x\n"
UTIL_HELPER = (
    UTIL_ONLY + "\n\ndef installed_version(dist='eyeful-no-such-dist'):\n"
    "    from importlib.metadata import version\n\n    return version(dist)\n"
)
HAS_VERSION_TEST = (
    "from importlib.metadata import version\n\n\ndef test_has_version():\n"
    "    assert version('eyeful-no-such-dist')\n"
)
HAS_VERSION_NEW = (
    "import pkg.util\n\n\ndef test_has_version():\n    assert pkg.util.installed_version()\n"
)

DOUBLE_TEST = "import pkg.util\n\n\ndef test_double():\n    assert pkg.util.double(2) == 4\n"


def _version_repo(tmp_path: Path) -> Path:
    """A package with `double` whose version test fails (not installed), and a test of
    `double`, confirmed."""
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "pkg/__init__.py": "",
         "pkg/util.py": UTIL_ONLY, "tests/test_version.py": HAS_VERSION_TEST,
         "tests/test_double.py": DOUBLE_TEST},
    )  # fmt: skip
    confirm(repo)
    return repo


def test_a_failing_test_rewritten_to_use_a_new_helper_fails_as_before_and_does_not_block(
    tmp_path,
):
    repo = _version_repo(tmp_path)
    stage(repo, {"pkg/util.py": UTIL_HELPER, "tests/test_version.py": HAS_VERSION_NEW})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_version.py::test_has_version": "pre_existing"}, report
    [found] = report["other_failures"]
    assert (
        "the base's own version of the test failed on the base's code" in (found["confirmation"])
    ), found
    assert code == 0
    # Where the base's own version passed on the base's code and fails on the change's, the
    # other cause on the base still blocks: the change broke what the test asked before.
    uses_helper = "    assert pkg.util.installed_version\n    assert"
    checks_more = DOUBLE_TEST.replace("    assert", uses_helper)
    stage(repo, {"pkg/util.py": UTIL_HELPER.replace("2 * x", "3 * x"),
                 "tests/test_double.py": checks_more})  # fmt: skip
    code, report = _review(repo)
    assert _kinds(report)["tests/test_double.py::test_double"] == "regression", report
    assert code == 1, report


def test_a_package_whose_only_module_is_named_fixtures_is_the_code(tmp_path):
    # A sports app's match schedule, `league/fixtures.py`, only the tests import: named as the
    # tests' are, but beside an empty `__init__.py` alone it is all the code there is (a helper
    # bot found this called pre-existing).
    schedule = (
        "def round_robin(teams):\n"
        "    return [(a, b) for i, a in enumerate(teams) for b in teams[i + 1 :]]\n"
    )
    test = (
        "from league.fixtures import round_robin\n\n\ndef test_pairs():\n"
        "    assert len(round_robin(['a', 'b', 'c', 'd'])) == 6\n"
    )
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "league/__init__.py": "",
         "league/fixtures.py": schedule, "tests/test_league.py": test},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"league/fixtures.py": schedule.replace("i + 1", "i + 2")})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_league.py::test_pairs": "regression"}, report
    assert code == 1


ROUTER = (
    "ROUTES = {}\n\n\ndef route(func):\n    ROUTES[func.__doc__.split()[0]] = func\n"
    "    return func\n"
)
VIEWS = '''from router import route


def title(s):
    """Title-case s.

    >>> title("ada")
    'Ada'
    """
    return s.title()


@route
def hello():
    """/hello  -- says hello"""
    return title("hello")
'''


def test_a_docstring_without_examples_in_a_module_of_doctests_is_the_codes(tmp_path):
    # An edit to a module's docstrings alone is its doctests' where it edits examples; a route
    # read from a handler's docstring by a decorator in another module (which never names the
    # module) is the code's: the review called the broken route pre-existing (a helper bot).
    test = "import views\nfrom router import ROUTES\n\n\ndef test_hello():\n"
    test += "    assert ROUTES['/hello']() == 'Hello'\n"
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(),
         "pytest.ini": PYTEST_INI + "addopts = --doctest-modules\ntestpaths = tests views.py\n",
         "router.py": ROUTER, "views.py": VIEWS, "tests/test_routes.py": test},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"views.py": VIEWS.replace('"""/hello', '"""/helo')})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_routes.py::test_hello": "regression"}, report
    assert code == 1
    # An example's edit is the doctests' still: the doctest fails on both sides alike.
    stage(repo, {"views.py": VIEWS.replace("'Ada'", "'ADA'")})
    code, report = _review(repo)
    assert _kinds(report) == {"views.py::views.title": "pre_existing"}, report
    assert code == 0
    # A docstring holding an example and the route both: its prose edited is the code's.
    routed = VIEWS.replace(
        '"""/hello  -- says hello"""', '"""/hello\n\n    >>> hello()\n    \'Hello\'\n    """'
    )
    assert routed != VIEWS
    git(repo, "add", "-A")
    git(repo, "reset", "-q", "--hard")
    (repo / "views.py").write_text(routed, encoding="utf-8")
    git(repo, "commit", "-qam", "the route's docstring holds an example")
    stage(repo, {"views.py": routed.replace('"""/hello', '"""/helo')})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_routes.py::test_hello": "regression"}, report
    assert code == 1


def test_an_edited_test_the_bases_code_cannot_collect_is_judged_by_its_own_version(tmp_path):
    # The change's test imports the new helper at its top: on the base's code its module does
    # not import, and nothing was known of the test there (a question, exit 3). Its own version
    # says what the test did before: failed by the change's cause (pre-existing), or passed on
    # the base's code and fails on the change's (a regression).
    repo = _version_repo(tmp_path)
    at_top = (
        "from pkg.util import installed_version\n\n\ndef test_has_version():\n"
        "    assert installed_version()\n"
    )
    stage(repo, {"pkg/util.py": UTIL_HELPER, "tests/test_version.py": at_top})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_version.py::test_has_version": "pre_existing"}, report
    [found] = report["other_failures"]  # its line says why: the base's side told nothing
    assert (
        "; the base's own version of the test failed on the base's code" in (found["confirmation"])
    ), found
    assert code == 0
    imports_helper = "from pkg.util import installed_version  # noqa: F401\n" + DOUBLE_TEST
    stage(repo, {"pkg/util.py": UTIL_HELPER.replace("2 * x", "3 * x"),
                 "tests/test_double.py": imports_helper})  # fmt: skip
    judged = {
        "tests/test_double.py::test_double": "regression",
        "tests/test_version.py::test_has_version": "pre_existing",
    }
    code, report = _review(repo)
    assert _kinds(report) == judged, report
    assert code == 1
    # A test the change left as it was, run by id in one command with one whose module does not
    # import on the base's code: pytest refuses the whole command, so each runs on its own.
    stage(repo, {"tests/test_version.py": HAS_VERSION_TEST})
    code, report = _review(repo)
    assert _kinds(report) == judged, report
    assert code == 1


def test_a_test_helper_package_of_a_project_with_no_python_code_is_the_tests(tmp_path):
    # The code is a shell script; `tests_support/fixtures.py` (beside an empty `__init__.py`) is
    # the tests' helper, its cases edited wrong: the tests' side, pre-existing. Being all the
    # Python there is made it the code, and the review blocked (a helper bot).
    helper = (
        "import subprocess\n\nPAIRS = [(1, 2, 3), (2, 2, 4)]\n\n\ndef run_add(a, b):\n"
        "    return int(subprocess.check_output(['sh', 'bin/add', str(a), str(b)]))\n"
    )
    test = (
        "from tests_support.fixtures import PAIRS, run_add\n\n\ndef test_add():\n"
        "    for a, b, c in PAIRS:\n        assert run_add(a, b) == c\n"
    )
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI,
         "bin/add": "#!/bin/sh\necho $(( $1 + $2 ))\n", "tests_support/__init__.py": "",
         "tests_support/fixtures.py": helper, "tests/test_add.py": test},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"tests_support/fixtures.py": helper.replace("(2, 2, 4)", "(2, 2, 5)")})
    code, report = _review(repo)
    assert _kinds(report) == {"tests/test_add.py::test_add": "pre_existing"}, report
    assert code == 0


MEAN = "def mean(values):\n    return sum(values) / len(values)\n"
MEAN_TEST = "import stats\n\n\ndef test_mean():\n    assert stats.mean([1, 2, 3]) == 2\n"
EMPTY = "import stats\n\n\ndef test_empty():\n    stats.average([])\n"


@pytest.mark.parametrize("how", ["renamed", "added"])
def test_a_finding_in_code_the_change_only_renamed_does_not_block(tmp_path, how):
    """helper-80: the change renames `mean` to `average`, its body alike; a finding says
    `average([])` divides by zero. On the base the reproduction fails otherwise (no `average`),
    and the failure was counted as introduced: a block. What raised on the change is the base's
    `mean`, under another name: not shown to be brought by the change. Where the change adds
    `average` beside `mean` (a function of its own), it blocks."""
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(), "stats.py": MEAN,
                                         "pytest.ini": PYTEST_INI,
                                         "tests/test_stats.py": MEAN_TEST})  # fmt: skip
    confirm(repo)
    if how == "renamed":
        stage(repo, {"stats.py": MEAN.replace("mean", "average"),
                     "tests/test_stats.py": MEAN_TEST.replace("mean", "average")})  # fmt: skip
    else:
        stage(repo, {"stats.py": MEAN + "\n\n" + MEAN.replace("mean", "average")})
    finding = _finding(EMPTY, "division by zero", {"kind": "implicit"}, "stats.py")
    code, found = _one_finding(repo, finding)
    gates = {gate["name"]: gate["status"] for gate in found["gates"]}
    if how == "renamed":
        assert gates["introduced"] == "fail", found["gates"]
        assert found["kind"] != "fail", found
        assert code != 1, found
    else:
        assert gates["introduced"] == "pass", found["gates"]
        assert code == 1, found
