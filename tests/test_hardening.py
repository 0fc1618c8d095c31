"""What an adversarial run found in the evidence, context and sandbox work, each a test that
failed before its fix: wrong verdicts both ways, and a way out of the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eyeful import sandbox
from eyeful.config import load_config
from eyeful.trust import shown_settings
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
    user_state,
)

needs_bwrap = pytest.mark.skipif(
    sandbox.unavailable() is not None, reason=f"no sandbox here: {sandbox.unavailable()}"
)

CALC = "def add(a, b):\n    return a + b\n"
ADD_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _review(repo: Path, **options: object) -> tuple[int, dict]:
    done = review(repo, format="json", **options)
    return done.exit_code, done.json


def _finding(code: str, fails: str, oracle: dict | None = None, path: str = "calc.py") -> dict:
    oracle = oracle or {
        "kind": "specified", "quote": "add returns the sum of its arguments", "source": "README.md"
    }  # fmt: skip
    return {
        "id": "f1", "expert": "correctness", "severity": "error", "evidence": "test",
        "path": path, "line": 1, "title": "a problem", "body": "a claim.", "oracle": oracle,
        "repro": {"path": "tests/test_repro.py", "code": code, "fails": fails},
    }  # fmt: skip


def _with_findings(tmp_path: Path, repo: Path, finding: dict) -> tuple[int, dict]:
    path = tmp_path / "findings.json"
    path.write_text(json.dumps([finding]), encoding="utf-8")
    return _review(repo, findings=path)


@needs_bwrap
def test_a_reproduction_cannot_repoint_its_worktrees_git_file(tmp_path):
    # Rewritten, the worktree's `.git` would point eyeful's own unsandboxed git commands there at
    # a git directory of the reproduction's making (core.fsmonitor runs any command).
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "calc.py": CALC,
         "README.md": "add returns the sum of its arguments\n", "tests/test_add.py": ADD_TEST},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    code = """from pathlib import Path

from calc import add


def test_sum():
    Path(".git").write_text("gitdir: /nowhere\\n")
    assert add(2, 3) == 5, "add no longer returns the sum"
