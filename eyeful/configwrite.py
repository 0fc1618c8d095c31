"""Writing the configuration `git eyeful init` proposes, without touching anything else.

Into ``pyproject.toml`` when the repository has one: the table is *appended* as text, so every
byte of the user's file stays as it was (no TOML library rewrites it), in the file's own line
endings. Else into a new ``.eyeful.toml``, created exclusively. Never over a configuration that
exists (``[tool.eyeful]`` in pyproject.toml, or any ``.eyeful.toml``), never through a symlink,
and only when the file as it would be validates as eyeful's configuration: nothing half-done.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from eyeful.config import CONFIG_LIMIT, EYEFUL_TOML, PYPROJECT, Config, load_config, parse_config
from eyeful.errors import EyefulError
from eyeful.inputfiles import exists, read_regular
from eyeful.tomlcompat import tomllib


@dataclass(frozen=True)
class Plan:
    """What init would write: ``suffix`` at the end of ``path`` (a new file when ``new``)."""

    path: Path
    new: bool
    original: bytes
    suffix: bytes
    config: Config

    @property
    def name(self) -> str:
        return self.path.name


def in_pyproject(root: Path) -> bool:
    """Whether the configuration goes into pyproject.toml (else .eyeful.toml)."""
    return exists(root / PYPROJECT)


def refuse_existing(root: Path) -> None:
    """Raise when the repository already configures eyeful, saying where."""
    if exists(root / EYEFUL_TOML):
        raise EyefulError(
            f"eyeful is already configured in {EYEFUL_TOML}; init never overwrites a "
            "configuration (edit it, or see what init proposes with `git eyeful init --print`)"
        )
    if load_config(root).source:  # an invalid pyproject.toml is an error naming it
        raise EyefulError(
            f"eyeful is already configured in {PYPROJECT} [tool.eyeful]; init never overwrites "
            "a configuration (edit it, or see what init proposes with `git eyeful init --print`)"
        )


def plan(root: Path, text: str) -> Plan:
    """The write of ``text`` (the table as TOML for where it goes), checked: the file as it
    would be parses, and its configuration validates."""
    refuse_existing(root)
    path = root / (PYPROJECT if in_pyproject(root) else EYEFUL_TOML)
    if path.is_symlink():
        raise EyefulError(
            f"{path.name} is a symbolic link; init writes only a regular file: add the table "
            "yourself (`git eyeful init --print` shows it)"
        )
    new = not exists(path)
    original = b"" if new else read_regular(path, path.name, limit=CONFIG_LIMIT)
    newline = b"\r\n" if b"\r\n" in original else b"\n"
    body = text.encode("utf-8").replace(b"\n", newline)
    # A blank line between the user's last table and eyeful's.
    ended = original.endswith(b"\n")
    gap = newline * (0 if not original else 1 if ended else 2)
    suffix = gap + body
    try:
        data = tomllib.loads((original + suffix).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise EyefulError(
            f"{path.name}: init cannot add its table (the file would not be valid TOML: {err}); "
            "add it yourself (`git eyeful init --print` shows it)"
        ) from None
    table = data if new else data.get("tool", {}).get("eyeful")
    source = EYEFUL_TOML if new else f"{PYPROJECT} [tool.eyeful]"
    return Plan(path, new, original, suffix, parse_config(table, source))


def apply(plan: Plan) -> None:
    """Write it: create the new file, or append to the user's file as it was read."""
    try:
        if plan.new:
            with plan.path.open("xb") as handle:
                handle.write(plan.suffix)
            return
        with plan.path.open("ab") as handle:
            if os.fstat(handle.fileno()).st_size != len(plan.original):
                raise EyefulError(
                    f"{plan.name} changed while init read it; nothing written, run init again"
                )
            handle.write(plan.suffix)
    except FileExistsError:
        raise EyefulError(
            f"{plan.name} appeared while init ran; nothing written, run init again"
        ) from None
    except OSError as err:
        raise EyefulError(f"cannot write {plan.name}: {err.strerror}") from None
