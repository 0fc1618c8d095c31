"""What `git eyeful init` proposes: the repository's test runner, and a setup when a checkout
cannot import the project, read from the files the repository has.

Pure: nothing here prints or writes. :func:`scan` reads the working tree's files (the ones git
does not ignore) and what :func:`environment_facts` learnt from the ``python`` on PATH, and
returns a :class:`Proposal`: the commands, and the reasons it chose them, in words.

The runner: pytest when the project configures it (``pytest.toml``, ``pytest.ini``,
``[tool.pytest.ini_options]``, ``[pytest]`` in ``tox.ini``, ``[tool:pytest]`` in ``setup.cfg``),
has a ``conftest.py``, or has
test files that import pytest or hold plain ``def test_...`` functions; else ``python -m
unittest`` for test files with ``unittest.TestCase`` classes; else ``go test ./...`` for a
``go.mod`` at the top. ``test_one`` is written only where eyeful cannot derive it from ``test``
(eyeful/focus.py).

The setup: a checkout imports the project's code when it lies at the top level (``python -m``
puts the working directory first on ``sys.path``) or where pytest's ``pythonpath`` points. Code
under ``src/`` that pytest's ``pythonpath`` does not name needs installing; so does a project
the user's environment has installed editable from the working tree (a run would import the
user's tree: eyeful/imports.py), and one whose runner the environment lacks. The setup then
installs it in eyeful's own virtualenv per worktree (``isolate = "venv"``, the default with a
setup): the project with its test extra, a test requirements file, and pytest.
"""

from __future__ import annotations

import configparser
import json
import re
import shlex
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

from eyeful import focus
from eyeful.gitutil import clean_env, git
from eyeful.pytestplugins import normalised as _normalised
from eyeful.pytestplugins import plugins_needed, requirement_name
from eyeful.tomlcompat import tomllib

_MAX_READ = 256 * 1024
"""Bytes read of one file: configuration and test files are far smaller."""
_MAX_TEST_FILES = 400
"""Test files read to tell pytest from unittest: enough to decide, bounded on a large tree."""
_SKIPPED_DIRS = frozenset(("node_modules", "site-packages", "venv", "build", "dist"))
_TEST_FILE = re.compile(r"(?:test_\w*|\w+_test)\.py")
_PYTEST_USE = re.compile(r"^\s*(?:import pytest\b|from pytest\b|from _pytest\b)", re.M)
_TEST_FUNCTION = re.compile(r"^(?:async )?def test\w*\(", re.M)
_TEST_CASE = re.compile(r"^class \w+\([^)]*TestCase\b", re.M)
_TEST_EXTRAS = ("test", "tests", "testing")
_TEST_REQUIREMENTS = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements-dev.txt",
    "test-requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/dev.txt",
)


@dataclass(frozen=True)
class EnvironmentFacts:
    """What the ``python`` on PATH has: its name, pytest, and editable installs of this tree."""

    python: str = "python"
    """The name that starts it (``python``, else ``python3``)."""
    has_pytest: bool | None = None
    """None: not known (no interpreter answered)."""
    editable: tuple[str, ...] = ()
    """Distributions installed editable from the working tree."""
    installed: frozenset[str] | None = field(default=None, compare=False)
    """The names of its distributions, normalised (PEP 503); None: not known."""


@dataclass(frozen=True)
class Proposal:
    """The configuration init proposes, and why."""

    runner: str
    """``pytest``, ``unittest`` or ``go``."""
    test: str
    test_one: str | None = None
    """Only where eyeful cannot derive it from ``test``."""
    setup: str | None = None
    reasons: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    """What the proposal leaves to the user."""

    def table(self) -> dict[str, Any]:
        """The ``[tool.eyeful]`` table (the top level of ``.eyeful.toml``)."""
        commands = {"setup": self.setup, "test": self.test, "test_one": self.test_one}
        return {"commands": {k: v for k, v in commands.items() if v is not None}}

    def toml(self, *, in_pyproject: bool) -> str:
        """The table as TOML text: ``[tool.eyeful.commands]`` for pyproject.toml, else
        ``[commands]`` at the top level of ``.eyeful.toml``."""
        header = "[tool.eyeful.commands]" if in_pyproject else "[commands]"
        lines = [header]
        for name, value in self.table()["commands"].items():
            lines.append(f"{name} = {json.dumps(value, ensure_ascii=False)}")
        return "\n".join(lines) + "\n"


