"""`select = "affected"` (issue 32, points 1 and 2): a test's entry in the map is what it could
see, not only the functions it called, and what cannot be traced makes it always run.

One repository holds every way a test reaches a file without running a function of it (each
target module imported first by an earlier test module, so that no code of it runs for the test
itself): a session fixture from a `pytest_plugins` module that an earlier test set up, a module
constant read through another module, a package `__init__`'s re-export, an `Enum` value, a class
attribute and a default argument, a parametrize list from a data module, a module loaded by
name, settings run with `exec(compile(...))`, a child process (a forkserver's too), code run
after an earlier test removed the tracer, code run while a test swapped the tracer and put it
back, and a report's outcome a conftest's hook decides with a module loaded earlier. One full
review records the map; each way's change is then asked of `affected.select` directly, a few
of them reviewed end to end; one plain pytest run shows that every change breaks its test.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

from eyeful import affected, importtime
from eyeful.cache import Cache
from eyeful.config import load_config
from tests.conftest import seal
from tests.core import record_map, review
from tests.gitrepo import PYTEST, PYTEST_INI, confirm, eyeful_config, git, make_repo, stage

TWELVE = [f"m{n:02d}" for n in range(12)]


def _module(name: str) -> str:
    if name == "m06":  # one module uses another: a change to m05 reaches m06's tests too
        return "from mods import m05\n\n\ndef value():\n    return m05.value() + 1\n"
    return f"def value():\n    return {int(name[1:])}\n"


def _module_tests(name: str) -> str:
    return (
        f"from mods.{name} import value\n\n\n"
        f"def test_value():\n    assert value() == {int(name[1:])}\n\n\n"
        f"def test_twice():\n    assert value() * 2 == {2 * int(name[1:])}\n\n\n"
        f"def test_type():\n    assert isinstance(value(), int)\n"
    )


SETTINGS = """import os

_LOCAL = os.path.join(os.path.dirname(__file__), "local_settings.py")
with open(_LOCAL, encoding="utf-8") as _file:
    exec(compile(_file.read(), _LOCAL, "exec"))
"""

REGISTRY = (  # its import calls _register: a change to its body changes what the import runs
    'import os\n\n\ndef _register():\n    os.environ.setdefault("REG_MODE", "{}")\n\n\n'
    "_register()\n"
)

# A report's outcome decided between the test's phases by a module the conftest finds loaded
# (imported earlier by a test module: no import of it, by name or not, in the test).
CONFTEST = """import sys

import pytest

