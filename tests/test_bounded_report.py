"""Bounded reports (issue 35, point 7): failures that ran the same changed lines and fail with the
same exception type are one cause; one message raised from different frames is one cause; the
excerpt is the failing frames from the runner's record, never pytest's long form; the JSON keeps
every test. Real repositories reviewed through the core (tests/core.py); each case failed on the
code before (30 failing test functions were 30 causes, 190+ lines)."""

from __future__ import annotations

import pytest

from tests.core import Reviewed, review
from tests.gitrepo import PYTEST_INI, confirm, eyeful_config, make_repo, stage

FILES, PER_FILE = 20, 10  # 200 test functions, each its own, all calling the one function

MOD = "def f(k):\n    return k + 1\n"


def _test_file(index: int) -> str:
    out = ["from mod import f\n"]
    for k in range(index * PER_FILE, (index + 1) * PER_FILE):
        out.append(f"\ndef test_f{k}():\n    assert f({k}) == {k + 1}\n")
    return "".join(out)


@pytest.fixture(scope="module")
def reviews(tmp_path_factory) -> dict[int, Reviewed]:
    """One repository, two staged changes of `mod.py:2`: the first breaks `f` for the 30 tests
    of k < 30, the second for all 200."""
    files = {f"tests/test_f{i}.py": _test_file(i) for i in range(FILES)}
    repo = make_repo(
        tmp_path_factory.mktemp("bounded") / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "mod.py": MOD, **files},
    )
    confirm(repo)
    out = {}
    stage(repo, {"mod.py": "def f(k):\n    return k + 1 if k >= 30 else k\n"})
    out[30] = review(repo, format="json")
    stage(repo, {"mod.py": "def f(k):\n    return k\n"})
    out[200] = review(repo, format="json")
    return out


def _fences(markdown: str) -> list[str]:
    """Each fenced block's lines, without the item's indent."""
    blocks = [f.removeprefix("text\n") for f in markdown.split("```")[1::2]]
    return ["\n".join(line.removeprefix("  ") for line in b.splitlines()) for b in blocks]


@pytest.mark.parametrize(("failing", "limit"), [(30, 60), (200, 80)])
def test_tests_that_ran_the_one_changed_line_and_fail_alike_are_one_short_item(
    reviews, failing, limit
):
    done = reviews[failing]
    lines = done.markdown.splitlines()
    assert done.exit_code == 1, done.markdown
    assert lines[0].endswith(f": 1 blocking issue ({failing} failing tests)"), lines[0]
    assert (
        f"{failing} tests fail on the change and pass on the base, one cause: they fail with "
        "`AssertionError` after running `mod.py:2`, which the change touched"
    ) in done.markdown, done.markdown
    assert len(lines) <= limit, (len(lines), done.markdown)
    regressions = done.json["regressions"]
    assert len(regressions) == failing  # the JSON keeps every test
    assert {r["test"] for r in regressions} == {
        f"tests/test_f{k // PER_FILE}.py::test_f{k}" for k in range(failing)
    }
    assert all(r["ran"] == {"mod.py": [2]} for r in regressions), regressions[0]
    assert len({r["cause"] for r in regressions}) == 1
    runs = done.json["runs"]  # traced alone on the change; the suite run never (issue 37)
    assert [r["executed"] for r in runs if r["name"] == "test"] == [None]
    assert [r["executed"] for r in runs if r["name"] == "test_one" and r["side"] == "change"] \
        == [{"mod.py": [2]}]  # fmt: skip


def test_the_excerpt_is_the_failing_frames_not_the_test_body_echoed(reviews):
    done = reviews[30]
    [fence] = _fences(done.markdown)
    shown = fence.strip().splitlines()
    assert len(shown) <= 15, fence
    assert shown[0] == "tests/test_f0.py:4 in test_f0", fence
    assert shown[1].strip() == "assert f(0) == 1", fence
    assert "AssertionError: assert 0 == 1" in fence
    assert "def test_f0" not in fence and ">" not in fence  # no echo of pytest's long form
    first = next(r for r in done.json["regressions"] if r["test"].endswith("::test_f0"))
    assert first["excerpt"] == fence.strip()


