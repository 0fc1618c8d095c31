"""A case's throwaway clone: the repository cloned into a temporary directory, the base and change
commits resolved there (a `change.patch` becomes a commit on the base), the eyeful settings
written into its otherwise empty working tree, and the commands confirmed in a trust file of its
own. The user's repository and confirmation store are never touched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eyeful.config import EYEFUL_TOML, PYPROJECT, Config, load_config
from eyeful.errors import EyefulError
from eyeful.evaluate.cases import Case
from eyeful.gitutil import clean_env
from eyeful.trust import TrustStore

_IDENTITY = {
    "GIT_AUTHOR_NAME": "eyeful eval",
    "GIT_AUTHOR_EMAIL": "eval@eyeful.invalid",
    "GIT_COMMITTER_NAME": "eyeful eval",
    "GIT_COMMITTER_EMAIL": "eval@eyeful.invalid",
    "GIT_AUTHOR_DATE": "1700000000 +0000",
    "GIT_COMMITTER_DATE": "1700000000 +0000",
}


@dataclass(frozen=True)
class Clone:
    case: Case
    root: Path
    """The clone's working tree (empty but for the eyeful settings)."""
    xdg: Path
    """XDG_CONFIG_HOME for the eyeful runs: the confirmations of this clone only."""
    base: str
    change: str
    config: Config


def _git(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env=env or clean_env(),
        input=stdin,
        capture_output=True,
        check=False,
    )


def _last(data: bytes) -> str:
    lines = data.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else "no message"


def _resolve(root: Path, rev: str, key: str, name: str) -> str:
    for candidate in (rev, f"origin/{rev}"):
        proc = _git("rev-parse", "--verify", "-q", f"{candidate}^{{commit}}", cwd=root)
        if proc.returncode == 0:
            return proc.stdout.decode().strip()
    raise EyefulError(f"{name}: {key}: {rev!r} is not a commit of the case's repository")


def _commit_patch(root: Path, base: str, patch: Path, name: str) -> str:
    env = {**clean_env(), **_IDENTITY, "GIT_INDEX_FILE": str(root.parent / "eval-index")}
    steps: list[tuple[list[str], bytes | None]] = [
        (["read-tree", base], None),
        (["apply", "--cached", "--whitespace=nowarn", "-"], patch.read_bytes()),
    ]
    for args, stdin in steps:
        proc = _git(*args, cwd=root, env=env, stdin=stdin)
        if proc.returncode != 0:
            raise EyefulError(f"{name}: patch: does not apply to the base: {_last(proc.stderr)}")
    tree = _git("write-tree", cwd=root, env=env).stdout.decode().strip()
    proc = _git("commit-tree", tree, "-p", base, "-m", "Change under review", cwd=root, env=env)
    if proc.returncode != 0:
        raise EyefulError(f"{name}: patch: cannot commit it: {_last(proc.stderr)}")
    return proc.stdout.decode().strip()


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _is_tables(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def to_toml(table: dict[str, Any], prefix: str = "") -> str:
    """A small TOML writer for settings tables (strings, numbers, booleans, lists, tables and
    arrays of tables)."""
    plain = [(k, v) for k, v in table.items() if not isinstance(v, dict) and not _is_tables(v)]
    out = "".join(f"{key} = {_toml_value(value)}\n" for key, value in plain)
    for key, value in table.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            out += f"\n[{name}]\n" + to_toml(value, name)
        elif _is_tables(value):
            for item in value:
                out += f"\n[[{name}]]\n" + to_toml(item, name)
    return out


def _settings(root: Path, case: Case, change: str) -> Config:
    """Write the case's eyeful settings, or the repository's own from the change, and read them."""
    if case.spec.eyeful is not None:
        (root / EYEFUL_TOML).write_text(to_toml(case.spec.eyeful), encoding="utf-8")
    else:
        for name in (PYPROJECT, EYEFUL_TOML):
            proc = _git("show", f"{change}:{name}", cwd=root)
            if proc.returncode == 0:
                (root / name).write_bytes(proc.stdout)
    try:
        return load_config(root)
    except EyefulError as err:
        raise EyefulError(f"{case.name}: {err}") from None


def make_clone(case: Case, where: Path) -> Clone:
    """Clone the case's repository into ``where`` and get it ready for eyeful."""
    root = where / "repo"
    proc = _git("clone", "-q", "--no-checkout", str(case.repository), str(root), cwd=where)
    if proc.returncode != 0:
        raise EyefulError(
            f"{case.name}: repository: cannot clone {case.repository}: {_last(proc.stderr)}"
        )
    base = _resolve(root, case.spec.base, "base", case.name)
    if case.patch is not None:
        change = _commit_patch(root, base, case.patch, case.name)
    else:
        assert case.spec.change is not None
        change = _resolve(root, case.spec.change, "change", case.name)
    config = _settings(root, case, change)
    xdg = where / "xdg"
    xdg.mkdir()
    return Clone(case=case, root=root, xdg=xdg, base=base, change=change, config=config)


def confirm(clone: Clone) -> None:
    """Confirm the case's commands for its throwaway clone, in the clone's own trust file."""
    TrustStore(clone.xdg / "eyeful" / "confirmed").confirm(clone.root, clone.config)


def eyeful_env(clone: Clone) -> dict[str, str]:
    """The environment of the eyeful run: the clone's XDG directory, the eval's Python first on
    PATH (so a case's `python -m pytest` finds it)."""
    env = clean_env()
    env["XDG_CONFIG_HOME"] = str(clone.xdg)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env