class NothingFound(Exception):
    """No test runner eyeful knows could be told from the repository's files."""


@dataclass
class _Files:
    """The repository's files (relative POSIX paths) and their text, read once."""

    root: Path
    names: list[str]
    _set: frozenset[str] = frozenset()
    _text: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._set = frozenset(self.names)

    def has(self, name: str) -> bool:
        return name in self._set

    def text(self, name: str) -> str | None:
        if name not in self._text:
            self._text[name] = _read(self.root, name)
        return self._text[name]


def _read(root: Path, name: str) -> str | None:
    """The start of a regular file inside the repository (a symlink out of it is not read)."""
    try:
        path = (root / name).resolve()
        if not path.is_relative_to(root.resolve()) or not path.is_file():
            return None
        with path.open("rb") as handle:
            return handle.read(_MAX_READ).decode("utf-8", "replace")
    except (OSError, RuntimeError):
        return None


def repository_files(root: Path) -> list[str]:
    """The working tree's files git does not ignore: tracked, and untracked but not ignored."""
    proc = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=root)
    names = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted({name for name in names if name})


_FACTS_SCRIPT = """
import sys
sys.path[:] = [p for p in sys.path if p not in ("", ".")]
import importlib.util, json
from importlib import metadata
out = {"pytest": importlib.util.find_spec("pytest") is not None, "editable": [], "names": []}
for dist in metadata.distributions():
    try:
        out["names"].append(dist.metadata["Name"] or "")
        data = json.loads(dist.read_text("direct_url.json") or "null")
        if isinstance(data, dict) and (data.get("dir_info") or {}).get("editable"):
            out["editable"].append([dist.metadata["Name"] or "?", str(data.get("url", ""))])
    except Exception:
        pass
print(json.dumps(out))
"""


def environment_facts(root: Path, which: Mapping[str, str | None]) -> EnvironmentFacts:
    """Ask the ``python`` (else ``python3``) that ``which`` found what it has installed: one
    short process in the repository (a version manager picks the interpreter by directory);
    the repository's own files are not imported. No interpreter, or no answer: facts unknown."""
    name = next((n for n in ("python", "python3") if which.get(n)), None)
    if name is None:
        return EnvironmentFacts(python="python3")
    try:
        proc = subprocess.run(
            [name, "-c", _FACTS_SCRIPT], cwd=root, env=clean_env(), capture_output=True,
            text=True, timeout=30, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        answer = json.loads(proc.stdout) if proc.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        answer = None
    if not isinstance(answer, dict):
        return EnvironmentFacts(python=name)
    editable = tuple(
        str(dist) for dist, url in answer.get("editable", []) if _url_inside(str(url), root)
    )
    names = answer.get("names")
    installed = (
        frozenset(_normalised(str(n)) for n in names if n) if isinstance(names, list) else None
    )
    return EnvironmentFacts(
        python=name, has_pytest=bool(answer.get("pytest")), editable=editable, installed=installed
    )


def _url_inside(url: str, root: Path) -> bool:
    parts = urlsplit(url)
    if parts.scheme != "file":
        return False
    try:
        return Path(unquote(parts.path)).resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError, ValueError):
        return False


# --- the runner ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _PytestConfig:
    where: str | None = None
    """Which file configures pytest, in words; None: none does."""
    pythonpath: tuple[str, ...] = ()
    testpaths: tuple[str, ...] = ()
    addopts: tuple[str, ...] = ()
    required_plugins: tuple[str, ...] = ()