CALC = """LIMIT = 10


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def check_a(x):
    if x > LIMIT:
        raise UserWarning("over the limit")


def check_b(x):
    if x > LIMIT:
        raise UserWarning("over the limit")
"""

CALC_TESTS = """from calc import add, check_a, check_b, mul


def test_add_one():
    assert add(1, 1) == 2


def test_add_two():
    assert add(2, 2) == 4


def test_add_lists():
    assert add([1], [2]) == [1, 2]


def test_mul():
    assert mul(2, 3) == 6


def test_check_a():
    check_a(5)


def test_check_b():
    check_b(5)
"""


def test_different_causes_stay_apart_and_one_message_from_two_frames_is_one(tmp_path):
    """`add`'s two assertions ran its changed line: one cause; a TypeError from that line is
    another; `mul`'s assertion ran another changed line: another; the one UserWarning message
    raised from two functions (after a changed constant, run at import only): one."""
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "calc.py": CALC,
         "tests/test_calc.py": CALC_TESTS},
    )  # fmt: skip
    confirm(repo)
    broken = CALC.replace("LIMIT = 10", "LIMIT = 0").replace("a + b", "a - b")
    stage(repo, {"calc.py": broken.replace("a * b", "a + b")})
    done = review(repo, format="json")
    text = done.markdown
    assert done.exit_code == 1, text
    assert text.splitlines()[0].endswith(": 4 blocking issues (6 failing tests)"), text
    assert text.count("**issue (blocking):**") == 4, text
    assert (
        "2 tests fail on the change and pass on the base, one cause: they fail with "
        "`AssertionError` after running `calc.py:5`, which the change touched"
    ) in text
    assert "`tests/test_calc.py::test_add_lists` fails on the change" in text
    assert "`tests/test_calc.py::test_mul` fails on the change" in text
    assert (
        "2 tests fail on the change and pass on the base, one cause: `UserWarning: over the limit` "
        "at `calc.py:14` and 1 other line"
    ) in text
    by_test = {r["test"].split("::")[1]: r for r in done.json["regressions"]}
    assert by_test["test_add_lists"]["ran"] == {"calc.py": [5]}
    assert by_test["test_mul"]["ran"] == {"calc.py": [9]}
    assert by_test["test_check_a"]["ran"] == {}  # traced: it ran no changed line
    causes = {name: r["cause"] for name, r in by_test.items()}
    assert causes["test_add_one"] == causes["test_add_two"]
    assert causes["test_check_a"] == causes["test_check_b"]
    assert len(set(causes.values())) == 4, causes


def _record(root, frames: int, file: str = "mod.py"):
    from eyeful.records import ChainLink, FailureRecord, Frame

    return FailureRecord(
        chain=[ChainLink(type="RecursionError", message="too deep\nsecond line"),
               ChainLink(type="KeyError", message="'k'")],
        frames=[Frame(file=str(root / file), line=1 + n % 3, function=f"f{n}")
                for n in range(frames)],
    )  # fmt: skip


def test_an_excerpt_keeps_the_innermost_frames_in_fifteen_lines(tmp_path):
    from eyeful.evidence import failure_of

    (tmp_path / "mod.py").write_text("def f():\n    return g()\n\n", encoding="utf-8")
    shown = failure_of(_record(tmp_path, 40), root=tmp_path).excerpt.splitlines()
    assert 14 <= len(shown) <= 15, shown  # the next frame's two lines did not fit
    assert shown[0] == "... 34 frames before"
    assert shown[-5:] == ["mod.py:1 in f39", "    def f():", "RecursionError: too deep",
                          "second line", "caused by KeyError: 'k'"]  # fmt: skip
    assert "mod.py:3 in f38" in shown  # a blank source line: the frame alone
    # A module that did not import: pytest's own text (a SyntaxError's caret) stands.
    assert failure_of(_record(tmp_path, 2), root=tmp_path, collection=True).excerpt == ""