"""
    before = user_state(repo)
    _with_findings(tmp_path, repo, _finding(code, "add no longer returns the sum"))
    for dot_git in (repo / ".git" / "eyeful" / "worktrees").glob("*/.git"):
        assert "nowhere" not in dot_git.read_text(), dot_git
    again, report = _review(repo)  # the worktrees still work
    assert again == 1 and report["regressions"], report
    assert user_state(repo) == before


def test_ids_that_do_not_reach_the_test_make_no_new_test(tmp_path):
    # pytest's rootdir is tests/ (its ini there): ids are relative to it, not to the repository,
    # so no run on either side finds them; that is no evidence the base lacks the test.
    test = f"{PYTEST} tests"
    config = eyeful_config(test, test_one=f"{PYTEST} {{test}}")
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": config, "tests/pytest.ini": "[pytest]\npythonpath = ..\n",
         "calc.py": CALC, "tests/test_mod.py": ADD_TEST},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    code, report = _review(repo)
    kinds = {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}
    assert "new_test" not in kinds.values(), kinds
    assert code != 0


def test_no_test_one_is_derived_from_unittest_discover_with_a_start_directory(tmp_path):
    test = f"{PYTHON} -m unittest discover -s tests"
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": eyeful_config(test), "calc.py": CALC})
    shown = dict(shown_settings(load_config(repo), repo))
    # Nothing is derived, and the confirmation says why (issue 35, point 3).
    assert shown["test_one"].startswith("none: "), shown
    assert "(-s without -t)" in shown["test_one"], shown


REGISTRY = (
    "_registry = {}\n\n\ndef register(name, value):\n    _registry[name] = value\n\n\n"
    "def lookup(name):\n    return _registry[name]\n"
)
REGISTRY_TESTS = (
    "from mod import lookup, register\n\n\n"
    'def test_a():\n    register("x", 1)\n\n\n'
    'def test_b():\n    assert lookup("x") == 1\n    assert lookup("x") == 1\n'
)


def test_a_failure_alone_on_both_sides_is_judged_with_its_file_before_it_is_pre_existing(tmp_path):
    # test_b needs test_a's state: alone it fails on both sides with the same KeyError. The
    # change makes lookup pop the name; with its file, test_b fails on the change only.
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(extra="reruns = 2"), "pytest.ini": PYTEST_INI,
         "mod.py": REGISTRY, "tests/test_mod.py": REGISTRY_TESTS},
    )  # fmt: skip
    confirm(repo)
    stage(
        repo, {"mod.py": REGISTRY.replace("return _registry[name]", "return _registry.pop(name)")}
    )
    code, report = _review(repo)
    kinds = {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}
    assert kinds == {"tests/test_mod.py::test_b": "regression"}, report
    assert code == 1


SHOP = "def total(prices):\n    return sum(prices)\n"
VALIDATING = (
    "def total(prices):\n    if any(p < 0 for p in prices):\n"
    '        raise ValueError("prices must not be negative")\n    return sum(prices)\n'
)


def _shop(tmp_path: Path, change: str) -> Path:
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "shop.py": SHOP,
         "README.md": "the total of the prices\n",
         "tests/test_shop.py": "from shop import total\n\n\ndef test_total():\n"
                               "    assert total([1, 2]) == 3\n"},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"shop.py": change})
    return repo


def test_an_implicit_oracle_is_not_granted_to_a_raise_the_change_wrote(tmp_path):
    repo = _shop(tmp_path, VALIDATING)
    code = "from shop import total\n\n\ndef test_negative():\n    assert total([5, -2]) == 3\n"
    finding = _finding(code, "prices must not be negative", {"kind": "implicit"}, "shop.py")
    exit_code, report = _with_findings(tmp_path, repo, finding)
    (found,) = report["findings"]
    assert found["kind"] != "fail", found
    assert "a line the change wrote" in found["oracle"]["note"], found["oracle"]
    assert exit_code != 1


def test_a_line_run_only_at_import_is_not_running_the_change(tmp_path):
    # A no-op change to a module-level line; the reproduction has a child process read the source
    # without naming the file (what the probe does not see: README; its size, its text and the
    # routes it does see have their own tests), not what the code does.
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI,
         "shop.py": "LIMIT = 100\n\n\n" + SHOP, "README.md": "the total of the prices\n",
         "tests/test_shop.py": "from shop import total\n\n\ndef test_total():\n"
                               "    assert total([1, 2]) == 3\n"},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"shop.py": "LIMIT = 10_0\n\n\n" + SHOP})
    code = (
        "import subprocess\nimport sys\n\nimport shop\n\n\ndef test_limit():\n"
        "    said = subprocess.run([sys.executable, '-c', 'import inspect, shop; "
        "print(inspect.getsource(shop))'], capture_output=True, text=True).stdout\n"
        "    assert 'LIMIT = 100' in said, 'LIMIT was changed'\n"
    )
    oracle = {"kind": "specified", "quote": "the total of the prices", "source": "README.md"}
    exit_code, report = _with_findings(tmp_path, repo, _finding(code, "LIMIT was changed", oracle))
    (found,) = report["findings"]
    assert found["kind"] != "fail", found
    assert "ran none of the lines the change touched" in found["unverified"], found
    assert exit_code != 1


MEMO = """import functools


def memo(method):
    cache = {}

    @functools.wraps(method)
    def wrapper(*args):
        if args not in cache:
            cache[args] = method(*args)
        return cache[args]

    wrapper.cache = cache
    return wrapper
