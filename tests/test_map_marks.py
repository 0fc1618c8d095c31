"""The map's marks (eyeful/data/probe/eyeful_probe_marks.py, where no coverage tool measures):
the repository's modules compiled with a mark at each function's start instead of a tracer.
What they promise:
the tests see the code as written (docstrings, annotations, line numbers, names, source), nothing
marked is written to ``__pycache__``, and what ran is known per test, at a function's level, with
no tracer a test could take away."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from eyeful.pytest_records import MAP_VAR, plugin_env, read_pytest

CODE = '''# -*- coding: latin-1 -*-
"""The module's docstring: caf\xe9."""

from __future__ import annotations

import functools
import warnings

WORD = "caf\xe9"


def documented(value: Missing) -> int:
    """A function's docstring."""
    return 1


def first_line():
    import sys

    return sys._getframe().f_lineno


def raises():
    raise ValueError("here")


def warns():
    warnings.warn("careful", UserWarning, stacklevel=1)


def counter():
    yield 1
    yield 2


@functools.lru_cache(maxsize=None)
def decorated(n):
    return n * 2


class Shape:
    """A class."""

    side = 3

    def area(self):
        return self.side**2


SQUARE = lambda n: n * n  # noqa: E731
'''

TESTS = """import inspect
import sys
import traceback
import warnings

import pytest

from pkg import code
from pkg.code import SQUARE, Shape, counter, decorated, documented, first_line, raises, warns


def test_docstrings_stay():
    assert code.__doc__ == "The module's docstring: caf\\xe9."
    assert documented.__doc__ == "A function's docstring."
    assert Shape.__doc__ == "A class."
    assert code.WORD == "caf\\xe9"


def test_future_annotations_stay_strings():
    assert documented.__annotations__ == {"value": "Missing", "return": "int"}


def test_line_numbers_stay():
    assert first_line() == 20
    assert documented.__code__.co_firstlineno == 12
    assert decorated.__wrapped__.__code__.co_firstlineno == 36
    with pytest.raises(ValueError) as caught:
        raises()
    assert traceback.extract_tb(caught.tb)[-1].lineno == 24
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warns()
    assert seen[0].lineno == 28


def test_source_and_names_stay():
    assert inspect.getsource(documented).startswith("def documented(")
    assert not [name for name in dir(code) if "eyeful" in name]


def test_behaviour_stays():
    assert list(counter()) == [1, 2]
    assert decorated(4) == 8
    assert Shape().area() == 9
    assert SQUARE(5) == 25


def test_code_rebuilt_without_builtins_runs():
    import types

    assert types.FunctionType(code.documented.__code__, {"__builtins__": {}})(0) == 1


def test_the_tracer_taken_away():
    sys.settrace(None)
    assert Shape().area() == 9


def test_an_import_looks_as_it_does_unwatched():
    import pkg.importer

    assert pkg.importer.IMPORTER == __name__  # its importer found past the import system
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert __import__("pkg.importer", fromlist=["OLD"]).OLD == 1
    assert len(seen) == 1  # the module's __getattr__ asked once


def test_a_lazy_module_loads_on_first_use():
    import pkg.lazy_home

    assert pkg.lazy_home.EVENTS == []
    assert pkg.lazy_home.heavy.VALUE == 1
    assert pkg.lazy_home.EVENTS == ["heavy loaded"]


def test_an_import_near_the_recursion_limit():
    def bare(n):
        return 1 if n == 0 else 1 + bare(n - 1)

    def importing(n):
        import json  # noqa: F401

        return 1 if n == 0 else 1 + importing(n - 1)

    low, high = 0, sys.getrecursionlimit()  # the deepest bare call that works: low
    while high - low > 1:
        middle = (low + high) // 2
        try:
            bare(middle)
            low = middle
        except RecursionError:
            high = middle
    assert importing(low - 1) == low
"""

LAZY_HOME = """import importlib.util
import sys

EVENTS = []


def lazy(name):
    spec = importlib.util.find_spec(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


heavy = lazy("pkg.heavy")
"""

IMPORTER = """import sys
import warnings

frame = sys._getframe(1)
while frame.f_code.co_filename.startswith("<frozen"):
    frame = frame.f_back
IMPORTER = frame.f_globals.get("__name__")


def __getattr__(name):
    if name == "OLD":
        warnings.warn("OLD is deprecated", DeprecationWarning, stacklevel=2)
        return 1
    raise AttributeError(name)
"""

OTHER = """def helper():
    return 7
"""

OTHER_TEST = """from pkg import other


def test_other():
    assert other.helper() == 7
"""


def _project(root: Path) -> Path:
    files = {
        "pkg/__init__.py": "",
        "pkg/code.py": CODE.encode("latin-1"),
        "pkg/other.py": OTHER,
        "pkg/importer.py": IMPORTER,
        "pkg/lazy_home.py": LAZY_HOME,
        "pkg/heavy.py": "import pkg.lazy_home\n\npkg.lazy_home.EVENTS.append('heavy loaded')\n"
        "VALUE = 1\n",
        "conftest.py": "import pkg.lazy_home  # noqa: F401  (before the probe's watch)\n",
        "tests/test_code.py": TESTS,
        "tests/test_other.py": OTHER_TEST,
        "pytest.ini": "[pytest]\npythonpath = .\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
    return root


def _pytest(
    root: Path, records: Path | None, *, mapped: bool = True
) -> subprocess.CompletedProcess[str]:
    """pytest on the project: bare (no records), with the probe, with the map on too."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EYEFUL_"))}
    if records is not None:
        env = {**env, **plugin_env(records, env)}
        if mapped:
            env[MAP_VAR] = str(root)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _marked_pycs(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.pyc") if b"__eyeful_marks__" in p.read_bytes()]


def test_marked_code_behaves_as_written_and_is_never_cached(tmp_path: Path) -> None:
    root = _project(tmp_path / "repo")
    plain = _pytest(root, None)  # bytecode written unmarked first: the marks must not read it
    assert plain.returncode == 0, plain.stdout + plain.stderr
    records = tmp_path / "records"
    records.mkdir()
    mapped = _pytest(root, records)
    assert mapped.returncode == 0, mapped.stdout + mapped.stderr
    assert _marked_pycs(root) == []
    record = read_pytest(records)
    assert record is not None and record.reached is not None, record
    tests = record.reached.tests
    behaviour = set(tests["tests/test_code.py::test_behaviour_stays"])
    assert {"pkg/code.py", "tests/test_code.py"} <= behaviour
    assert "pkg/other.py" not in behaviour
    assert "pkg/other.py" in tests["tests/test_other.py::test_other"]
    # no tracer to take away: the test that removed one is not marked, and still seen
    assert "pkg/code.py" in tests["tests/test_code.py::test_the_tracer_taken_away"]
    assert record.reached.everything == {}
    # the functions run at an import: the module bodies (line 0), the decorator's call
    assert record.reached.at_import is not None
    assert 0 in record.reached.at_import["pkg/code.py"]
    assert 36 not in record.reached.at_import["pkg/code.py"]  # decorated's body never ran then
    again = _pytest(root, None)
    assert again.returncode == 0, again.stdout + again.stderr
    assert _marked_pycs(root) == []


def test_a_module_that_does_not_compile_fails_as_it_would_unmarked(tmp_path: Path) -> None:
    """A syntax error is the import system's own to report: the same error, the run goes on."""
    root = _project(tmp_path / "repo")
    (root / "pkg" / "other.py").write_text("def helper(:\n    return 7\n", encoding="utf-8")
    # pytest's report of a collection error reads every loaded module (a lazy one loads)
    (root / "conftest.py").write_text("", encoding="utf-8")
    outcomes = []
    for mapped in (False, True):
        records = tmp_path / f"records-{mapped}"
        records.mkdir()
        done = _pytest(root, records, mapped=mapped)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "SyntaxError" in done.stdout and "pkg/other.py" in done.stdout, done.stdout
        outcomes.append(done.stdout.splitlines()[-1].split(" in ")[0])
    assert outcomes == ["10 passed, 1 error"] * 2


def test_a_test_that_reads_bytecode_is_never_a_failure_on_both_sides(tmp_path: Path) -> None:
    """A test that looks at a function's bytecode sees the mark in the run that records the map
    and fails there only: the confirmations run the suite again without the map, where it passes
    (they recorded the map too, and called it a failure on both sides, before)."""
    from tests.core import review
    from tests.gitrepo import PYTEST_INI, confirm, eyeful_config, make_repo, stage

    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(extra='select = "affected"'),
            "pytest.ini": PYTEST_INI,
            "pkg/__init__.py": "",
            "pkg/m.py": "def f(x):\n    return x + 1\n",
            "tests/test_m.py": (
                "from pkg.m import f\n\n\ndef test_names():\n    assert f.__code__.co_names == ()\n"
                "\n\ndef test_value():\n    assert f(1) == 2\n"
            ),
        },
    )
    confirm(repo)
    stage(repo, {"README.md": "a line\n"})
    done = review(repo, format="json")  # no map yet: the whole suite, recording one
    assert done.exit_code == 0, done
    assert done.json["selection"]["why_all"].startswith("no map"), done.json["selection"]
    (names,) = done.json["other_failures"]
    assert names["test"] == "tests/test_m.py::test_names", names
    assert names["on_base"] == "passed" and names["kind"] == "flaky", names
    assert "in the suite: failed" not in names["confirmation"], names
    # The question says where it failed: only in the run with eyeful's marks in the code.
    assert names["confirmation"].endswith(
        "; it failed only in the run that recorded the map of what each test ran (eyeful's "
        "marks in the code, its watch of the import functions), which may be what it saw"
    ), names


def test_marked_code_is_kept_and_a_damaged_keep_changes_no_map(tmp_path: Path) -> None:
    """The marked code is kept in eyeful's cache beside the import graph's parses (a time saver:
    the same map from it, and from a damaged file)."""
    from eyeful.pytest_records import IMPORTS_VAR

    root = _project(tmp_path / "repo")
    imports = tmp_path / "cache" / "imports.json"
    imports.parent.mkdir()
    kept = imports.parent / "marks.marshal"
    maps = []
    written = []
    for damage in (None, None, b"\x00garbage", b""):
        if damage is not None:
            kept.write_bytes(damage)
        records = tmp_path / f"records-{len(maps)}"
        records.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EYEFUL_"))}
        env = {**env, **plugin_env(records, env), MAP_VAR: str(root), IMPORTS_VAR: str(imports)}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=root, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        assert kept.stat().st_size > 1000  # written again after a damaged one
        written.append(kept.stat().st_mtime_ns)
        record = read_pytest(records)
        assert record is not None and record.reached is not None
        maps.append((record.reached.tests, record.reached.at_import))
    assert maps[1:] == maps[:-1]
    assert written[1] == written[0]  # all of it found kept: nothing new to write
    assert "pkg/code.py" in maps[0][0]["tests/test_code.py::test_behaviour_stays"]


def test_code_kept_under_one_optimisation_level_is_not_given_to_another(tmp_path: Path) -> None:
    """The marked code kept by a run under `-O` (PYTHONOPTIMIZE) has no asserts: a later run
    without it compiles its own (it was given the kept code, and a broken assert passed)."""
    from eyeful.pytest_records import IMPORTS_VAR

    root = _project(tmp_path / "repo")
    (root / "pkg" / "checked.py").write_text(
        "def checked(x):\n    assert x > 0, 'negative'\n    return x\n", encoding="utf-8"
    )
    (root / "tests" / "test_checked.py").write_text(
        "import pytest\n\nfrom pkg.checked import checked\n\n\ndef test_checked():\n"
        "    with pytest.raises(AssertionError):\n        checked(-1)\n",
        encoding="utf-8",
    )
    imports = tmp_path / "cache" / "imports.json"
    imports.parent.mkdir()
    outcomes = []
    for optimize in ("1", ""):
        records = tmp_path / f"records-{optimize}"
        records.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "EYEFUL_"))}
        env = {**env, **plugin_env(records, env), MAP_VAR: str(root), IMPORTS_VAR: str(imports)}
        env["PYTHONOPTIMIZE"] = optimize
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "tests/test_checked.py"],
            cwd=root, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        outcomes.append(done.returncode)
    assert outcomes == [1, 0], outcomes
