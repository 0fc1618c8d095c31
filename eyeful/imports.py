"""The code under test is the checkout's: where a run imported the project's modules from.

A run in a worktree must import the worktree's code. An editable install (`pip install -e .`), a
`.pth` file or a `PYTHONPATH` entry can point the interpreter at the user's working tree instead,
and then the base's run tests the change's code: every regression reads as pre-existing. The
probe records the file of every module imported outside the standard library and site-packages;
a file inside the user's working tree (not under its `.git`, where the worktrees are) was
imported from the wrong tree.

The remedy is to put the worktree's own import roots first: for each such file, the directory
above its top package (the first directory up without an ``__init__.py``), at the same place in
the worktree. When a run still imports from the user's tree, it is no result (ERROR, exit 3).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from eyeful.worktrees import STOP

_SHOWN = 3


def from_user_tree(imported: Iterable[str], user_root: Path) -> list[Path]:
    """The imported files that lie in the user's working tree (outside its ``.git``), each
    with its symlinks followed. Each directory is resolved once, and paths stay strings: a run
    imports hundreds of files from a few dozen directories."""
    sep = os.sep
    root = os.path.realpath(user_root).rstrip(sep) + sep
    git_dir = f"{root}.git{sep}"
    real_dirs: dict[str, str] = {}
    out = []
    for name in imported:
        with contextlib.suppress(ValueError, OSError):
            directory, base = os.path.split(name)
            real_dir = real_dirs.get(directory)
            if real_dir is None:
                real_dir = real_dirs[directory] = os.path.realpath(directory).rstrip(sep)
            real = f"{real_dir}{sep}{base}"
            try:
                link = stat.S_ISLNK(os.lstat(real).st_mode)
            except OSError:  # gone since: where it was is what counts
                link = False
            if link:
                real = os.path.realpath(real)
            if real.startswith(root) and not real.startswith(git_dir):
                out.append(Path(name))
    return out


def import_root(path: Path) -> Path:
    """The directory a module file is imported from: above its top package."""
    directory = path.parent
    while (directory / "__init__.py").is_file() and directory.parent != directory:
        directory = directory.parent
    return directory


def worktree_roots(wrong: Iterable[Path], user_root: Path, worktree: Path) -> list[str]:
    """The worktree's import roots for the files imported from the user's tree, in order."""
    root = user_root.resolve()
    roots: dict[str, None] = {}
    for path in wrong:
        with contextlib.suppress(ValueError, OSError, RuntimeError):
            relative = import_root(path.resolve()).relative_to(root)
            roots[str(worktree / relative)] = None
    return list(roots)


def with_roots_first(env: Mapping[str, str], roots: list[str]) -> dict[str, str]:
    """``env`` with ``roots`` first on PYTHONPATH."""
    out = dict(env)
    rest = [entry for entry in out.get("PYTHONPATH", "").split(os.pathsep) if entry]
    out["PYTHONPATH"] = os.pathsep.join([*roots, *rest])
    return out


def wrong_code(wrong: list[Path], user_root: Path) -> str:
    """Why a run that imported the user's tree is no result, naming the files and the fix."""
    shown = ", ".join(str(p) for p in wrong[:_SHOWN])
    more = f" and {len(wrong) - _SHOWN} more" if len(wrong) > _SHOWN else ""
    return (
        f"the tests imported the project's code from your working tree ({user_root}), not from "
        f"eyeful's checkout: {shown}{more}; this is an editable install, a .pth file or "
        'PYTHONPATH pointing there. Set isolate = "venv" with a setup command (for example '
        'setup = "pip install -e .") so each checkout installs its own code'
    )


def config_from_user_tree(
    rootdir: str | None, inifile: str | None, worktree: Path, user_root: Path
) -> str | None:
    """Why a pytest run is no result when it took its configuration from the user's working
    tree: pytest looks for one upward from where it runs, and eyeful's worktrees lie under the
    repository's ``.git``, so a checkout without one of its own finds the working tree's (an
    untracked pytest.ini, the change's pyproject.toml) and runs with it. None when it did not.
    A configuration above the repository is found by the user's own runs too: it is kept."""
    found = inifile or rootdir
    if not found:
        return None
    place = Path(os.path.realpath(found))
    root, checkout = Path(os.path.realpath(user_root)), Path(os.path.realpath(worktree))
    if place == checkout or checkout in place.parents or not place.is_relative_to(root):
        return None
    return (
        f"pytest read its configuration from your working tree ({found}), outside the checkout "
        "eyeful made: the reviewed tree has none of its own where pytest looks, so pytest went "
        "up to your tree's. Commit (or stage) the pytest configuration the tests need, so each "
        "side runs with its own"
    )


@contextlib.contextmanager
def config_stop(worktree: Path) -> Iterator[None]:
    """An empty pytest configuration at ``worktree``'s root while the block runs, so pytest stops
    looking there (as in a clone of the tree, where nothing lies above), then removed: the next
    checkout's tree must not find it. One the tree has is never touched."""
    marker = worktree / STOP
    if marker.exists() or marker.is_symlink():
        yield
        return
    marker.write_text("[pytest]\n", encoding="utf-8")
    try:
        yield
    finally:
        marker.unlink(missing_ok=True)


_MAX_COMPARED = 2_000  # files of an installed copy compared with the tree's


def stale_copies(shadowed: Mapping[str, str], worktree: Path) -> list[str]:
    """Of the project's packages a run imported from a copy outside ``worktree`` (the probe's
    ``shadowed``), those whose copy differs from the tree's: a Python file of both, unlike.
    Such a run did not test the tree's code. Each as ``name (its file)``."""
    out = []
    for name, found in sorted(shadowed.items()):
        copy = Path(found)
        package = copy.name == "__init__.py"
        for base in (worktree, worktree / "src"):
            mine = base / name if package else base / f"{name}.py"
            if package and mine.is_dir():
                pairs = _pairs(copy.parent, mine)
            elif not package and mine.is_file():
                pairs = [(copy, mine)]
            else:
                continue
            differing = next((m for c, m in pairs if _differ(c, m)), None)
            if differing is not None:
                out.append(f"`{name}` ({copy}, unlike {differing.relative_to(worktree)})")
            break
    return out


def _pairs(copy: Path, mine: Path) -> list[tuple[Path, Path]]:
    """The Python files of an installed package and the tree's file of the same place."""
    pairs = []
    for index, path in enumerate(sorted(copy.rglob("*.py"))):
        if index >= _MAX_COMPARED:
            break
        ours = mine / path.relative_to(copy)
        if ours.is_file() and "version" not in path.name:  # a build writes `_version.py` anew
            pairs.append((path, ours))
    return pairs


def _differ(copy: Path, mine: Path) -> bool:
    try:
        return copy.read_bytes() != mine.read_bytes()
    except OSError:
        return False


def stale_code(stale: list[str]) -> str:
    """Why a run that imported an outdated installed copy of the project is no result."""
    shown = ", ".join(stale[:_SHOWN])
    more = f" and {len(stale) - _SHOWN} more" if len(stale) > _SHOWN else ""
    return (
        f"the tests imported the project's code from an installed copy that differs from this "
        f"tree: {shown}{more}; they did not run this tree's code. Install it from each checkout "
        '(setup = "pip install -e ." with isolate = "venv"), or put its directory on the path'
    )
