"""The layers hold: `lint-imports` passes on the repository as it is, and fails, naming the
contract, on a copy of it with a forbidden import (the contracts are in pyproject.toml)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")
CONTRACTS = {
    contract["id"]: contract["name"]
    for contract in tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "importlinter"
    ]["contracts"]
}


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` in root, with root first on sys.path: the `eyeful` it analyses is root's
    (lint-imports puts its working directory first on sys.path too; PYTHONPATH says it again)."""
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_repository_keeps_every_contract():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in CONTRACTS.values():
        assert f"{name} KEPT" in result.stdout


def test_a_forbidden_import_breaks_its_contract(tmp_path):
    shutil.copytree(
        ROOT / "eyeful", tmp_path / "eyeful", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with (tmp_path / "eyeful" / "gates.py").open("a", encoding="utf-8") as gates:
        gates.write("\nimport eyeful.cli.app  # the core reaching up into the command line\n")
    with (tmp_path / "eyeful" / "trust.py").open("a", encoding="utf-8") as trust:
        trust.write("\nimport rich  # the core printing\n")

    result = lint_imports(tmp_path)

    assert result.returncode != 0, result.stdout + result.stderr
    out = result.stdout
    # The copy was analysed, not the installed package: the imports named are the added ones.
    assert f"{CONTRACTS['core-below']} BROKEN" in out, out
    assert "- eyeful.gates -> eyeful.cli.app" in out, out
    assert f"{CONTRACTS['cli-prints']} BROKEN" in out, out
    assert "- eyeful.trust -> rich" in out, out
    # The agents are untouched: that contract still holds.
    assert f"{CONTRACTS['review-joins']} KEPT" in out, out