def _ini_section(text: str | None, section: str) -> dict[str, str] | None:
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return dict(parser[section]) if parser.has_section(section) else None


def _words(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split())
    if isinstance(value, list):
        return tuple(str(item) for item in value)
    return ()


def pyproject_table(files: _Files) -> dict[str, Any] | None:
    text = files.text("pyproject.toml") if files.has("pyproject.toml") else None
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _toml_table(text: str | None) -> dict[str, Any]:
    try:
        return tomllib.loads(text or "")
    except tomllib.TOMLDecodeError:
        return {}


def _options(where: str, options: Mapping[str, object]) -> _PytestConfig:
    return _PytestConfig(
        where, _words(options.get("pythonpath")), _words(options.get("testpaths")),
        _words(options.get("addopts")), _words(options.get("required_plugins")),
    )  # fmt: skip


def _pytest_config(files: _Files, pyproject: dict[str, Any] | None) -> _PytestConfig:
    """pytest's own configuration, in the order pytest looks for it."""
    for name in ("pytest.toml", ".pytest.toml"):  # pytest 9's
        if files.has(name):
            table = _toml_table(files.text(name)).get("pytest")
            return _options(name, table if isinstance(table, dict) else {})
    for name in ("pytest.ini", ".pytest.ini"):
        if files.has(name):
            return _options(name, _ini_section(files.text(name), "pytest") or {})
    tool = (pyproject or {}).get("tool", {})
    pytest_table = tool.get("pytest") if isinstance(tool, dict) else None
    if isinstance(pytest_table, dict):
        if isinstance(pytest_table.get("ini_options"), dict):
            where = "[tool.pytest.ini_options] in pyproject.toml"
            return _options(where, pytest_table["ini_options"])
        return _options("[tool.pytest] in pyproject.toml", pytest_table)
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        found = _ini_section(files.text(name), section) if files.has(name) else None
        if found is not None:
            return _options(f"[{section}] in {name}", found)
    return _PytestConfig()


def _test_files(files: _Files) -> list[str]:
    out = []
    for name in files.names:
        path = PurePosixPath(name)
        dirs = path.parts[:-1]
        if any(part.startswith(".") or part in _SKIPPED_DIRS for part in dirs):
            continue
        if _TEST_FILE.fullmatch(path.name):
            out.append(name)
    return out


@dataclass
class _Runner:
    name: str
    reasons: list[str]


def _runner(files: _Files, config: _PytestConfig, tests: list[str]) -> _Runner:
    """pytest, unittest or Go, with the reasons."""
    read = tests[:_MAX_TEST_FILES]
    texts = {name: files.text(name) or "" for name in read}
    uses_pytest = [n for n in read if _PYTEST_USE.search(texts[n])]
    functions = [n for n in read if _TEST_FUNCTION.search(texts[n])]
    cases = [n for n in read if _TEST_CASE.search(texts[n])]
    conftests = [n for n in files.names if PurePosixPath(n).name == "conftest.py"]
    pytest_reasons = []
    if config.where:
        pytest_reasons.append(f"pytest is configured ({config.where})")
    if conftests:
        pytest_reasons.append(f"{conftests[0]} is pytest's")
    if uses_pytest:
        pytest_reasons.append(_count(uses_pytest, "imports pytest", "import pytest"))
    elif functions:
        pytest_reasons.append(
            _count(functions, "has", "have") + " plain test functions (pytest's style)"
        )
    if pytest_reasons:
        named = uses_pytest or functions
        listed = [] if named and len(named) == len(tests) else [_listed(tests)]
        return _Runner("pytest", [*pytest_reasons, *listed])
    if cases:
        return _Runner("unittest", [_count(cases, "has", "have") + " unittest.TestCase classes"])
    if files.has("go.mod"):
        return _Runner("go", ["go.mod at the top of the repository"])
    raise NothingFound(
        "found no tests eyeful knows how to run (pytest, unittest, go test): write "
        "[tool.eyeful.commands] test yourself; see the README's Configuration"
    )