"""
MEMO_TEST = (
    "from memo import memo\n\n\n@memo\ndef square(x):\n    return x * x\n\n\n"
    "def test_square():\n    assert square(3) == 9\n"
)


def test_a_decorator_the_reproductions_module_applies_is_running_the_change(tmp_path):
    # A real fix reverted (cachetools 86352ae): the change is in what a decorator does when it is
    # applied, which happens while the test's own module is imported; the test then uses it.
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "memo.py": MEMO,
         "README.md": "a memoized function exposes its cache as `cache`\n",
         "tests/test_memo.py": MEMO_TEST},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"memo.py": MEMO.replace("    wrapper.cache = cache\n", "")})
    code = (
        "from memo import memo\n\n\n@memo\ndef double(x):\n    return 2 * x\n\n\n"
        "def test_cache_is_exposed():\n    assert double(2) == 4\n"
        "    assert hasattr(double, 'cache'), 'the cache is not exposed'\n"
    )
    oracle = {"kind": "specified", "source": "README.md",
              "quote": "a memoized function exposes its cache as `cache`"}  # fmt: skip
    finding = _finding(code, "the cache is not exposed", oracle, "memo.py")
    exit_code, report = _with_findings(tmp_path, repo, finding)
    (found,) = report["findings"]
    assert found["kind"] == "fail", found.get("unverified")
    assert exit_code == 1


SHAPES = """class Square:
    def __init__(self, side):
        self.side = side

    def area(self):
        return self.side * self.side

    corners = 4
"""


def test_a_method_the_change_deleted_from_a_class_is_running_the_change(tmp_path):
    # A real fix reverted (toolz ad9f297): a deletion in a class body, whose neighbours run only
    # while the class is defined, at import.
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "shapes.py": SHAPES,
         "README.md": "a square has an area\n",
         "tests/test_shapes.py": "from shapes import Square\n\n\ndef test_corners():\n"
                                 "    assert Square(2).corners == 4\n"},
    )  # fmt: skip
    confirm(repo)
    area = "    def area(self):\n        return self.side * self.side\n\n"
    stage(repo, {"shapes.py": SHAPES.replace(area, "")})
    code = (
        "from shapes import Square\n\n\ndef test_area():\n"
        "    assert hasattr(Square(3), 'area'), 'a square has no area'\n"
    )
    oracle = {"kind": "specified", "quote": "a square has an area", "source": "README.md"}
    finding = _finding(code, "a square has no area", oracle, "shapes.py")
    exit_code, report = _with_findings(tmp_path, repo, finding)
    (found,) = report["findings"]
    assert found["kind"] == "fail", found.get("unverified")
    assert exit_code == 1


TYPES = """NAMES = {
    "null": "NoneType",
    "number": "int",
}


def type_name(kind):
    return NAMES[kind]