pytest_plugins = ["fixtures_plugin"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    verdicts = sys.modules.get("pkg.verdicts")
    if call.when == "call" and verdicts is not None and verdicts.strict(item.name):
        report.outcome, report.longrepr = "failed", "judged strict"
"""

FILES: dict[str, str | bytes] = {
    "pyproject.toml": eyeful_config(extra='select = "affected"'),
    "pytest.ini": PYTEST_INI,
    "conftest.py": CONFTEST,
    "pkg/verdicts.py": "def strict(name):\n    return False\n",
    "tests/test_judged.py": "def test_judged():\n    pass\n",
    "pkg/__init__.py": "",
    "pkg/service.py": 'def start():\n    return {"port": 8000}\n',
    "pkg/limits.py": "LIMIT = 10\n",
    "pkg/checker.py": "from pkg.limits import LIMIT\n\n\ndef allowed(n):\n    return n <= LIMIT\n",
    "pkg/sub/__init__.py": "from pkg.sub.impl import GREETING\n",
    "pkg/sub/impl.py": 'GREETING = "hi"\n',
    "pkg/colors.py": "import enum\n\n\nclass Color(enum.Enum):\n    RED = 1\n",
    "pkg/palette.py": "from pkg.colors import Color\n\nFAVOURITE = Color.RED\n",
    "pkg/defaults.py": "SIDE = 3\n",
    "pkg/shapes.py": (
        "from pkg.defaults import SIDE\n\n\nclass Box:\n    size = SIDE\n\n\n"
        "def area(side=SIDE):\n    return side * side\n"
    ),
    "pkg/cases.py": 'CASES = [{"n": 1}, {"n": 2}]\n',
    "pkg/plugins/__init__.py": "",
    "pkg/plugins/greeter.py": 'WORD = "hello"\n',
    "pkg/settings.py": SETTINGS,
    "pkg/local_settings.py": "DEBUG = False\n",
    "pkg/child_code.py": "CODE = 0\n",
    "pkg/traced.py": "def double(n):\n    return 2 * n\n",
    "pkg/swapped.py": "def half(n):\n    return n // 2\n",
    "pkg/fork_code.py": "import sys\n\nCODE = 0\n\n\ndef run():\n    sys.exit(CODE)\n",
    "mods/__init__.py": f"from mods import {', '.join(TWELVE)}  # the package holds them all\n",
    "reg/__init__.py": "from reg import registry  # noqa: F401  (run for what it sets)\n",
    "reg/registry.py": REGISTRY.format("on"),
    "reg/tool.py": 'import os\n\n\ndef mode():\n    return os.environ["REG_MODE"]\n',
    **{f"mods/{name}.py": _module(name) for name in TWELVE},
    "tests/test_0_imports.py": (
        "import pkg.checker\nimport pkg.child_code\nimport pkg.palette\n"
        "import pkg.plugins.greeter\nimport pkg.settings\nimport pkg.shapes\nimport pkg.sub\n"
        "import pkg.cases\nimport pkg.fork_code\nimport pkg.swapped\nimport pkg.traced\n"
        "import pkg.verdicts\n"
        "import reg\n\n\n"
        "def test_imports():\n    pass\n"
    ),
    "fixtures_plugin.py": (
        "import importlib\n\nimport pytest\n\n"
        'SERVICE = "pkg.service"  # named by a setting, as a plugin would\n\n\n'
        '@pytest.fixture(scope="session")\n'
        "def service():\n    return importlib.import_module(SERVICE).start()\n"
    ),
    "tests/test_fixture_a.py": "def test_first_user(service):\n    assert service\n",
    "tests/test_fixture_b.py": (
        'def test_second_user(service):\n    assert service["port"] == 8000\n'
    ),
    "tests/test_constant.py": (
        "import pkg.checker\n\n\ndef test_limit():\n    assert pkg.checker.allowed(10)\n"
    ),
    "tests/test_reexport.py": (
        'import pkg.sub\n\n\ndef test_greeting():\n    assert pkg.sub.GREETING == "hi"\n'
    ),
    "tests/test_enum.py": (
        "import pkg.palette\n\n\ndef test_favourite():\n"
        "    assert pkg.palette.FAVOURITE.value == 1\n"
    ),
    "tests/test_shapes.py": (
        "import pkg.shapes\n\n\ndef test_class_attribute():\n    assert pkg.shapes.Box.size == 3"
        "\n\n\ndef test_default_argument():\n    assert pkg.shapes.area() == 9\n"
    ),
    "tests/test_parametrize.py": (
        "import pytest\n\nimport pkg.cases\n\n\n"
        '@pytest.mark.parametrize("case", pkg.cases.CASES)\n'
        'def test_positive(case):\n    assert case["n"] > 0\n'
    ),
    "tests/test_by_name.py": (
        'import importlib\n\nPLUGIN = "greeter"\n\n\ndef test_plugin():\n'
        '    assert importlib.import_module(f"pkg.plugins.{PLUGIN}").WORD == "hello"\n'
    ),
    "tests/test_exec.py": (
        "import pkg.settings\n\n\ndef test_not_debug():\n    assert pkg.settings.DEBUG is False\n"
    ),
    "tests/test_child.py": (
        "import subprocess\nimport sys\n\n\ndef test_child():\n"
        '    code = "import pkg.child_code as c; raise SystemExit(c.CODE)"\n'
        '    subprocess.run([sys.executable, "-c", code], check=True)\n'
    ),
    "tests/test_spawn.py": (  # multiprocessing's spawn and forkserver: no audit event
        "import multiprocessing.util\nimport os\nimport sys\n\n\ndef test_spawn():\n"
        '    argv = [sys.executable, "-c", "pass"]\n'
        "    pid = multiprocessing.util.spawnv_passfds(os.fsencode(argv[0]), argv, ())\n"
        "    assert os.waitpid(pid, 0)[1] == 0\n"
    ),
    "tests/test_tracer_a.py": (
        "import sys\n\n\ndef test_removes_the_tracer():\n    sys.settrace(None)\n"
    ),
    "tests/test_tracer_b.py": (
        "import sys\n\n\ndef test_after():\n"
        '    double = getattr(sys.modules["pkg.traced"], "double")  # imported earlier\n'
        "    assert double(2) == 4\n"
    ),
    "tests/test_tracer_swapped.py": (  # swapped and put back: ours again at the test's end
        "import sys\n\n\ndef test_swapped():\n"
        '    half = getattr(sys.modules["pkg.swapped"], "half")  # imported earlier\n'
        "    old = sys.gettrace()\n    sys.settrace(None)\n    try:\n        value = half(4)\n"
        "    finally:\n        sys.settrace(old)\n    assert value == 2\n"
    ),
    "tests/test_forkserver_a.py": (  # starts the forkserver: later children are its forks
        "import multiprocessing\nimport time\n\n\ndef test_start_the_server():\n"
        '    context = multiprocessing.get_context("forkserver")\n'
        "    child = context.Process(target=time.sleep, args=(0,))\n"
        "    child.start()\n    child.join()\n    assert child.exitcode == 0\n"
    ),
    "tests/test_forkserver_b.py": (
        "import multiprocessing\nimport sys\n\n\ndef test_child_of_the_server():\n"
        '    run = getattr(sys.modules["pkg.fork_code"], "run")  # imported earlier\n'
        '    context = multiprocessing.get_context("forkserver")\n'
        "    child = context.Process(target=run)\n"
        "    child.start()\n    child.join()\n    assert child.exitcode == 0\n"
    ),
    "tests/test_reg.py": (  # passes through `reg`, whose import runs reg/registry.py
        'from reg.tool import mode\n\n\ndef test_mode():\n    assert mode() == "on"\n'
    ),
    "tests/test_thread.py": (  # a new thread puts the map's tracer on: not marked for it
        "import threading\n\n\ndef test_thread():\n    done = []\n"
        "    worker = threading.Thread(target=done.append, args=(1,))\n"
        "    worker.start()\n    worker.join()\n    assert done == [1]\n"
    ),
    **{f"tests/test_{name}.py": _module_tests(name) for name in TWELVE},
}
ALL = 22 + 3 * len(TWELVE)


@dataclass(frozen=True)
class Way:
    name: str
    path: str
    breaking: str
    tests: tuple[str, ...]
    """The tests the change breaks (pytest's ids, a parametrized one with its parameter)."""


WAYS = [
    Way("session fixture", "pkg/service.py", 'def start():\n    return {"port": 9000}\n',
        ("tests/test_fixture_b.py::test_second_user",)),
    Way("constant through a module", "pkg/limits.py", "LIMIT = 9\n",
        ("tests/test_constant.py::test_limit",)),
    Way("re-export", "pkg/sub/impl.py", 'GREETING = "hello"\n',
        ("tests/test_reexport.py::test_greeting",)),
    Way("enum value", "pkg/colors.py", "import enum\n\n\nclass Color(enum.Enum):\n    RED = 2\n",
        ("tests/test_enum.py::test_favourite",)),
    Way("class attribute, default argument", "pkg/defaults.py", "SIDE = 4\n",
        ("tests/test_shapes.py::test_class_attribute",
         "tests/test_shapes.py::test_default_argument")),
    Way("parametrize from a data module", "pkg/cases.py", 'CASES = [{"n": 1}, {"n": -2}]\n',
        ("tests/test_parametrize.py::test_positive[case1]",)),
    Way("import by name", "pkg/plugins/greeter.py", 'WORD = "bye"\n',
        ("tests/test_by_name.py::test_plugin",)),
    Way("exec(compile(...))", "pkg/local_settings.py", "DEBUG = True\n",
        ("tests/test_exec.py::test_not_debug",)),
    Way("child process", "pkg/child_code.py", "CODE = 1\n", ("tests/test_child.py::test_child",)),
    Way("tracer removed earlier", "pkg/traced.py", "def double(n):\n    return 3 * n\n",
        ("tests/test_tracer_b.py::test_after",)),
    Way("a function a package's import calls", "reg/registry.py", REGISTRY.format("off"),
        ("tests/test_reg.py::test_mode",)),
    Way("tracer swapped and put back", "pkg/swapped.py", "def half(n):\n    return n // 3\n",
        ("tests/test_tracer_swapped.py::test_swapped",)),
    Way("a report a conftest's hook decides", "pkg/verdicts.py",
        'def strict(name):\n    return name == "test_judged"\n',
        ("tests/test_judged.py::test_judged",)),
    Way("forkserver's child", "pkg/fork_code.py",
        "import sys\n\nCODE = 1\n\n\ndef run():\n    sys.exit(CODE)\n",
        ("tests/test_forkserver_b.py::test_child_of_the_server",)),
]  # fmt: skip
ALWAYS = {
    "tests/test_child.py::test_child",
    "tests/test_spawn.py::test_spawn",
    "tests/test_forkserver_a.py::test_start_the_server",
    "tests/test_forkserver_b.py::test_child_of_the_server",
}  # a test that takes the tracer away is not among them: no tracer records the map (marks
# compiled into the code)


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The repository, its HEAD's tree mapped by a full review of its last commit."""
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        repo = make_repo(tmp_path_factory.mktemp("ways") / "repo", FILES)
        done = record_map(repo, "the ways\n")  # no map yet: full
        assert done.json["selection"]["why_all"].startswith("no map"), done.json["selection"]
        run = next(r for r in done.json["runs"] if r["name"] == "test" and r["side"] == "change")
        assert run["counts"] == {"passed": ALL}  # no test is selected for having failed
        yield repo


@pytest.fixture
def repo(mapped: Path) -> Iterator[Path]:
    confirm(mapped)  # each test has its own HOME
    yield mapped
    git(mapped, "reset", "-q", "--hard")
    git(mapped, "clean", "-qfd")


def _selected(repo: Path, files: dict[str, str | bytes]) -> affected.Selection:
    """What `affected.select` makes of ``files`` changed on HEAD."""
    stage(repo, files)
    tree = git(repo, "write-tree").strip()
    head = git(repo, "rev-parse", "HEAD").strip()
    config = load_config(repo)
    cache = Cache(repo / ".git" / "eyeful" / "cache")
    return affected.select(pygit2.Repository(str(repo)), cache, config, head, tree)


def _runs(selection: affected.Selection, test: str) -> bool:
    """Whether the selection runs ``test`` (by its id, its function's, or its file)."""
    function = test.split("[")[0]
    return any(i in (test, function, test.split("::")[0]) for i in selection.ids or [])


def test_every_way_breaks_its_test_in_plain_pytest(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "work", {**FILES, **{w.path: w.breaking for w in WAYS}})
    done = subprocess.run([*PYTEST.split(), "-rf"], cwd=work, capture_output=True, text=True)
    failed = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED ")}
    assert failed == {t for w in WAYS for t in w.tests}, done.stdout


@pytest.mark.parametrize("way", WAYS, ids=[w.name for w in WAYS])
def test_a_change_selects_the_tests_that_could_see_it(repo: Path, way: Way) -> None:
    selection = _selected(repo, {way.path: way.breaking})
    assert selection.why_all is None, selection
    assert selection.map_tests == ALL
    missed = [t for t in way.tests if not _runs(selection, t)]
    assert missed == [], selection.ids


def test_a_harmless_change_to_one_of_twelve_modules_runs_a_quarter(repo: Path) -> None:
    """Precision kept where the package's `__init__.py` imports all twelve modules, and a test
    module imports its module from it (`from mods.m05 import value`: the package's own file
    runs on the way, its namespace is not read): the module's own tests, those of the module
    that imports it, those of the first test module (its collection imported them all), and
    the tests that always run (a child process)."""
    selection = _selected(repo, {"mods/m05.py": _module("m05") + "# the same\n"})
    ids = set(selection.ids or [])
    own = {
        f"tests/test_{m}.py::test_{n}"
        for m in ("m00", "m05", "m06")
        for n in ("value", "twice", "type")
    }
    assert ids == own | ALWAYS, selection
    assert len(ids - ALWAYS) <= ALL / 4


REVIEWED = ("session fixture", "child process", "tracer removed earlier")


@pytest.mark.parametrize("way", [w for w in WAYS if w.name in REVIEWED], ids=lambda w: w.name)
def test_a_review_blocks_on_a_way_the_map_used_to_miss(repo: Path, way: Way) -> None:
    stage(repo, {way.path: way.breaking})
    done = review(repo, format="json", all_tests=True)
    assert done.exit_code == 1, done
    assert {r["test"] for r in done.json["regressions"]} == set(way.tests)
    assert done.json["selection"]["ids"] is not None


def test_a_change_to_the_package_init_runs_every_test_that_passes_through_it(repo: Path) -> None:
    """What the package's import runs changed: every test passing through it; a comment
    there: only the tests of the module whose collection ran it (nor would a function's body
    change more: the package's import does not run it)."""
    init = FILES["mods/__init__.py"]
    assert isinstance(init, str)
    passing = {f"tests/test_{m}.py::test_value" for m in TWELVE}
    selection = _selected(repo, {"mods/__init__.py": init + "VERSION = 2\n"})
    assert passing <= set(selection.ids or []), selection
    git(repo, "reset", "-q", "--hard")
    selection = _selected(repo, {"mods/__init__.py": init + "# the same\n"})
    first = {"tests/test_m00.py::test_value"}  # its collection imported the package
    assert passing & set(selection.ids or []) == first, selection


def test_a_change_to_the_package_a_test_module_lives_in_selects_its_tests(tmp_path: Path) -> None:
    """A test module inside a package (`pkg/test_z.py`, next to the code) is imported through
    the package: its `__init__.py` ran for it, even where an earlier module's collection ran it
    first and the test module imports nothing of it. A change to that `__init__.py` runs it."""
    init = "import os\n\nos.environ['PKG_MODE'] = '{}'\n"
    files: dict[str, str | bytes] = {
        "pyproject.toml": eyeful_config(extra='select = "affected"'),
        "pytest.ini": PYTEST_INI,
        "pkg/__init__.py": init.format("fast"),
        "pkg/test_a.py": "def test_first():\n    pass\n",
        "pkg/test_z.py": (
            "import os\n\n\ndef test_mode():\n    assert os.environ['PKG_MODE'] == 'fast'\n"
        ),
        "tests/test_other.py": "def test_other():\n    pass\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    record_map(repo, "colocated\n")
    selection = _selected(repo, {"pkg/__init__.py": init.format("slow")})
    plain = subprocess.run([*PYTEST.split(), "-rf"], cwd=repo, capture_output=True, text=True)
    assert "FAILED pkg/test_z.py::test_mode" in plain.stdout, plain.stdout
    assert selection.why_all is None, selection
    assert _runs(selection, "pkg/test_z.py::test_mode"), selection.ids
    assert not _runs(selection, "tests/test_other.py::test_other"), selection.ids


def test_a_parameter_id_holding_double_colons_runs_its_whole_function() -> None:
    """pytest cannot take `t.py::test_s[x::y]` back as an id (it splits at each `::`), and a
    change to the parameters changes the id anyway: the function runs, whatever its ids hold."""
    assert affected._function_id("t.py::test_s[x::y]") == "t.py::test_s"
    assert affected._function_id("t.py::TestA::test_s[a[1]::b]") == "t.py::TestA::test_s"
    assert affected._function_id("t.py::TestA::test_s") == "t.py::TestA::test_s"


def test_a_deleted_module_runs_the_whole_suite(tmp_path: Path) -> None:
    """A test may list the module's directory (`pkgutil.iter_modules`, a glob): no function of
    it runs, nothing is opened, and the map holds no directory. Another test still imports the
    module (inside a `try`), so the map knows it; the listing test sees only its package."""
    files: dict[str, str | bytes] = {
        "pyproject.toml": eyeful_config(extra='select = "affected"'),
        "pytest.ini": PYTEST_INI,
        "plugins/__init__.py": "",
        "plugins/a.py": "A = 1\n",
        "plugins/b.py": "B = 1\n",
        "tests/test_b.py": (
            "def test_b():\n    try:\n        import plugins.b  # noqa: F401\n"
            "    except ImportError:\n        pass\n"
        ),
        "tests/test_count.py": (
            "import pkgutil\n\nimport plugins\n\n\ndef test_count():\n"
            "    assert [m.name for m in pkgutil.iter_modules(plugins.__path__)] == ['a', 'b']\n"
        ),
    }
    repo = make_repo(tmp_path / "repo", files)
    record_map(repo, "listing\n")
    (repo / "plugins" / "b.py").unlink()
    selection = _selected(repo, {})
    plain = subprocess.run([*PYTEST.split(), "-rf"], cwd=repo, capture_output=True, text=True)
    assert "FAILED tests/test_count.py::test_count" in plain.stdout, plain.stdout
    assert selection.why_all == "`plugins/b.py` was deleted: a test may list its directory"


def test_a_module_that_ran_only_before_the_tests_runs_the_whole_suite(tmp_path: Path) -> None:
    """A plugin module (`-p` in the project's addopts) sets, at its import, what a test reads,
    from a settings module it imports: both ran before any test, so no test's entry holds them
    and no test imports them. The import graph knows them (they were loaded), which is not
    having run in a test: a change to the settings beside a mapped module runs the whole suite
    (the map's marks are compiled into modules as they are imported: a module imported before
    them counts for every test), not only the mapped module's tests
    (it did, and the review said clean)."""
    plugin = 'import os\n\nfrom pkg import settings\n\nos.environ["MODE"] = settings.MODE\n'
    files: dict[str, str | bytes] = {
        "pyproject.toml": eyeful_config(extra='select = "affected"'),
        "pytest.ini": PYTEST_INI + "addopts = -p configure_plugin\n",
        "configure_plugin.py": plugin,
        "pkg/settings.py": 'MODE = "fast"\n',
        "pkg/__init__.py": "",
        "pkg/core.py": "def one():\n    return 1\n",
        "tests/test_core.py": (
            "from pkg.core import one\n\n\ndef test_one():\n    assert one() == 1\n"
        ),
        "tests/test_mode.py": (
            'import os\n\n\ndef test_mode():\n    assert os.environ["MODE"] == "fast"\n'
        ),
    }
    repo = make_repo(tmp_path / "repo", files)
    record_map(repo, "configure\n")
    selection = _selected(
        repo, {"pkg/settings.py": 'MODE = "slow"\n', "pkg/core.py": "def one():\n    return 1\n\n"}
    )
    plain = subprocess.run([*PYTEST.split(), "-rf"], cwd=repo, capture_output=True, text=True)
    assert "FAILED tests/test_mode.py::test_mode" in plain.stdout, plain.stdout
    # imported before the marks were compiled in: it counts for every test
    assert selection.why_all is None, selection
    mode = "tests/test_mode.py::test_mode"
    assert set(selection.ids or []) == {"tests/test_core.py::test_one", mode}, selection
    done = review(repo, format="json", all_tests=True)
    assert done.exit_code == 1, done
    assert [r["test"] for r in done.json["regressions"]] == ["tests/test_mode.py::test_mode"]


def test_what_a_change_runs_at_import_is_read_from_both_sides(tmp_path: Path) -> None:
    """eyeful/importtime.py: a module's top-level code, a class body, a function's decorators,
    defaults and docstring run at import, and the body of a function the map saw run at an
    import (by its first line); another function's body, a method's, and a comment do not. A
    statement taken out counts on the old side."""
    body = 'def f(x=1):\n    """Doc."""\n    y = x\n\n    return y\n'
    method = "class C:\n    size = 1\n\n    def get(self):\n        return 1\n"
    files: dict[str, str | bytes] = {
        "body.py": body, "comment.py": body, "default.py": body, "doc.py": body,
        "method.py": method, "attribute.py": method, "decorated.py": "@a\n" + body,
        "removed.py": "import os\n\nX = 1\n\n" + body, "one_line.py": "def g(x=1): return x\n",
        "broken.py": body, "blank.py": body, "called.py": body,
    }  # fmt: skip
    changed: dict[str, str | bytes] = {
        "body.py": body.replace("y = x", "y = -x"),
        "comment.py": body.replace("\n\n    return", "\n    # why\n    return"),
        "default.py": body.replace("x=1", "x=2"),
        "doc.py": body.replace("Doc.", "Docs."),
        "method.py": method.replace("return 1", "return 2"),
        "attribute.py": method.replace("size = 1", "size = 2"),
        "decorated.py": "@b\n" + body,
        "removed.py": "import os\n\n" + body,
        "one_line.py": "def g(x=2): return x\n",
        "broken.py": body.replace("y = x", "y = ("),
        "blank.py": "# a module\n" + body,
        "called.py": body.replace("y = x", "y = -x"),  # f ran at an import: its body counts
    }
    git_repo, old, new = _two_trees(tmp_path, files, changed)
    called = {"called.py": [1], "body.py": [3]}  # first lines of functions run at an import
    found = importtime.at_import(git_repo, old, new, sorted(changed), called)
    assert found == {"default.py", "doc.py", "attribute.py", "decorated.py", "removed.py",
                     "one_line.py", "broken.py", "called.py"}  # fmt: skip


def test_a_function_body_change_a_package_imports_skips_the_tests_living_in_it(
    tmp_path: Path,
) -> None:
    """Tests inside a package (`pkg/test_*.py`, as toolz's `toolz/tests/`) pass through its
    `__init__.py`, which imports a module's names: a change to one of that module's function
    bodies, which the package's import does not run, selects the tests that use it, not every
    test living in the package (it ran all 186 of toolz's for any change to `itertoolz.py`)."""
    files: dict[str, str | bytes] = {
        "pyproject.toml": eyeful_config(extra='select = "affected"'),
        "pytest.ini": PYTEST_INI,
        "pkg/__init__.py": "from pkg.core import double, half\n",
        "pkg/core.py": "def double(n):\n    return 2 * n\n\n\ndef half(n):\n    return n // 2\n",
        "pkg/tests/__init__.py": "",
        "pkg/tests/test_double.py": (
            "from pkg import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
        ),
        "pkg/tests/test_other.py": "def test_other():\n    assert True\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    record_map(repo, "in the package\n")
    core = files["pkg/core.py"]
    assert isinstance(core, str)
    selection = _selected(repo, {"pkg/core.py": core.replace("2 * n", "n + n")})
    assert selection.why_all is None, selection
    assert selection.ids == ["pkg/tests/test_double.py::test_double"], selection
    git(repo, "reset", "-q", "--hard")
    selection = _selected(repo, {"pkg/core.py": core + "\nSCALE = 2\n"})  # runs at import
    assert selection.ids is not None and _runs(selection, "pkg/tests/test_other.py::test_other")


def test_a_test_module_that_imports_a_module_itself_keeps_the_others_precise(
    tmp_path: Path,
) -> None:
    """A test module pytest compiles itself (assertion rewriting: no marks in it) ran at its
    import in ways the map cannot tell, and imports a module of the package directly: that says
    nothing of which functions of that module ran at an import, so a change to a function body
    there still skips the package's other tests (toolz's tests held 91% of the suite for any
    change, instead of 70%)."""
    core = "def double(n):\n    return 2 * n\n\n\ndef half(n):\n    return n // 2\n"
    files: dict[str, str | bytes] = {
        "pyproject.toml": eyeful_config(extra='select = "affected"'),
        "pytest.ini": PYTEST_INI,
        "pkg/__init__.py": "from pkg.core import double, half\n",
        "pkg/core.py": core,
        "pkg/tests/__init__.py": "",
        "pkg/tests/test_double.py": (
            "from pkg.core import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
        ),
        "pkg/tests/test_other.py": "def test_other():\n    assert True\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    record_map(repo, "direct\n")
    selection = _selected(repo, {"pkg/core.py": core.replace("n // 2", "n >> 1")})
    assert selection.why_all is None, selection
    assert selection.ids == ["pkg/tests/test_double.py::test_double"], selection


def test_a_function_a_package_runs_in_a_thread_at_import_counts_as_its_import(
    tmp_path: Path,
) -> None:
    """A function the package's `__init__.py` runs in a thread at its import (joined before
    the tests) is part of that import: a change to its body selects the tests living in the
    package (the thread's calls were not recorded as run at an import: a false clean)."""
    init = (
        "import threading\n\nfrom pkg import core\n\n\ndef _setup():\n    core.MODE = 'fast'\n"
        "\n\n_t = threading.Thread(target=_setup)\n_t.start()\n_t.join()\n"
    )
    files: dict[str, str | bytes] = {
        "pyproject.toml": eyeful_config(extra='select = "affected"'),
        "pytest.ini": PYTEST_INI,
        "pkg/__init__.py": init,
        "pkg/core.py": "MODE = 'slow'\n\n\ndef mode():\n    return MODE\n",
        "pkg/tests/__init__.py": "",
        "pkg/tests/test_a.py": "def test_a():\n    assert True\n",  # collected first
        "pkg/tests/test_mode.py": (
            "from pkg.core import mode\n\n\ndef test_mode():\n    assert mode() == 'fast'\n"
        ),
    }
    repo = make_repo(tmp_path / "repo", files)
    record_map(repo, "threads\n")
    selection = _selected(repo, {"pkg/__init__.py": init.replace("'fast'", "'slow'")})
    assert selection.why_all is None, selection
    assert selection.ids is not None and _runs(selection, "pkg/tests/test_mode.py::test_mode")


def test_a_file_a_package_reads_or_execs_at_import_counts_as_its_import(tmp_path: Path) -> None:
    """A data file the package's `__init__.py` reads at its import, and a settings file it runs
    with `exec`, shape what every test living in the package sees, also the tests whose
    module's collection did not import the package first."""
    init = (
        "import json\nimport pathlib\n\nfrom pkg import core\n\n"
        "HERE = pathlib.Path(__file__).parent\n"
        "core.MODE = json.loads((HERE / 'data.json').read_text())['mode']\n"
        "exec(compile((HERE / 'settings.py').read_text(), str(HERE / 'settings.py'), 'exec'))\n"
    )
    settings = "def _level():\n    return 1\n\n\ncore.LEVEL = _level()\n"
    files: dict[str, str | bytes] = {
        "pyproject.toml": eyeful_config(extra='select = "affected"'),
        "pytest.ini": PYTEST_INI,
        "pkg/__init__.py": init,
        "pkg/data.json": '{"mode": "fast"}\n',
        "pkg/settings.py": settings,
        "pkg/core.py": "MODE = LEVEL = None\n\n\ndef mode():\n    return MODE, LEVEL\n",
        "pkg/tests/__init__.py": "",
        "pkg/tests/test_a.py": "def test_a():\n    assert True\n",  # collected first
        "pkg/tests/test_mode.py": (
            "from pkg.core import mode\n\n\ndef test_mode():\n    assert mode() == ('fast', 1)\n"
        ),
    }
    repo = make_repo(tmp_path / "repo", files)
    record_map(repo, "reads\n")
    mode = "pkg/tests/test_mode.py::test_mode"
    selection = _selected(repo, {"pkg/data.json": '{"mode": "slow"}\n'})
    assert selection.why_all is not None or _runs(selection, mode), selection
    git(repo, "reset", "-q", "--hard")
    selection = _selected(repo, {"pkg/settings.py": settings.replace("1\n", "2\n", 1)})
    assert selection.why_all is not None or _runs(selection, mode), selection


def test_a_changed_source_encoding_changes_what_the_import_runs(tmp_path: Path) -> None:
    """A coding declaration is a comment that changes every string the import makes (`é`
    read as latin-1 is `Ã©`): a change to it alone changes the import."""
    body = "# -*- coding: utf-8 -*-\nNAME = 'é'\n"
    latin = body.replace("utf-8", "latin-1").encode()
    git_repo, old, new = _two_trees(tmp_path, {"m.py": body.encode()}, {"m.py": latin})
    found = importtime.at_import(git_repo, old, new, ["m.py"], {})
    assert found == {"m.py"}


def test_a_yield_added_to_a_function_body_changes_the_import(tmp_path: Path) -> None:
    """A `yield` in a body makes the function a generator function, which code run at import
    can see (`inspect.isgeneratorfunction`, a decorator choosing a wrapper): adding or
    removing one changes the import; another change to that body does not."""
    body = (
        "import inspect\n\n\ndef f():\n    x = 1\n    return x\n\n\n"
        "KIND = inspect.isgeneratorfunction(f)\n"
    )
    changed: dict[str, str | bytes] = {
        "added.py": body.replace("return x", "yield x"),
        "other.py": body.replace("x = 1", "x = 2"),
    }
    git_repo, old, new = _two_trees(tmp_path, {"added.py": body, "other.py": body}, changed)
    found = importtime.at_import(git_repo, old, new, sorted(changed), {})
    assert found == {"added.py"}
    back = importtime.at_import(git_repo, new, old, sorted(changed), {})
    assert back == {"added.py"}  # the yield taken out


def test_a_map_that_recorded_no_import_calls_counts_every_function_body(tmp_path: Path) -> None:
    """A map that did not record which functions ran at an import (a coverage tool's) cannot
    say a function body is not run by the import: a change to one may change it."""
    body = "def f():\n    return 1\n\n\nX = f()\n"
    changed: dict[str, str | bytes] = {"m.py": body.replace("return 1", "return 2")}
    git_repo, old, new = _two_trees(tmp_path, {"m.py": body}, changed)
    assert importtime.at_import(git_repo, old, new, ["m.py"]) == {"m.py"}


def _two_trees(
    tmp_path: Path, files: dict[str, str | bytes], changed: dict[str, str | bytes]
) -> tuple[pygit2.Repository, str, str]:
    """A repository of ``files``, its tree, and the tree with ``changed`` staged on it."""
    repo = make_repo(tmp_path / "repo", files)
    old = git(repo, "rev-parse", "HEAD^{tree}").strip()
    stage(repo, changed)
    return pygit2.Repository(str(repo)), old, git(repo, "write-tree").strip()


# What the map's marks could not see at first (an adversarial pass on 2026-12-06): each made a
# review that selected by the map say clean on a change plain pytest fails.

Files = dict[str, str | bytes]
MARKS_CASES: dict[str, tuple[Files, Files] | tuple[Files, Files, str]] = {
    "a lambda called by name": (
        {
            "pkg/ops.py": "double = lambda x: x * 2  # noqa: E731\n\n\ndef label():\n"
            "    return 'ops'\n",
            "pkg/dispatch.py": "MODULE = 'pkg.ops'\n\n\ndef run(name, x):\n"
            "    module = __import__(MODULE, fromlist=[name])\n"
            "    return getattr(module, name)(x)\n",
            "tests/test_ops.py": "from pkg.ops import label\n\n\ndef test_label():\n"
            "    assert label() == 'ops'\n",
            "tests/test_use.py": "from pkg.dispatch import run\n\n\ndef test_use():\n"
            "    assert run('double', 3) == 6\n",
        },
        {
            "pkg/ops.py": "double = lambda x: x * 3  # noqa: E731\n\n\ndef label():\n"
            "    return 'ops'\n"
        },
    ),
    "a file a conftest runs with runpy": (
        {
            "conftest.py": "import pathlib\nimport runpy\n\nimport pytest\n\n"
            "SETTINGS = runpy.run_path(str(pathlib.Path(__file__).parent / 'pkg' / "
            "'settings.py'))\n\n\n@pytest.fixture\ndef scale():\n    return SETTINGS['scale']\n",
            "pkg/settings.py": "def scale(x):\n    return x * 2\n\n\ndef label():\n"
            "    return 'settings'\n",
            "tests/test_settings.py": "from pkg.settings import label\n\n\ndef test_label():\n"
            "    assert label() == 'settings'\n",
            "tests/test_use.py": "def test_use(scale):\n    assert scale(3) == 6\n",
        },
        {
            "pkg/settings.py": "def scale(x):\n    return x * 3\n\n\ndef label():\n"
            "    return 'settings'\n"
        },
    ),
    "a helper pytest rewrites": (
        {
            "conftest.py": "import pytest\n\npytest.register_assert_rewrite('pkg.checks')\n",
            "pkg/checks.py": "def positive(x):\n    return x > 0\n",
            "pkg/api.py": "import sys\n\n\ndef check(name, x):\n"
            "    return getattr(sys.modules['pkg.checks'], name)(x)\n",
            "tests/test_checks.py": "from pkg.checks import positive\n\n\ndef test_checks():\n"
            "    assert positive(2)\n",
            "tests/test_use.py": "from pkg.api import check\n\n\ndef test_use():\n"
            "    assert check('positive', 1)\n",
        },
        {"pkg/checks.py": "def positive(x):\n    return x > 1\n"},
    ),
}


# A module already loaded, reached again with no code of it run, no file opened and no import
# statement of a repository file naming it (a second adversarial pass, 2026-12-06): each made a
# review that selected by the map say clean on a change plain pytest fails.
LOGGING: Files = {  # a logger's level named by a dotted path (`ext://`), read by dictConfig
    "pkg/settings.py": "LEVEL = 'WARNING'\n",
    "tests/test_limits.py": "from pkg.settings import LEVEL\n\n\ndef test_limit():\n"
    "    assert LEVEL\n",
    "tests/test_use.py": "import logging\nimport logging.config\n\n\ndef test_use():\n"
    "    logging.config.dictConfig({'version': 1, 'disable_existing_loggers': False,\n"
    "        'loggers': {'demo': {'level': 'ext://pkg.settings.LEVEL'}}})\n"
    "    assert logging.getLogger('demo').level == logging.WARNING\n",
}
LOADS = "from pkg.limits import LIMIT\n\n\ndef test_limit():\n    assert LIMIT > 0\n"
MARKS_CASES |= {
    "__import__ of a name made at run time": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "pkg/check.py": "import os\n\n_LIMITS = __import__(os.environ.get('PKG_LIMITS', "
            "'pkg.limits'), fromlist=['LIMIT'])\n\n\ndef ok(n):\n"
            "    return n <= _LIMITS.LIMIT\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "from pkg.check import ok\n\n\ndef test_use():\n"
            "    assert ok(5)\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "an import in a string a test runs with exec": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "pkg/snippets.py": "EXAMPLE = 'from pkg.limits import LIMIT\\nresult = LIMIT * 2\\n'\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "from pkg.snippets import EXAMPLE\n\n\ndef test_use():\n"
            "    names = {}\n    exec(EXAMPLE, names)\n    assert names['result'] == 10\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "an import in a doctest": (
        {
            "pytest.ini": PYTEST_INI + "addopts = --doctest-modules\ntestpaths = tests pkg\n",
            "pkg/limits.py": "LIMIT = 5\n",
            "pkg/twice.py": 'def twice(x):\n    """\n    >>> from pkg.limits import LIMIT\n'
            '    >>> twice(LIMIT)\n    10\n    """\n    return 2 * x\n',
            "tests/test_limits.py": LOADS,
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
        "pkg/twice.py::pkg.twice.twice",
    ),
    "an entry point loaded": (
        {
            "demo-0.dist-info/METADATA": "Metadata-Version: 2.1\nName: demo\nVersion: 0\n",
            "demo-0.dist-info/entry_points.txt": "[demo.limits]\nlimit = pkg.limits:LIMIT\n",
            "pkg/limits.py": "LIMIT = 5\n",
            "pkg/registry.py": "from importlib.metadata import entry_points\n\n\n"
            "def limit():\n    (point,) = entry_points(group='demo.limits', name='limit')\n"
            "    return point.load()\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "from pkg.registry import limit\n\n\ndef test_use():\n"
            "    assert limit() == 5\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "a package loaded by name, its submodule read as an attribute": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "import importlib\n\n\ndef test_use():\n"
            "    assert importlib.import_module('pkg').limits.LIMIT == 5\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "a dotted path resolved from its package": (
        LOGGING,
        {"pkg/settings.py": "LEVEL = 'ERROR'  # louder\n"},
    ),
    "a relative dotted __import__": (
        {
            "pkg/conf/__init__.py": "",
            "pkg/conf/limits.py": "LIMIT = 5\n",
            "pkg/check.py": "def ok(n, name='conf.limits'):\n"
            "    conf = __import__(name, globals(), None, (), 1)\n"
            "    return n <= conf.limits.LIMIT\n",
            "tests/test_limits.py": LOADS.replace("pkg.limits", "pkg.conf.limits"),
            "tests/test_use.py": "from pkg.check import ok\n\n\ndef test_use():\n"
            "    assert ok(5)\n",
        },
        {"pkg/conf/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "the middle package of a dotted __import__": (
        {
            "pkg/conf/__init__.py": "NAME = 'conf'\n",
            "pkg/conf/limits.py": "LIMIT = 5\n",
            "pkg/check.py": "def name(where='conf.limits'):\n"
            "    return __import__('pkg.' + where).conf.NAME\n",
            "tests/test_limits.py": "from pkg.conf import NAME\n\n\ndef test_limit():\n"
            "    assert NAME\n",
            "tests/test_use.py": "from pkg.check import name\n\n\ndef test_use():\n"
            "    assert name() == 'conf'\n",
        },
        {"pkg/conf/__init__.py": "NAME = 'config'\n"},
    ),
    "importlib.__import__": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "pkg/check.py": "import importlib\n\n\ndef ok(n, where='limits'):\n"
            "    limits = importlib.__import__('pkg.' + where, fromlist=['LIMIT'])\n"
            "    return n <= limits.LIMIT\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "from pkg.check import ok\n\n\ndef test_use():\n"
            "    assert ok(5)\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "a conftest's copy of __import__, put back by hand": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "pkg/check.py": "def ok(n, where='limits'):\n"
            "    limits = __import__('pkg.' + where, fromlist=['LIMIT'])\n"
            "    return n <= limits.LIMIT\n",
            "tests/conftest.py": "import builtins\n\nimport pytest\n\n"
            "REAL_IMPORT = builtins.__import__\n\n\n@pytest.fixture\ndef no_yaml():\n"
            "    def fake(name, *args, **kwargs):\n        if name == 'yaml':\n"
            "            raise ImportError(name)\n"
            "        return REAL_IMPORT(name, *args, **kwargs)\n\n"
            "    builtins.__import__ = fake\n    yield\n    builtins.__import__ = REAL_IMPORT\n",
            "tests/test_0.py": "def test_without_yaml(no_yaml):\n    pass\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "from pkg.check import ok\n\n\ndef test_use(no_yaml):\n"
            "    assert ok(5)\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "import_module bound under another name before the watch": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "pkg/plugins.py": "from importlib import import_module as _load\n\n\n"
            "def get(name):\n    return _load('pkg.' + name)\n",
            "tests/conftest.py": "from pkg.plugins import get  # noqa: F401\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "from pkg.plugins import get\n\n\ndef test_use():\n"
            "    assert get('limits').LIMIT == 5\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "sys.modules by a literal name": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "pkg/check.py": "import sys\n\n\ndef ok(n):\n"
            "    return n <= sys.modules['pkg.limits'].LIMIT\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "from pkg.check import ok\n\n\ndef test_use():\n"
            "    assert ok(5)\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "an import in a string compiled under the test file's name": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "SNIPPET = 'from pkg.limits import LIMIT\\nassert LIMIT == 5\\n'"
            "\n\n\ndef test_use():\n    exec(compile(SNIPPET, __file__, 'exec'), {})\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "an import in a script without .py run with runpy": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "scripts/double-limit": "from pkg.limits import LIMIT\n\nRESULT = 2 * LIMIT\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "import runpy\n\n\ndef test_use():\n"
            "    assert runpy.run_path('scripts/double-limit')['RESULT'] == 10\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "an import in a module outside the repository": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "import importlib\n\n\ndef test_use(tmp_path, monkeypatch):\n"
            "    (tmp_path / 'plugin_x.py').write_text('from pkg.limits import LIMIT\\n"
            "VALUE = LIMIT\\n')\n    monkeypatch.syspath_prepend(str(tmp_path))\n"
            "    assert importlib.import_module('plugin_x').VALUE == 5\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "a relative import through a package's extended __path__": (
        {
            "pkg/__init__.py": "import os\n\n__path__.append(os.path.join(os.path.dirname("
            "__file__), 'contrib'))\n",
            "pkg/contrib/limits.py": "LIMIT = 5\n",
            "pkg/check.py": "from .limits import LIMIT\n\n\ndef ok(n):\n    return n <= LIMIT\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "from pkg.check import ok\n\n\ndef test_use():\n"
            "    assert ok(5)\n",
        },
        {"pkg/contrib/limits.py": "LIMIT = 4  # lowered\n"},
    ),
    "a logging config's ext:// value, logging.config loaded by a conftest": (
        {**LOGGING, "tests/conftest.py": "import logging.config  # noqa: F401\n"},
        {"pkg/settings.py": "LEVEL = 'ERROR'  # louder\n"},
    ),
    "a submodule reached as the package's attribute": (
        {
            "pkg/limits.py": "LIMIT = 5\n",
            "tests/test_limits.py": LOADS,
            "tests/test_use.py": "import pkg\n\n\ndef test_use():\n"
            "    assert pkg.limits.LIMIT == 5\n",
        },
        {"pkg/limits.py": "LIMIT = 4  # lowered\n"},
    ),
}


def _alone(files: Files) -> bool:
    """Whether a case's files are only its package's and its test modules (no conftest, no
    pytest settings, nothing at the root): such cases share one repository."""
    return all(
        name.startswith("pkg/") or (name.startswith("tests/test_") and name.count("/") == 1)
        for name in files
    )


SHARED = sorted(case for case, (files, *_) in MARKS_CASES.items() if _alone(files))


def _renamed(number: int, files: Files) -> Files:
    """A case's files with its package ``pkg<number>`` and its test modules ``*_<number>.py``."""
    out: Files = {}
    for name, text in files.items():
        name = re.sub(r"^pkg/", f"pkg{number}/", name)
        name = re.sub(r"^(tests/test_\w+)\.py$", rf"\g<1>_{number}.py", name)
        out[name] = re.sub(r"\bpkg\b", f"pkg{number}", text) if isinstance(text, str) else text
    return out


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One repository for the cases of :data:`SHARED`, each under its own package, mapped."""
    files: Files = {"pyproject.toml": eyeful_config(extra='select = "affected"'),
                    "pytest.ini": PYTEST_INI}  # fmt: skip
    for number, case in enumerate(SHARED):
        files |= _renamed(number, {"pkg/__init__.py": "", **MARKS_CASES[case][0]})
    with pytest.MonkeyPatch.context() as mp:
        seal(tmp_path_factory, mp)
        repo = make_repo(tmp_path_factory.mktemp("shared") / "repo", files)
        record_map(repo, "marks\n")
        yield repo


def test_every_shared_case_breaks_its_test_in_plain_pytest(tmp_path: Path) -> None:
    files: Files = {"pytest.ini": PYTEST_INI}
    for number, case in enumerate(SHARED):
        case_files, breaking = MARKS_CASES[case][:2]
        files |= _renamed(number, {"pkg/__init__.py": "", **case_files, **breaking})
    work = make_repo(tmp_path / "work", files)
    done = subprocess.run([*PYTEST.split(), "-rf"], cwd=work, capture_output=True, text=True)
    failed = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED ")}
    assert failed == {f"tests/test_use_{n}.py::test_use" for n in range(len(SHARED))}, done.stdout


@pytest.mark.parametrize("case", SHARED)
def test_what_the_marks_see_late_or_not_at_all_still_selects_shared(
    shared: Path, case: str
) -> None:
    number = SHARED.index(case)
    confirm(shared)
    try:
        selection = _selected(shared, _renamed(number, MARKS_CASES[case][1]))
    finally:
        git(shared, "reset", "-q", "--hard")
        git(shared, "clean", "-qfd")
    assert selection.why_all is None, selection
    assert _runs(selection, f"tests/test_use_{number}.py::test_use"), selection
    other = (number + 1) % len(SHARED)  # another case's test: not every test is run
    assert not _runs(selection, f"tests/test_use_{other}.py::test_use"), selection


@pytest.mark.parametrize("case", sorted(set(MARKS_CASES) - set(SHARED)))
def test_what_the_marks_see_late_or_not_at_all_still_selects(tmp_path: Path, case: str) -> None:
    files, breaking, *named = MARKS_CASES[case]
    failing = named[0] if named else "tests/test_use.py::test_use"
    repo = make_repo(
        tmp_path / "repo",
        {"pyproject.toml": eyeful_config(extra='select = "affected"'), "pytest.ini": PYTEST_INI,
         "pkg/__init__.py": "", **files},
    )  # fmt: skip
    record_map(repo, "marks\n")
    selection = _selected(repo, breaking)
    plain = subprocess.run([*PYTEST.split(), "-rf"], cwd=repo, capture_output=True, text=True)
    assert f"FAILED {failing}" in plain.stdout, plain.stdout
    assert selection.why_all is not None or _runs(selection, failing), selection