def test_an_excerpts_source_is_read_only_from_a_regular_file(tmp_path):
    """What a run left at a frame's path (code nobody confirmed ran there) may be a FIFO: the
    excerpt names the frame without its source, and is never left waiting."""
    import os
    import threading

    from eyeful.evidence import failure_of

    os.mkfifo(tmp_path / "mod.py")
    got: list[str] = []
    reader = threading.Thread(
        target=lambda: got.append(failure_of(_record(tmp_path, 1), root=tmp_path).excerpt),
        daemon=True,
    )
    reader.start()
    reader.join(timeout=30)
    if reader.is_alive():  # let the blocked open go, then fail
        with open(tmp_path / "mod.py", "wb"):
            pass
        pytest.fail("the excerpt waited on a FIFO")
    assert got == ["mod.py:1 in f0\nRecursionError: too deep\nsecond line\ncaused by KeyError: 'k'"]


def test_an_excerpts_frame_naming_a_directory_has_no_source(tmp_path):
    """A frame whose file is a directory in the checkout (code compiled under a directory's
    name): the frame without its source, not an internal error."""
    from eyeful.evidence import failure_of

    (tmp_path / "mod.py").mkdir()
    excerpt = failure_of(_record(tmp_path, 1), root=tmp_path).excerpt
    assert (
        excerpt == "mod.py:1 in f0\nRecursionError: too deep\nsecond line\ncaused by KeyError: 'k'"
    )


def test_past_five_causes_a_cause_of_changed_lines_is_named_by_them():
    from eyeful.failures import Failure, report_cause
    from eyeful.regressions import TestFailure
    from eyeful.report import Report, SideInfo, to_markdown

    def failing(n: int, ran: dict[str, list[int]] | None) -> TestFailure:
        said = Failure(type="KeyError", message=f"KeyError: 'k{n}'", raised_in=f"m{n}.py",
                       raised_line=n + 1)  # fmt: skip
        return TestFailure(test=f"tests/test_m.py::test_m{n}", kind="regression", blocking=True,
                           on_change="failed", on_base="passed", excerpt="E   KeyError",
                           message=said.message, cause=report_cause(said, ran),
                           ran=ran)  # fmt: skip

    regressions = [failing(n, None) for n in range(6)]
    regressions.append(failing(6, {"a.py": [7, 1, 2, 3], "b.py": [4]}))
    report = Report(base=SideInfo(tree="b" * 40, commit="c" * 40, label="HEAD", short="ccccccc"),
                    head=SideInfo(tree="a" * 40, commit=None, label="staged", short="aaaaaaa"),
                    regressions=regressions).finish()  # fmt: skip
    folded = to_markdown(report).split("2 more causes (2 tests)")[1]
    assert (
        "  - `tests/test_m.py::test_m6`: it fails with `KeyError` after running `a.py:1-3,7`, "
        "`b.py:4`, which the change touched"
    ) in folded, folded


def test_an_exception_that_says_nothing_but_its_type_keeps_where_it_was_raised():
    """A bare `raise ValueError` (or an `assert` pytest did not rewrite) in two places says
    only its type: two causes, not one, where a message would have joined them."""
    from eyeful.failures import Failure, report_cause

    def bare(file: str, line: int, message: str) -> Failure:
        return Failure(type="ValueError", message=message, raised_in=file, raised_line=line)

    assert report_cause(bare("pkg/a.py", 3, "ValueError")) != report_cause(
        bare("pkg/b.py", 90, "ValueError")
    )
    assert report_cause(bare("pkg/a.py", 3, "")) != report_cause(bare("pkg/b.py", 90, ""))
    said = "ValueError: no negatives"
    assert report_cause(bare("pkg/a.py", 3, said)) == report_cause(bare("pkg/b.py", 90, said))
