"""A finding must run the change: its test blocks only if, on the change, it executed a line the
change touched (issue 20, point 4). The probe traces only the changed Python files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eyeful.gitutil import find_repo
from eyeful.hunks import changed_lines, touched
from eyeful.snapshot import open_repository
from tests.core import review
from tests.gitrepo import (
    PYTEST_INI,
    confirm,
    eyeful_config,
    git,
    make_repo,
    stage,
)

CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
REFACTORED = (
    "def add(a, b):\n    total = a + b\n    return total\n\n\ndef mul(a, b):\n    return a * b\n"
)
BROKEN = CALC.replace("return a + b", "return a - b")

MUL_TEST = "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"

READS_TEXT = """from pathlib import Path


def test_spelling():
    source = Path("calc.py").read_text()
    assert "return a + b" in source, "add no longer returns the sum"
"""
CALLS = """from calc import add


def test_sum():
    assert add(2, 3) == 5, "add no longer returns the sum"
"""


def _finding(code: str) -> dict:
    return {
        "id": "f1", "expert": "correctness", "severity": "error", "evidence": "test",
        "path": "calc.py", "line": 2, "title": "add broke", "body": "add no longer sums.",
        "oracle": {"kind": "specified", "quote": "add returns the sum of its arguments",
                   "source": "README.md"},
        "repro": {"path": "tests/test_repro.py", "code": code,
                  "fails": "add no longer returns the sum"},
    }  # fmt: skip


def _review(tmp_path: Path, change: str, repro: str) -> tuple[int, dict]:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "README.md": "add returns the sum of its arguments\n",
            "calc.py": CALC,
            "tests/test_mul.py": MUL_TEST,
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": change})
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([_finding(repro)]), encoding="utf-8")
    done = review(repo, format="json", findings=findings)
    return done.exit_code, done.json


def test_a_reproduction_that_never_runs_the_changed_code_does_not_block(tmp_path):
    # A harmless refactor; the test reads calc.py as text and asserts on its spelling.
    code, report = _review(tmp_path, REFACTORED, READS_TEXT)
    (finding,) = report["findings"]
    assert finding["kind"] == "review", finding
    # It ran none of the changed lines either (tests/test_hardening.py has that case alone).
    assert "its test read calc.py as text" in finding["unverified"]
    assert not finding["fix_verified"]
    assert code == 0


def test_a_reproduction_that_runs_the_changed_code_still_blocks(tmp_path):
    code, report = _review(tmp_path, BROKEN, CALLS)
    (finding,) = report["findings"]
    assert finding["kind"] == "fail", finding
    change_runs = [r for r in finding["runs"] if r["side"] == "change" and r["name"] == "test_one"]
    # Only the first run on the change is traced (a tracer must not decide how the others end).
    assert change_runs[0]["executed"] == {"calc.py": [2]}, change_runs
    assert len(change_runs) == 2 and change_runs[1]["executed"] is None, change_runs
    assert code == 1


def test_changed_lines_count_the_lines_around_a_deletion(tmp_path):
    repo = make_repo(tmp_path / "repo", {"a.py": "1\n2\n3\n4\n", "b.txt": "x\n", "gone.py": "x\n"})
    base = git(repo, "rev-parse", "HEAD^{tree}").strip()
    stage(repo, {"a.py": "1\n3\nnew\n4\n", "b.txt": "y\n", "c.py": "c\nd\n"})
    git(repo, "rm", "-q", "--cached", "gone.py")
    head = git(repo, "write-tree").strip()
    changed = changed_lines(open_repository(find_repo(repo)), base, head)
    # 2 was deleted (lines 1 and 2 now stand around it), 3 became "new"; c.py added whole;
    # b.txt is not Python; gone.py has no lines left.
    assert changed == {"a.py": frozenset({1, 2, 3}), "c.py": frozenset({1, 2})}
    assert touched({"a.py": [3]}, changed) is True
    assert touched({"a.py": [4]}, changed) is False
    assert touched(None, changed) is None
    # A split index: libgit2 cannot read it, and reads the index for the files' attributes when
    # it makes a patch; the lines then come from the blobs, the same lines.
    git(repo, "update-index", "--split-index")
    assert list((repo / ".git").glob("sharedindex.*"))
    assert changed_lines(open_repository(find_repo(repo)), base, head) == changed


STATEMENTS = """X = (
    1,
    2,
)


def f(a,
      b=3):
    y = a
    return (y,
            b)


match X:
    case (1, 2):
        z = 1
    case _:
        z = 2
"""


@pytest.mark.parametrize(
    ("edit", "lines"),
    [
        (("    2,\n", "    7,\n"), {1, 3}),  # a line of a constant: its statement's first line
        (("      b=3):", "      b=4):"), {7, 8}),  # a default: the def's line
        (("    y = a\n", "    y = -a\n"), {9}),  # a body's line alone, never the def's
        (("            b)", "            -b)"), {10, 11}),
        (("        z = 2", "        z = 3"), {18}),  # a case's line, never the match's
    ],
)
def test_a_changed_line_counts_its_statements_first_line(tmp_path, edit, lines):
    """A tracer sees only a statement's first line where its other lines hold no code of their
    own (a tuple of constants, a string): the statement running is the change running."""
    repo = make_repo(tmp_path / "repo", {"s.py": STATEMENTS})
    base = git(repo, "rev-parse", "HEAD^{tree}").strip()
    stage(repo, {"s.py": STATEMENTS.replace(*edit)})
    head = git(repo, "write-tree").strip()
    assert changed_lines(open_repository(find_repo(repo)), base, head) == {"s.py": lines}


OFFSET = "OFFSET = 0\n\n\ndef add(a, b):\n    return a + b + OFFSET\n\n\n" + (
    "def mul(a, b):\n    return a * b\n"
)


def test_a_reproduction_that_enters_an_edited_function_ran_the_change(tmp_path):
    """helper-74: the change writes an assignment after `add`'s return, which runs never, and
    makes OFFSET local to the whole of `add`: its unchanged first line now raises
    UnboundLocalError. Its test ran none of the changed lines, but entered the function the
    change edited, whose code is not the base's: it ran the change, and blocks."""
    repo = make_repo(tmp_path / "repo", {
        "pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI,
        "README.md": "add returns the sum of its arguments\n", "calc.py": OFFSET,
    })  # fmt: skip
    confirm(repo)
    stage(
        repo,
        {"calc.py": OFFSET.replace("OFFSET\n\n\ndef mul", "OFFSET\n    OFFSET = 1\n\n\ndef mul")},
    )
    sums = (
        "from calc import add\n\n\ndef test_sum():\n    try:\n        total = add(2, 3)\n"
        "    except NameError:\n        total = None\n"
        "    assert total == 5, 'add no longer returns the sum'\n"
    )
    finding = _finding(sums) | {"line": 5}
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([finding]), encoding="utf-8")
    done = review(repo, format="json", findings=findings)
    (reported,) = done.json["findings"]
    assert reported["kind"] == "fail", (reported["unverified"], reported["gates"])
    assert done.exit_code == 1, done