def _listed(tests: list[str]) -> str:
    if not tests:
        return "no test files yet (test_*.py, *_test.py)"
    shown = ", ".join(tests[:3]) + (", ..." if len(tests) > 3 else "")
    return f"{len(tests)} test file{'s' if len(tests) > 1 else ''}: {shown}"


def _count(names: list[str], one: str, several: str) -> str:
    """``tests/test_a.py imports pytest``, ``3 test files (tests/test_a.py, ...) import pytest``."""
    if len(names) == 1:
        return f"{names[0]} {one}"
    shown = ", ".join(names[:2]) + (", ..." if len(names) > 2 else "")
    return f"{len(names)} test files ({shown}) {several}"


# --- the commands --------------------------------------------------------------------------


def _top_dir(tests: list[str]) -> str | None:
    """The one top-level directory that holds every test file, if there is one."""
    tops = {PurePosixPath(name).parts[0] for name in tests}
    if len(tops) == 1 and all(len(PurePosixPath(n).parts) > 1 for n in tests):
        return next(iter(tops))
    return None


def _pytest_test(python: str, config: _PytestConfig, tests: list[str], files: _Files) -> str:
    """pytest, on the one top directory of the test files where nothing says where tests are;
    where the configuration collects doctests (``--doctest-modules`` in ``addopts``), on the
    packages too (their modules hold tests), never on the whole tree (a script that exits at
    import would stop pytest's collection)."""
    words = [python, "-m", "pytest", "-q"]
    top = _top_dir(tests)
    if config.testpaths or top is None:
        return shlex.join(words)
    if any(word.startswith("--doctest") for word in config.addopts):
        words += [p for p in _packages(files) if p != top]
    words.append(top)
    return shlex.join(words)


# Top-level files that are scripts or configuration, never a module of the project's code.
_NOT_MODULES = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "manage.py",
                          "tasks.py", "dodo.py"})  # fmt: skip


def _packages(files: _Files) -> list[str]:
    """The project's code at the top: its packages (a directory holding ``__init__.py``), ``src``
    where packages are under it, and its modules (``calc.py``; not a test file, nor a script
    such as ``setup.py``)."""
    found = set()
    for name in files.names:
        parts = PurePosixPath(name).parts
        if parts[-1] == "__init__.py" and len(parts) == 2:
            found.add(parts[0])
        elif parts[-1] == "__init__.py" and len(parts) == 3 and parts[0] == "src":
            found.add("src")
        elif len(parts) == 1 and name.endswith(".py") and name not in _NOT_MODULES:
            found |= set() if _TEST_FILE.fullmatch(name) else {name}
    return sorted(found)


def _doctests_elsewhere(files: _Files, config: _PytestConfig) -> str | None:
    """A note where tox.ini runs pytest with doctests that the proposed command does not."""
    if any(word.startswith("--doctest") for word in config.addopts):
        return None
    tox = files.text("tox.ini") or ""
    if any("pytest" in line and "--doctest" in line for line in tox.splitlines()):
        return (
            "tox.ini runs pytest with --doctest-modules (or --doctest-glob): the test command "
            "proposed here does not run those doctests; write commands.test to include them"
        )
    return None


def _in_packages(files: _Files, name: str, start: int = 0) -> bool:
    """Whether discovery from the ``start``-th directory reaches ``name``: every directory
    below it on the way a package."""
    parts = PurePosixPath(name).parts[:-1]
    return all(
        files.has("/".join(parts[: i + 1]) + "/__init__.py") for i in range(start, len(parts))
    )


