"""The project's `[tool.eyeful]` table (pyproject.toml) or the top level of `.eyeful.toml`.

Read from the user's working tree. Every mistake is one line naming the file and the key.
"""

from __future__ import annotations

import os
import re
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from eyeful.errors import EyefulError
from eyeful.inputfiles import exists, read_regular
from eyeful.model import Model
from eyeful.testids import check_template
from eyeful.textsafe import escape_char, first_hidden, visible
from eyeful.tomlcompat import tomllib

PYPROJECT = "pyproject.toml"
EYEFUL_TOML = ".eyeful.toml"

# Files whose change means `setup` has to run again: manifests and lock files of the usual
# ecosystems. `setup_inputs` replaces the list.
DEFAULT_SETUP_INPUTS = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements*.txt",
    "requirements/*.txt",
    "*.lock",
    "Pipfile",
    "package.json",
    "package-lock.json",
    "pnpm-lock.yaml",
    "go.mod",
    "go.sum",
    "Cargo.toml",
    "Makefile",
    # What setup compiles (an extension module built in place): anywhere in the tree.
    *(f"**/*.{ext}" for ext in ("c", "h", "cc", "cpp", "cxx", "hpp", "pyx", "pxd", "pxi", "rs")),
)


def setup_input(path: str, patterns: tuple[str, ...]) -> bool:
    """Whether a repository path is one of ``setup_inputs``: a pattern's last part matches the
    file's name in the pattern's directory (the top level for a pattern without ``/``), or in
    any directory for a pattern ``**/NAME``."""
    pure = PurePosixPath(path)
    for pattern in patterns:
        wanted = PurePosixPath(pattern)
        anywhere = wanted.parent == PurePosixPath("**")
        if (anywhere or wanted.parent == pure.parent) and fnmatchcase(pure.name, wanted.name):
            return True
    return False


class Commands(Model):
    """The project commands eyeful may run once the user confirmed them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    setup: str | None = None
    test: str | None = None
    test_one: str | None = None

    @field_validator("setup", "test", "test_one")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("is empty; give a shell command or leave the key out")
        return value

    @field_validator("setup", "test", "test_one")
    @classmethod
    def _no_nul(cls, value: str | None) -> str | None:
        if value is not None and "\0" in value:
            raise ValueError("contains a NUL character (\\u0000), which no command can hold")
        return value

    @field_validator("test_one")
    @classmethod
    def _has_placeholder(cls, value: str | None) -> str | None:
        return None if value is None else check_template(value)

    def items(self) -> list[tuple[str, str]]:
        """The configured commands in the order they run."""
        pairs = [("setup", self.setup), ("test", self.test), ("test_one", self.test_one)]
        return [(name, cmd) for name, cmd in pairs if cmd]


PRESETS = ("claude", "codex", "llm", "ollama")
MAX_SECONDS = 7 * 24 * 3600
"""The longest timeout: a week. Longer (or `inf`) is no limit at all, and some clocks overflow."""


class AgentConfig(Model):
    """`[tool.eyeful.agent]`: who plays the experts, the reproduction, fix and judge roles."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Literal["command", "openai"] = "command"
    preset: Literal["claude", "codex", "llm", "ollama"] | None = None
    command: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    experts: tuple[str, ...] = ("correctness", "skeptic", "security")
    timeout: float = Field(
        default=600, gt=0, le=MAX_SECONDS, allow_inf_nan=False, strict=True,
        description="seconds per agent call",
    )  # fmt: skip
    idle_timeout: float = Field(
        default=180, gt=0, le=MAX_SECONDS, allow_inf_nan=False, strict=True,
        description="seconds without output",
    )  # fmt: skip
    budget_tokens: int = Field(default=2_000_000, gt=0, strict=True)
    budget_calls: int = Field(default=200, gt=0, strict=True)
    max_file_chars: int = Field(default=40_000, gt=0, strict=True)
    writable: tuple[Path, ...] = ()
    """Directories a custom command's CLI keeps its state in, writable in its sandbox
    (eyeful/agents/jail.py); absolute or ``~/...``."""

    @field_validator("writable")
    @classmethod
    def _absolute(cls, value: tuple[Path, ...]) -> tuple[Path, ...]:
        out = tuple(path.expanduser() for path in value)
        for path in out:
            if not path.is_absolute() or path == Path("/"):
                raise ValueError(f"{str(path)!r} must be an absolute directory (or ~/...), not /")
            if Path.home().is_relative_to(os.path.normpath(path)):  # HOME, /home, /x/..
                raise ValueError(
                    f"{str(path)!r} holds all of HOME: name the CLI's own directory "
                    '(e.g. "~/.gemini")'
                )
        return out

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                "must be an http:// or https:// URL with a host "
                '(e.g. "http://localhost:11434/v1"), not ' + repr(value)
            )
        return value

    @model_validator(mode="after")
    def _complete(self) -> AgentConfig:
        if self.provider == "command" and not (self.command or self.preset):
            raise ValueError(
                'the command provider needs `command` (e.g. "claude -p") or `preset` '
                f"(one of {', '.join(PRESETS)})"
            )
        if self.provider == "openai" and not (self.base_url and self.model):
            raise ValueError(
                'the openai provider needs `base_url` (e.g. "http://localhost:11434/v1") '
                "and `model`"
            )
        if not self.experts:
            raise ValueError("experts is empty; name at least one expert")
        for expert in self.experts:  # a name, never a path (it names a prompt file)
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]*", expert):
                raise ValueError(
                    f"experts: {expert!r} is not a name (letters, digits, '_' and '-')"
                )
        return self

    def digest_items(self) -> list[tuple[str, str]]:
        """What the user confirms about the agent: what runs, and where requests go."""
        items: list[tuple[str, str]] = [("agent.provider", self.provider)]
        for name in ("preset", "command", "base_url", "model"):
            value = getattr(self, name)
            if value:
                items.append((f"agent.{name}", str(value)))
        if self.writable:  # what its sandbox lets it write
            items.append(("agent.writable", ", ".join(str(path) for path in self.writable)))
        return items


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _relative_path(value: str, what: str) -> str:
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or not value.strip():
        raise ValueError(f"{what} must be a path inside the repository, relative to its root")
    return value


