"""The agent's files: an export of the change's tree, with no link to any repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest

from eyeful.agents.export import exported_tree


def _tree(repo: pygit2.Repository) -> str:
    """calc.py, an executable script, a nested file, links in and out, a submodule."""
    blob = repo.create_blob
    inner = repo.TreeBuilder()
    inner.insert("deep.txt", blob(b"deep\n"), pygit2.GIT_FILEMODE_BLOB)
    top = repo.TreeBuilder()
    top.insert("calc.py", blob(b"def add(a, b):\n    return a + b\n"), pygit2.GIT_FILEMODE_BLOB)
    top.insert("run.sh", blob(b"#!/bin/sh\necho run\n"), pygit2.GIT_FILEMODE_BLOB_EXECUTABLE)
    top.insert("pkg", inner.write(), pygit2.GIT_FILEMODE_TREE)
    top.insert("inside", blob(b"pkg/deep.txt"), pygit2.GIT_FILEMODE_LINK)
    top.insert("secrets", blob(b"/etc/passwd"), pygit2.GIT_FILEMODE_LINK)
    top.insert("up", blob(b"../../../etc/passwd"), pygit2.GIT_FILEMODE_LINK)
    top.insert("vendor", pygit2.Oid(hex="1" * 40), pygit2.GIT_FILEMODE_COMMIT)
    return str(top.write())


def test_export_is_the_tree_and_nothing_of_the_repository(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "repo"))
    tree = _tree(repo)
    with exported_tree(repo, tree) as root:
        files = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
        assert files == ["calc.py", "inside", "pkg", "pkg/deep.txt", "run.sh"]
        assert (root / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
        assert os.access(root / "run.sh", os.X_OK)
        assert not os.access(root / "calc.py", os.X_OK)
        assert (root / "inside").is_symlink() and (root / "inside").read_text() == "deep\n"
        assert not root.is_relative_to(tmp_path / "repo")
        # git finds no repository there: no .git inside, none above.
        proc = subprocess.run(
            ["git", "rev-parse", "--git-dir"], cwd=root, capture_output=True, check=False
        )
        assert proc.returncode == 128
    assert not root.exists()


def test_a_tmpdir_inside_a_repository_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TMPDIR inside a repository is passed over (a git there would find the repository):
    the export goes to /tmp instead."""
    repo = pygit2.init_repository(str(tmp_path / "repo"))
    inside = tmp_path / "repo" / "tmp"
    inside.mkdir()
    monkeypatch.setenv("TMPDIR", str(inside))
    monkeypatch.setattr("tempfile.tempdir", None)
    with exported_tree(repo, _tree(repo)) as root:
        assert not root.is_relative_to(tmp_path)
    assert not list(inside.iterdir())


def test_no_link_resolves_outside_the_export_however_chained(tmp_path: Path) -> None:
    # Each link alone stays inside by its text; chained, they lead out: `pkg/up` is the export's
    # root, so `pkg/up/..` is its parent; `esc` goes through a link that goes through another.
    repo = pygit2.init_repository(str(tmp_path / "repo"))
    blob = repo.create_blob
    pkg = repo.TreeBuilder()
    pkg.insert("up", blob(b".."), pygit2.GIT_FILEMODE_LINK)
    pkg.insert("deep.txt", blob(b"deep\n"), pygit2.GIT_FILEMODE_BLOB)
    top = repo.TreeBuilder()
    top.insert("pkg", pkg.write(), pygit2.GIT_FILEMODE_TREE)
    top.insert("out", blob(b"pkg/up/.."), pygit2.GIT_FILEMODE_LINK)
    top.insert("hop", blob(b"pkg/up"), pygit2.GIT_FILEMODE_LINK)
    top.insert("esc", blob(b"hop/pkg/up/../x"), pygit2.GIT_FILEMODE_LINK)
    top.insert("ok", blob(b"hop/pkg/deep.txt"), pygit2.GIT_FILEMODE_LINK)
    with exported_tree(repo, str(top.write())) as root:
        for path in root.rglob("*"):
            if path.is_symlink():
                resolved = Path(os.path.realpath(path))
                assert resolved == root or resolved.is_relative_to(root), (path, resolved)
        assert not (root / "out").is_symlink() and not (root / "esc").is_symlink()
        assert (root / "ok").read_text() == "deep\n"  # a chain that stays inside is kept