def _unittest_commands(
    python: str, files: _Files, tests: list[str], notes: list[str]
) -> tuple[str, str | None]:
    """``python -m unittest`` where discovery from the top finds every test file; a test
    directory that is not a package is discovered from itself (its ids are relative to it, so
    test_one names it too)."""
    base = [python, "-m", "unittest"]
    discovered = [n for n in tests if PurePosixPath(n).name.startswith("test")]
    if len(discovered) < len(tests):
        notes.append("unittest discovers test*.py files only: files named *_test.py are not run")
    if all(_in_packages(files, n) for n in discovered):
        return shlex.join(base), None
    top = _top_dir(discovered)
    if top is not None and all(_in_packages(files, n, start=1) for n in discovered):
        start = [*base, "discover", "-s", top]
        return shlex.join(start), shlex.join([*start, "-k"]) + " {test}"
    notes.append(
        "some test files lie in directories without __init__.py, which unittest's discovery "
        "does not enter: add them, or write commands.test yourself"
    )
    return shlex.join(base), None


# --- the setup -----------------------------------------------------------------------------


def _src_packages(files: _Files) -> list[str]:
    names = set()
    for name in files.names:
        parts = PurePosixPath(name).parts
        if len(parts) >= 3 and parts[0] == "src" and parts[2] == "__init__.py":
            names.add(parts[1])
        elif len(parts) == 2 and parts[0] == "src" and parts[1].endswith(".py"):
            names.add(parts[1][:-3])
    return sorted(names)


def _installable(files: _Files, pyproject: dict[str, Any] | None) -> bool:
    project = pyproject or {}
    return (
        "build-system" in project
        or "project" in project
        or files.has("setup.py")
        or files.has("setup.cfg")
    )


def _extra(pyproject: dict[str, Any] | None) -> tuple[str | None, bool]:
    """The project's test extra, and whether it names pytest."""
    project = (pyproject or {}).get("project", {})
    extras = project.get("optional-dependencies", {}) if isinstance(project, dict) else {}
    if not isinstance(extras, dict):
        return None, False
    for name in _TEST_EXTRAS:
        if name in extras:
            return name, "pytest" in json.dumps(extras[name])
    return None, False


def _group(pyproject: dict[str, Any] | None) -> list[str]:
    """The requirements of the project's PEP 735 test group (``[dependency-groups]``), its
    ``include-group`` entries followed; named one by one, as older pip has no ``--group``."""
    groups = (pyproject or {}).get("dependency-groups", {})
    if not isinstance(groups, dict):
        return []

    def requirements(name: str, seen: frozenset[str]) -> list[str]:
        entries = groups.get(name)
        found: list[str] = []
        for entry in entries if isinstance(entries, list) and name not in seen else []:
            if isinstance(entry, str):
                found.append(entry)
            elif isinstance(entry, dict) and isinstance(entry.get("include-group"), str):
                found += requirements(entry["include-group"], seen | {name})
        return found

    for name in _TEST_EXTRAS:
        if name in groups:
            return list(dict.fromkeys(requirements(name, frozenset())))
    return []


def _setup_command(
    runner: str, files: _Files, pyproject: dict[str, Any] | None, installable: bool,
    plugins: Sequence[tuple[str, str]] = (),
) -> str:  # fmt: skip
    words = ["pip", "install"]
    covers_pytest = False
    named = ""  # what the extra, the group and the requirements files list, for the plugins
    if installable:
        extra, covers_pytest = _extra(pyproject)
        words += ["-e", f".[{extra}]" if extra else "."]
        if extra:
            named += json.dumps((pyproject or {}).get("project", {}).get("optional-dependencies"))
        group = [] if extra else _group(pyproject)
        words += group
        named += " ".join(group)
        covers_pytest = covers_pytest or any(re.match(r"pytest(?![\w.-])", req) for req in group)
    elif files.has("requirements.txt"):
        words += ["-r", "requirements.txt"]
        named += files.text("requirements.txt") or ""
    for name in _TEST_REQUIREMENTS:
        if files.has(name):
            words += ["-r", name]
            named += files.text(name) or ""
            covers_pytest = covers_pytest or "pytest" in (files.text(name) or "")
            break
    if runner == "pytest" and not covers_pytest:
        words.append("pytest")
    listed = {_normalised(m[0]) for m in re.finditer(r"[A-Za-z0-9][A-Za-z0-9._-]*", named)}
    for requirement, _why in plugins:
        if requirement_name(requirement) not in listed:
            words.append(requirement)
    return shlex.join(words)