class Config(Model):
    """Everything eyeful reads from the project."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    commands: Commands = Field(default_factory=Commands)
    timeout: float = Field(
        default=600, gt=0, le=MAX_SECONDS, allow_inf_nan=False, strict=True,
        description="seconds per command",
    )  # fmt: skip
    junit: str | None = None
    setup_inputs: tuple[str, ...] = DEFAULT_SETUP_INPUTS
    level: Literal["execution", "read_only"] = "execution"
    agent: AgentConfig | None = None
    block_new_failures: bool = Field(
        default=False,
        strict=True,
        description="a new test failing on the change blocks, like a regression",
    )
    reruns: StrictInt = Field(
        default=3, ge=1, le=100, description="live runs of a regression's test on each side"
    )
    repro_runs: StrictInt = Field(
        default=5, ge=2, le=100, description="runs of a finding's reproduction on each side"
    )
    env: tuple[str, ...] = ()
    """Names of environment variables the results depend on: their values join the cache key."""
    clean_ignored: StrictBool = False
    """Remove ignored files too (`git clean -ffdx`) at every checkout: a pristine tree."""
    isolate: Literal["venv", "none"] | None = None
    """Where project commands run; unset: "venv" when a setup command is configured."""
    sandbox: Literal["auto", "require", "all"] = "auto"
    """Reproductions and fixes run sandboxed where bubblewrap can (auto), or must (require:
    exit 3 where it cannot); all: the confirmed project commands too (eyeful/sandbox.py)."""
    select: Literal["all", "affected"] = "all"
    """affected: run only the tests the change can affect, from the map of what each test ran
    in the last full run (eyeful/affected.py); all: the whole suite."""
    affected_max_age: StrictInt = Field(
        default=50, ge=0, le=100_000,
        description="commits a map may be behind the base before the whole suite runs again",
    )  # fmt: skip
    source: str = Field(default="", exclude=True)

    @property
    def effective_isolate(self) -> Literal["venv", "none"]:
        """A setup command installs things: by default into eyeful's virtualenv, never the
        user's environment. Without one nothing is installed, and the user's tools are used."""
        if self.isolate is not None:
            return self.isolate
        return "venv" if self.commands.setup else "none"

    @field_validator("junit")
    @classmethod
    def _junit_inside(cls, value: str | None) -> str | None:
        if value is None:
            return None
        _relative_path(value, "junit")
        if any(part.casefold() == ".git" for part in PurePosixPath(value).parts):
            raise ValueError(
                "must not be inside .git (git's own files); name a file in the working tree, "
                'e.g. "build/junit.xml"'
            )
        return value

    @field_validator("env")
    @classmethod
    def _env_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(
                    f"{name!r} is not an environment variable name (letters, digits, _)"
                )
        return value

    @field_validator("setup_inputs")
    @classmethod
    def _inputs_inside(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in value:
            _relative_path(pattern, "every setup_inputs pattern")
        return value


def _read_toml(path: Path) -> dict[str, Any]:
    """A regular file's TOML (a FIFO, a device, a directory or a dangling link is an error)."""
    raw = read_regular(path, path.name, limit=CONFIG_LIMIT)
    try:
        data: dict[str, Any] = tomllib.loads(raw.decode("utf-8"))
        return data
    except tomllib.TOMLDecodeError as err:
        raise EyefulError(f"{path.name}: not valid TOML: {err}") from None
    except RecursionError:
        raise EyefulError(
            f"{path.name}: not valid TOML: nested too deeply (arrays or tables inside each other)"
        ) from None
    except UnicodeDecodeError as err:
        raise EyefulError(
            f"{path.name}: not UTF-8 (byte {err.object[err.start]:#04x} at offset {err.start}); "
            "TOML files must be UTF-8"
        ) from None


