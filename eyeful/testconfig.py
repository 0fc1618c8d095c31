"""The change's pytest configuration on the base's file: the tests' part of a shared file.

A change that only makes the tests stricter (``filterwarnings = ["error"]``, ``xfail_strict``) in
``[tool.pytest.ini_options]`` of pyproject.toml, ``[pytest]`` of tox.ini or ``[tool:pytest]`` of
setup.cfg changes what the tests demand, not what the code does: the base side runs with it, as it
runs with the change's pytest.ini (eyeful/testside.py). Only such options (``_DEMANDS``):
``pythonpath``, ``testpaths``, ``addopts`` and the like say where the code is and which tests
exist, and moved to the base they made a broken import look pre-existing. The rest of the file (a
project's version, dependencies, other tools' settings) stays the base's. The section is moved as
text and the result read back: where it does not read as the base's file with the change's section,
it is not used (the base's file stays).
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Callable
from typing import Any

from eyeful.tomlcompat import tomllib

__all__ = ["CONFIG_FILES", "TOOL_FILES", "overlaid", "section_differs", "tools_alone_differ"]

CONFIG_FILES = {
    "pyproject.toml": None, "tox.ini": "pytest", "setup.cfg": "tool:pytest",
    "pytest.ini": "pytest", ".pytest.ini": "pytest",
    "pytest.toml": "[pytest]", ".pytest.toml": "[pytest]",
}  # fmt: skip
"""The files pytest reads its configuration from, and their section: an INI section's name, a
TOML table's (``[pytest]``: pytest 9's own TOML files) or None (pyproject.toml's
``[tool.pytest.ini_options]``, or pytest 9's ``[tool.pytest]``). pytest.ini and pytest.toml are
pytest's alone, but their options are the same: ``pythonpath`` or ``addopts`` in them are the
code's layout too. A file added or deleted is not moved either: which file pytest finds decides
which configuration it reads at all."""

_TOML_HEADER = re.compile(r"\s*\[\s*tool\s*\.\s*pytest\s*\.\s*ini_options\s*\]\s*(#.*)?")
_TOML_TABLE = re.compile(r"\s*\[\[?[^\]\n]+\]\]?\s*(#.*)?")
_PYTEST_TABLE = re.compile(r"\s*\[\s*pytest\s*\]\s*(#.*)?")


def _reader(name: str) -> Callable[[str], tuple[Any, Any] | None]:
    """How a configuration file named ``name`` is read: its pytest options and the rest."""
    section = CONFIG_FILES[name]
    if section is None:
        return _toml
    if section == "[pytest]":
        return _pytest_toml
    return lambda text: _ini(text, section)


def _headers(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The pytest section's header in a file named ``name``, and any section's."""
    section = CONFIG_FILES[name]
    if section is None:
        return _TOML_HEADER, _TOML_TABLE
    if section == "[pytest]":
        return _PYTEST_TABLE, _TOML_TABLE
    return re.compile(rf"\[{re.escape(section)}\]\s*"), re.compile(r"\[[^\]\n]+\]\s*")


def overlaid(name: str, base: str | None, head: str | None) -> str | None:
    """``base`` (a file named ``name``'s text on the base; None: absent) with the pytest section
    of ``head``; None when the sections are alike, or when that cannot be made faithfully."""
    if base is None or head is None or name not in CONFIG_FILES:
        return None
    read = _reader(name)
    base_read, head_read = read(base), read(head)
    if base_read is None or head_read is None or base_read[0] == head_read[0]:
        return None
    if not _demands_only(base_read[0], head_read[0]):
        return None
    header, table = _headers(name)
    block = _block(head.splitlines(keepends=True), header, table)
    lines = base.splitlines(keepends=True)
    start, end = _span(lines, header, table)
    if start is None:
        made = base + ("" if not base or base.endswith("\n") else "\n") + "\n" + "".join(block)
    else:
        made = "".join(lines[:start] + block + lines[end:])
    made_read = read(made)
    if made_read is None or made_read != (head_read[0], base_read[1]):
        return None
    return made


def section_differs(name: str, base: str | None, head: str | None) -> bool:
    """Whether a shared file's pytest section differs between ``base`` and ``head`` (its text on
    each side; None: absent); a side that cannot be read may differ."""
    if name not in CONFIG_FILES:
        return False
    read = _reader(name)
    base_read = read(base) if base is not None else (None, None)
    head_read = read(head) if head is not None else (None, None)
    return base_read is None or head_read is None or base_read[0] != head_read[0]


def tools_alone_differ(
    name: str, base: str | None, head: str | None, *, tools: bool = True
) -> bool:
    """Whether a configuration file differs between ``base`` and ``head`` only where pytest
    and developers' tools read it (both sides read; one absent, None, reads as empty: a
    `pytest.ini` added or removed, helper-75): its pytest section, its linters', type
    checkers', coverage's or tox's sections (helper-78, helper-80: `[tool.ruff.lint]`), or the
    whole of a file only such a tool reads (:data:`TOOL_FILES`): the tests' configuration, no
    more. Without ``tools``, the pytest section alone (a file below the root may be a template
    the code ships: helper-81)."""
    if base == head:
        return False
    if name in TOOL_FILES:
        return tools
    if name not in CONFIG_FILES:
        return False
    read = _reader(name)
    base_read, head_read = read(base or ""), read(head or "")
    if base_read is None or head_read is None:
        return False
    if not tools:
        return bool(base_read[0] != head_read[0] and base_read[1] == head_read[1])
    return bool(_without_tools(base_read[1]) == _without_tools(head_read[1]))


TOOL_FILES = frozenset({
    ".flake8", "mypy.ini", ".mypy.ini", "ruff.toml", ".ruff.toml", ".coveragerc", ".pylintrc",
    "pylintrc", ".isort.cfg", ".pydocstyle", ".pre-commit-config.yaml", ".yamllint", "noxfile.py",
    ".codespellrc", ".bandit", "pyrightconfig.json",
})  # fmt: skip
"""Files only developers' tools read (linters, type checkers, coverage, formatters), never
the code as it runs."""


# Sections of a shared configuration file that only developers' tools read (linters, type
# checkers, formatters, coverage, tox), never the code as it runs: they may come or change with
# the pytest section and the file is still the tests' configuration (helper-78). An INI
# section's name or a TOML `[tool.X]` table's X; a name with one of _TOOL_PREFIXES, alike.
_TOOLS = frozenset({
    "flake8", "pycodestyle", "pep8", "pydocstyle", "pep257", "isort", "mypy", "pylint", "black",
    "ruff", "pyright", "codespell", "bandit", "yapf", "autopep8", "docformatter", "darglint",
    "tox", "testenv", "coverage", "coverage:run", "coverage:report", "coverage:paths",
    "coverage:html", "coverage:xml",
})  # fmt: skip
_TOOL_PREFIXES = ("mypy-", "testenv:", "tox:", "coverage:", "flake8:", "pylint.")


def _without_tools(rest: object) -> object:
    """A configuration file's non-pytest part without what only developers' tools read."""
    if not isinstance(rest, dict):
        return rest
    kept = {k: v for k, v in rest.items() if not _a_tool(k)}
    tool = kept.get("tool")
    if isinstance(tool, dict):  # (pyproject.toml's `[tool.X]` tables)
        others = {k: v for k, v in tool.items() if not _a_tool(k)}
        if others:
            kept["tool"] = others
        else:
            del kept["tool"]
    return kept


def _a_tool(name: object) -> bool:
    return isinstance(name, str) and (name in _TOOLS or name.startswith(_TOOL_PREFIXES))


# The options that only make the tests ask more of the code (or less): where the code is
# imported from (pythonpath, rootdir, an import mode), which tests exist (testpaths, -k, -p a
# plugin) are not among them, and a change to those is the code's layout, never laid over.
_DEMANDS = frozenset({
    "filterwarnings", "xfail_strict", "markers", "strict", "strict_markers", "strict_config",
    "doctest_optionflags", "usefixtures", "timeout", "asyncio_mode", "empty_parameter_set_mark",
})  # fmt: skip


def _demands_only(base: object, head: object) -> bool:
    """Whether the two sections differ only in options of ``_DEMANDS``, or in ``addopts`` words
    that state demands too (``-W error::DeprecationWarning``, ``--strict-markers``)."""
    old = base if isinstance(base, dict) else {}
    new = head if isinstance(head, dict) else {}
    changed = {k for k in old.keys() | new.keys() if old.get(k) != new.get(k)}
    if "addopts" in changed and _demand_words(old.get("addopts"), new.get("addopts")):
        changed.discard("addopts")
    return changed <= _DEMANDS


# addopts' words that only state demands or how much is shown: a warning made an error, strict
# markers or configuration, report and traceback options. `-k`, `-m`, `-p`, `-o`, paths: never.
# Whole words only: short options bundle (`-vvopythonpath=src` is `-v -v -o pythonpath=src`).
_DEMAND_WORD = re.compile(
    r"--strict-markers|--strict-config|--strict|--quiet|--verbose|--showlocals|-l"
    r"|-[vq]+|--color=(?:yes|no|auto)|-r[fEsxXpPaAwN]+|--tb=(?:auto|long|short|line|native|no)"
    r"|--durations=\d+|(?:-W|--pythonwarnings=)[\w.:| -]*"
)


def _demand_words(base: object, head: object) -> bool:
    """Whether two ``addopts`` values differ only by words of demand (each side's words as a
    multiset; ``-W VALUE`` one word)."""
    old, new = _words(base), _words(head)
    if old is None or new is None:
        return False
    extra = (Counter(old) - Counter(new)) + (Counter(new) - Counter(old))
    return all(_DEMAND_WORD.fullmatch(w) for w in extra)


def _words(value: object) -> list[str] | None:
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        text = " ".join(shlex.quote(v) for v in value)
    elif isinstance(value, str):
        text = value
    else:
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    out: list[str] = []
    for word in words:  # `-W VALUE` and `--pythonwarnings VALUE` as one word
        if out and out[-1] in ("-W", "--pythonwarnings"):
            out[-1] = f"{out[-1]}={word}" if out[-1].startswith("--") else f"-W{word}"
        else:
            out.append(word)
    return out


def _span(
    lines: list[str], header: re.Pattern[str], table: re.Pattern[str]
) -> tuple[int | None, int]:
    """Where the section is in ``lines``: its header's index and the next table's (or None)."""
    for i, line in enumerate(lines):
        if header.fullmatch(line.rstrip("\r\n")):
            end = i + 1
            while end < len(lines) and not table.fullmatch(lines[end].rstrip("\r\n")):
                end += 1
            return i, end
    return None, 0


def _block(lines: list[str], header: re.Pattern[str], table: re.Pattern[str]) -> list[str]:
    start, end = _span(lines, header, table)
    if start is None:
        return []
    block = lines[start:end]
    if block and not block[-1].endswith("\n"):
        block[-1] += "\n"
    return block


def _toml(text: str) -> tuple[Any, Any] | None:
    """pyproject.toml's pytest table, and the rest of the file."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return None
    tool = data.get("tool")
    pytest = tool.get("pytest") if isinstance(tool, dict) else None
    options = pytest.get("ini_options") if isinstance(pytest, dict) else None
    if isinstance(pytest, dict) and any(k != "ini_options" for k in pytest):
        options = pytest  # pytest 9's `[tool.pytest]`, its options as TOML
    rest = {k: v for k, v in data.items() if k != "tool"}
    if isinstance(tool, dict):
        others = {k: v for k, v in tool.items() if k != "pytest"}
        if others:
            rest["tool"] = others
    return options, rest


def _pytest_toml(text: str) -> tuple[Any, Any] | None:
    """pytest.toml's ``[pytest]`` table, and the rest of the file."""
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return None
    return data.get("pytest"), {k: v for k, v in data.items() if k != "pytest"}


def _ini(text: str, section: str) -> tuple[Any, Any] | None:
    """An INI file's pytest section, and its other sections."""
    import configparser  # off a passing review's path

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    sections = {name: dict(parser.items(name, raw=True)) for name in parser.sections()}
    return sections.pop(section, None), sections