"""


def test_a_module_constant_read_by_the_code_the_test_calls_is_running_the_change(tmp_path):
    # A real fix reverted (jmespath 4a521f8): a line of a module-level table, run only at import,
    # read by the module's function the test calls.
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "types_.py": TYPES,
         "README.md": "the type of null is NoneType\n",
         "tests/test_types.py": "from types_ import type_name\n\n\ndef test_number():\n"
                                "    assert type_name('number') == 'int'\n"},
    )  # fmt: skip
    confirm(repo)
    stage(repo, {"types_.py": TYPES.replace('"NoneType"', '"None"')})
    code = (
        "from types_ import type_name\n\n\ndef test_null():\n"
        "    assert type_name('null') == 'NoneType', 'null is not NoneType'\n"
    )
    oracle = {"kind": "specified", "quote": "the type of null is NoneType", "source": "README.md"}
    finding = _finding(code, "null is not NoneType", oracle, "types_.py")
    exit_code, report = _with_findings(tmp_path, repo, finding)
    (found,) = report["findings"]
    assert found["kind"] == "fail", found.get("unverified")
    assert exit_code == 1


def test_a_reproduction_that_reads_the_changed_source_as_text_does_not_block(tmp_path):
    # The test calls the module (so its constant, run at import, counts as run) and then fails on
    # the source's text: a no-op change must not block.
    repo = _shop(tmp_path, "LIMIT = 10_0\n\n\n" + SHOP.replace("sum(prices)", "sum( prices )"))
    code = (
        "import inspect\n\nimport shop\n\n\ndef test_source():\n"
        "    assert shop.total([1]) == 1\n"
        "    assert 'sum(prices)' in inspect.getsource(shop), 'the source was changed'\n"
    )
    oracle = {"kind": "specified", "quote": "the total of the prices", "source": "README.md"}
    finding = _finding(code, "the source was changed", oracle, "shop.py")
    exit_code, report = _with_findings(tmp_path, repo, finding)
    (found,) = report["findings"]
    assert found["kind"] != "fail", found
    assert "read shop.py as text" in found["unverified"], found["unverified"]
    assert exit_code != 1


def test_a_reproduction_importing_the_changed_module_in_its_body_still_blocks(tmp_path):
    # An import inside the test reads the file too, through importlib: not a reading as text.
    repo = _shop(tmp_path, SHOP.replace("sum(prices)", "sum(prices) + 1"))
    code = (
        "def test_total():\n    from shop import total\n\n"
        "    assert total([1]) == 1, 'the total is wrong'\n"
    )
    oracle = {"kind": "specified", "quote": "the total of the prices", "source": "README.md"}
    exit_code, report = _with_findings(tmp_path, repo, _finding(code, "the total is wrong", oracle))
    (found,) = report["findings"]
    assert found["kind"] == "fail", found.get("unverified")
    assert exit_code == 1


@needs_bwrap
def test_a_reproduction_does_not_see_pythonlike_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHON_TOKEN", "pysecret")
    repo = _shop(tmp_path, SHOP.replace("sum(prices)", "sum(prices) + 1"))
    code = (
        "import os\n\nfrom shop import total\n\n\ndef test_total():\n"
        "    assert total([1]) == 1, f\"wrong total (token: {os.environ.get('PYTHON_TOKEN')})\"\n"
    )
    oracle = {"kind": "specified", "quote": "the total of the prices", "source": "README.md"}
    _, report = _with_findings(tmp_path, repo, _finding(code, "wrong total", oracle, "shop.py"))
    assert "pysecret" not in json.dumps(report)
    assert "token: None" in json.dumps(report)


def test_a_test_file_the_change_renamed_is_the_same_test_on_the_base(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(), "pytest.ini": PYTEST_INI, "calc.py": CALC,
         "tests/test_mod.py": ADD_TEST},
    )  # fmt: skip
    confirm(repo)
    git(repo, "mv", "tests/test_mod.py", "tests/test_add.py")
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    code, report = _review(repo)
    kinds = {f["test"]: f["kind"] for f in report["regressions"] + report["other_failures"]}
    assert kinds == {"tests/test_add.py::test_add": "regression"}, report
    # The base side runs the change's test files (issue 33): the renamed file, by its new name.
    base_alone = [r["command"] for r in report["runs"] if r["side"] == "base"]
    assert base_alone and all(c.endswith("tests/test_add.py::test_add") for c in base_alone)
    assert code == 1


CACHING = """import json


class CacheError(Exception):
    pass


def total(prices):
    try:
        with open("/var/tmp/eyeful-test-total-cache.json", "w") as handle:
            json.dump(prices, handle)
    except OSError:
        raise CacheError("total cache unavailable") from None
    return sum(prices)
"""


@needs_bwrap
def test_a_failure_the_sandbox_caused_is_no_finding_even_when_the_code_hides_its_error(tmp_path):
    # The change writes outside the worktree and wraps the error: the sandbox refused the write,
    # whatever the message says; outside the sandbox, total() works.
    repo = _shop(tmp_path, CACHING)
    code = "from shop import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n"
    finding = _finding(code, "total cache unavailable", {"kind": "implicit"}, "shop.py")
    exit_code, report = _with_findings(tmp_path, repo, finding)
    (found,) = report["findings"]
    assert found["kind"] != "fail", found
    runs = [r for r in found["runs"] if r["side"] == "change" and r["name"] == "test_one"]
    assert runs and all(r["status"] == "ERROR" for r in runs), runs
    assert all("write to /var/tmp/eyeful-test-total-cache.json" in r["reason"] for r in runs)
    assert exit_code != 1
