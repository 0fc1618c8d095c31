"""The pytest plugins a project's configuration needs (for `git eyeful init`'s setup): the
distributions named by options of theirs in ``addopts``, by ``-p NAME`` there, and by
``required_plugins``. Pure: reads the configuration's words, never the environment."""

from __future__ import annotations

import re
from typing import Protocol

__all__ = ["PytestConfig", "normalised", "plugins_needed", "requirement_name"]


class PytestConfig(Protocol):
    @property
    def where(self) -> str | None: ...
    @property
    def addopts(self) -> tuple[str, ...]: ...
    @property
    def required_plugins(self) -> tuple[str, ...]: ...


def normalised(name: str) -> str:
    """A distribution's name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


# Options of pytest plugins that a project's addopts commonly passes: the distribution each needs.
_PLUGIN_OPTIONS = (
    ("--cov", "pytest-cov"),
    ("--no-cov", "pytest-cov"),
    ("--numprocesses", "pytest-xdist"),
    ("--dist", "pytest-xdist"),
    ("--timeout", "pytest-timeout"),
    ("--benchmark-", "pytest-benchmark"),
    ("--reruns", "pytest-rerunfailures"),
)
# `-p NAME`: the plugin module, and the distribution that has it where the names differ.
_PLUGIN_MODULES = {"xdist": "pytest-xdist", "pytest_cov": "pytest-cov", "cov": "pytest-cov"}


def plugins_needed(config: PytestConfig) -> list[tuple[str, str]]:
    """The plugin distributions pytest's configuration needs, each with why: an option of its
    in ``addopts``, a ``-p NAME`` there, a ``required_plugins`` entry (kept as written)."""
    where = config.where or "pytest's configuration"
    found: dict[str, str] = {}
    words = list(config.addopts)
    for at, word in enumerate(words):
        option = word.split("=", 1)[0]
        for prefix, dist in _PLUGIN_OPTIONS:
            if option.startswith(prefix):
                found.setdefault(dist, f"addopts in {where} passes {option}")
        if re.fullmatch(r"-n\S*", word):
            found.setdefault("pytest-xdist", f"addopts in {where} passes -n")
        module = word[2:] if word.startswith("-p") and len(word) > 2 else None
        if word == "-p" and at + 1 < len(words):
            module = words[at + 1]
        if module and not module.startswith("no:"):
            dist = _PLUGIN_MODULES.get(module, module.replace("_", "-"))
            found.setdefault(dist, f"addopts in {where} loads -p {module}")
    for requirement in config.required_plugins:
        found.setdefault(requirement, f"required_plugins in {where} names it")
    return list(found.items())


def requirement_name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    return normalised(match[0]) if match else requirement