def _why_setup(
    runner: str,
    files: _Files,
    config: _PytestConfig,
    facts: EnvironmentFacts,
    installable: bool,
    notes: list[str],
) -> list[str]:
    """Why a checkout cannot run the tests as it is (empty: it can)."""
    why = []
    src = _src_packages(files)
    on_path = {p.strip("/").removeprefix("./") for p in config.pythonpath}
    if src and "src" not in on_path:
        if installable:
            unseen = (
                "pytest's pythonpath does not name src"
                if runner == "pytest"
                else ("unittest does not look there")
            )
            why.append(
                f"the code is under src/ ({', '.join(src)}) and {unseen}: "
                "a checkout imports it only once installed"
            )
        else:
            notes.append(
                'the code is under src/ and nothing installs it: add pythonpath = ["src"] to '
                "pytest's configuration, or a [build-system] to pyproject.toml"
            )
    if facts.editable:
        why.append(
            f"your environment has {', '.join(facts.editable)} installed editable from this "
            "working tree: a checkout's tests would import your tree's code, not its own"
        )
    if runner == "pytest" and facts.has_pytest is False:
        why.append(f"pytest is not installed for {facts.python}")
    if runner == "pytest" and facts.installed is not None:
        for requirement, reason in plugins_needed(config):
            if requirement_name(requirement) not in facts.installed:
                why.append(f"{reason}, and {requirement} is not installed for {facts.python}")
    return why


# --- the proposal --------------------------------------------------------------------------


def scan(root: Path, names: Iterable[str], facts: EnvironmentFacts) -> Proposal:
    """The proposal for the repository at ``root`` whose files are ``names``; raises
    :class:`NothingFound` when no runner eyeful knows can be told from them."""
    files = _Files(root, sorted(names))
    pyproject = pyproject_table(files)
    config = _pytest_config(files, pyproject)
    tests = _test_files(files)
    runner = _runner(files, config, tests)
    notes: list[str] = []
    if runner.name == "go":
        return Proposal("go", "go test ./...", reasons=tuple(runner.reasons))
    if files.has("go.mod"):
        notes.append("go.mod too: its tests are not in this command")
    installable = _installable(files, pyproject)
    why = _why_setup(runner.name, files, config, facts, installable, notes)
    plugins = plugins_needed(config) if runner.name == "pytest" else []
    setup = _setup_command(runner.name, files, pyproject, installable, plugins) if why else None
    reasons_plugins = [  # the plugins setup installs that no reason for it names already
        f"setup installs {req}: {reason}"
        for req, reason in (plugins if setup else [])
        if not any(f"{req} is not installed" in line for line in why)
    ]
    # With a setup the commands run in eyeful's virtualenv, where `python` is always there.
    python = "python" if setup else facts.python
    test_one = None
    if runner.name == "pytest":
        test = _pytest_test(python, config, tests, files)
        if (doctests := _doctests_elsewhere(files, config)) is not None:
            notes.append(doctests)
    else:
        test, test_one = _unittest_commands(python, files, tests, notes)
    derived = focus.of(test, None)
    if test_one is None and derived is None:
        notes.append("eyeful cannot derive test_one from this test command: write it")
    reasons = [*runner.reasons, *(f"setup: {reason}" for reason in why), *reasons_plugins]
    return Proposal(runner.name, test, test_one, setup, reasons=tuple(reasons), notes=tuple(notes))
