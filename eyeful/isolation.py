"""Where project commands run: the user's own environment, or a virtualenv per worktree.

With ``isolate = "venv"`` (the default when a setup command is configured) every worktree gets a
virtualenv of its own under ``<common git dir>/eyeful/venvs/wt-N``, made once from the `python3`
the user's PATH gives, and activated (``VIRTUAL_ENV``, ``PATH``) for setup, test and test_one. So
``pip install -e .`` installs the worktree into that virtualenv, never into the user's
environment, and the base's run imports the base's code. The virtualenv sees none of the user's
packages (neither a virtualenv's nor, through ``--system-site-packages``, the base
interpreter's): setup installs what the tests need. It is made with `uv venv --seed` when `uv` is
on PATH, else with `virtualenv` (seeds pip from its own wheels, offline), else with
`python -m venv`; it is made again when the interpreter changes, and setup then runs again. It
holds ``eyeful_probe.pth``, so its Python finds eyeful's pytest probe whatever a command sets
PYTHONPATH to (eyeful/probeload.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from eyeful import probeload
from eyeful.shell import project_env, run_command


class VenvError(Exception):
    """The virtualenv could not be made; the message says what was tried."""

    def __init__(self, message: str, command: str) -> None:
        super().__init__(message)
        self.command = command


@dataclass(frozen=True)
class Environment:
    """The variables for a project command, and whether its virtualenv was just made."""

    env: dict[str, str] | None
    """None: the user's own environment (commands.py's default)."""
    fresh: bool = False


def venv_path(state_dir: Path, worktree_name: str) -> Path:
    return state_dir / "venvs" / worktree_name


def base_interpreter(env: dict[str, str]) -> str | None:
    """The `python3` (else `python`) the user's PATH gives: what the user's commands would run."""
    for name in ("python3", "python"):
        found = shutil.which(name, path=env.get("PATH", ""))
        if found:
            return found
    return None


def _creators(python: str, target: Path) -> list[str]:
    quoted_python, quoted_target = shlex.quote(python), shlex.quote(str(target))
    out: list[str] = []
    uv = shutil.which("uv")
    if uv:
        out.append(f"{shlex.quote(uv)} venv -q --seed --python {quoted_python} {quoted_target}")
    if importlib.util.find_spec("virtualenv") is not None:
        out.append(
            f"{shlex.quote(sys.executable)} -m virtualenv -q --no-periodic-update "
            f"-p {quoted_python} {quoted_target}"
        )
    out.append(f"{quoted_python} -m venv {quoted_target}")
    return out


def _complete(target: Path) -> bool:
    """A usable virtualenv: its python, and its pip (so `pip` never falls through to the user's)."""
    return all((target / "bin" / name).exists() for name in ("python", "pip"))


def activated(base: dict[str, str], target: Path) -> dict[str, str]:
    env = dict(base)
    env.pop("PYTHONHOME", None)
    env["VIRTUAL_ENV"] = str(target)
    env["PATH"] = os.pathsep.join(p for p in (str(target / "bin"), base.get("PATH", "")) if p)
    return env


def prepare(
    state_dir: Path, worktree_name: str, timeout: float, setup: str | None = None
) -> Environment:
    """The worktree's virtualenv, made when missing, made from another interpreter, or made for
    another ``setup`` command (a changed setup starts from nothing: pip would keep what the old
    one installed where the new one asks for no upgrade).

    Raises :class:`VenvError` when no creator could make it.
    """
    base = project_env()
    target = venv_path(state_dir, worktree_name)
    python = base_interpreter(base)
    if python is None:
        raise VenvError(
            "no python3 or python on PATH to make a virtualenv from; put one on PATH or set "
            'isolate = "none"',
            "python3 -m venv",
        )
    key = str(Path(python).resolve()) + "\n" + hashlib.sha256((setup or "").encode()).hexdigest()
    stamp = target.with_name(f"{worktree_name}.interpreter")
    try:
        known = stamp.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        known = ""
    if known == key and _complete(target):
        probeload.install_pth(target)
        return Environment(activated(base, target))
    stamp.unlink(missing_ok=True)
    failures: list[str] = []
    tried = ""
    for command in _creators(python, target):
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        tried = command
        result = run_command(command, target.parent, timeout=timeout, env=base)
        if result.status == "PASSED" and _complete(target):
            stamp.write_text(key + "\n", encoding="utf-8")
            probeload.install_pth(target)
            return Environment(activated(base, target), fresh=True)
        last = result.reason or (result.tail.strip().splitlines() or ["no output"])[-1]
        failures.append(f"`{command.split()[0]}`: {last[:200]}")
    shutil.rmtree(target, ignore_errors=True)
    raise VenvError(
        "could not make eyeful's virtualenv for this worktree ("
        + "; ".join(failures)
        + '); fix that, or set isolate = "none" to run in your own environment',
        tried,
    )