CONFIG_LIMIT = 16 * 1024 * 1024


def _where(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _hidden_characters(value: object, source: str, key: str = "") -> None:
    """No string in the table may hide text from the terminal (control characters but tab)."""
    if isinstance(value, dict):
        for name, item in value.items():
            _hidden_characters(item, source, f"{key}.{name}" if key else str(name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _hidden_characters(item, source, f"{key}.{index}")
    elif isinstance(value, str) and (char := first_hidden(value)) is not None:
        raise EyefulError(
            f"{source}: {visible(key)}: contains the control character {escape_char(char)}; "
            "write the value on one line without control characters (a terminal would not "
            "show it as it is)"
        )


def parse_config(table: object, source: str) -> Config:
    """Validate a raw table; the error names ``source`` and the key."""
    if not isinstance(table, dict):
        raise EyefulError(f"{source}: must be a table of keys, see the README's Configuration")
    try:
        _hidden_characters(table, source)
    except RecursionError:
        raise EyefulError(f"{source}: nested too deeply; see the README's Configuration") from None
    if "source" in table:
        raise EyefulError(
            f"{source}: unknown key 'source'; the keys are listed in the README's Configuration"
        )
    try:
        return Config.model_validate({**table, "source": source})
    except ValidationError as err:
        first = err.errors()[0]
        key = _where(first["loc"]) or "(table)"
        if first["type"] == "extra_forbidden":
            raise EyefulError(
                f"{source}: unknown key {key!r}; the keys are listed in the README's Configuration"
            ) from None
        message = first["msg"].removeprefix("Value error, ")
        if first["type"] in ("float_type", "int_type") and not isinstance(first["input"], dict):
            given = "true/false" if isinstance(first["input"], bool) else repr(first["input"])
            whole = "whole " if first["type"] == "int_type" else ""
            message += f", not {given}; write a {whole}number without quotes"
        raise EyefulError(f"{source}: {key}: {message}") from None


def load_config(root: Path) -> Config:
    """Load from pyproject.toml's [tool.eyeful], or from .eyeful.toml; empty when neither has it."""
    pyproject = root / PYPROJECT
    dotfile = root / EYEFUL_TOML
    table: object = None
    source = ""
    if exists(pyproject):
        tool = _read_toml(pyproject).get("tool", {})
        if not isinstance(tool, dict):
            raise EyefulError(
                f"{PYPROJECT}: tool: must be a table (eyeful's settings go in [tool.eyeful]), "
                "not a value; see the README's Configuration"
            )
        if "eyeful" in tool:
            table, source = tool["eyeful"], f"{PYPROJECT} [tool.eyeful]"
    if exists(dotfile):
        if table is not None:
            raise EyefulError(
                f"both {PYPROJECT} [tool.eyeful] and {EYEFUL_TOML} configure eyeful; keep one"
            )
        table, source = _read_toml(dotfile), EYEFUL_TOML
    if table is None:
        return Config(source="")
    return parse_config(table, source)
