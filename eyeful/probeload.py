"""How a project's pytest finds eyeful's probe, whatever the test command does to PYTHONPATH.

The probe is named to pytest twice, by variables ``env VAR=... cmd`` keeps: ``PYTEST_PLUGINS``
and ``-p eyeful_probe`` in ``PYTEST_ADDOPTS`` (eyeful/pytest_records.py: ``plugin_env``), and
found through the probe's directory first on ``PYTHONPATH``. A command that sets ``PYTHONPATH``
itself (``env PYTHONPATH=src python -m pytest``, a tox-style script) replaces that entry; two
places Python looks without ``PYTHONPATH`` still find it:

- eyeful's per-worktree virtualenvs (``isolate = "venv"``) hold ``eyeful_probe.pth`` naming the
  probe's directory (:func:`install_pth`), so their Python finds it whatever the command sets;
- ``python -m pytest`` puts its working directory first on ``sys.path``: for that one run a
  loader, ``eyeful_probe.py`` in the worktree's root (:func:`root_loader`), loads the probe from
  where eyeful is installed, and the probe keeps pytest from collecting it. It is written when
  the command says it sets ``PYTHONPATH`` (:func:`sets_pythonpath`), and again for a run whose
  pytest could not load the probe.

Where neither reaches the command's Python, the run is read from its text (:data:`NO_ROUTE` says
so), and asks pytest through ``PYTEST_ADDOPTS`` for a JUnit report and a summary line per test
(:func:`text_env`), so that each test is named by its own id, never counted in one pass.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path

PROBE_MODULE = "eyeful_probe"
LOADER_VAR = "EYEFUL_PROBE_LOADER"
"""The loader eyeful wrote for a run (:func:`root_loader`), which the probe keeps pytest from
collecting."""
PROBE_DIR = Path(__file__).resolve().parent / "data" / "probe"
"""The directory that holds only the probe (and its watcher module): put first on PYTHONPATH.
(Here, with the standard library only: the replay's environment key reaches this module through
eyeful/isolation.py, and must not import pydantic.)"""

__all__ = [
    "LOADER_VAR",
    "NO_ROUTE",
    "PROBE_DIR",
    "PROBE_MODULE",
    "install_pth",
    "root_loader",
    "sets_pythonpath",
    "text_env",
    "venv_route",
]

PTH_NAME = f"{PROBE_MODULE}.pth"
LOADER_NAME = f"{PROBE_MODULE}.py"
NO_ROUTE = (
    "no other route reached the command's Python (eyeful's virtualenv, or `python -m pytest` "
    "run in the worktree's root), so it ran without the probe"
)
_SETS = re.compile(r"(?:^|[\s;&|(])(?:PYTHONPATH=|-u\s*PYTHONPATH\b|--unset=PYTHONPATH\b)")
_LOADER = """\
# Written by eyeful for one test run and removed after it: loads eyeful's pytest probe from
# where eyeful is installed, for a test command that sets PYTHONPATH itself.
import importlib.util as _util
import sys as _sys

_where = {where!r}
if _where not in _sys.path:
    _sys.path.append(_where)
_spec = _util.spec_from_file_location(__name__, _where + "/{module}.py")
_probe = _util.module_from_spec(_spec)
_sys.modules[__name__] = _probe
_spec.loader.exec_module(_probe)
"""


def sets_pythonpath(command: str) -> bool:
    """Whether ``command`` says it sets (or clears) ``PYTHONPATH`` itself."""
    return _SETS.search(command) is not None


def install_pth(venv: Path) -> None:
    """``eyeful_probe.pth`` in each site-packages of ``venv``, naming the probe's directory
    (written again when eyeful moved)."""
    line = f"{PROBE_DIR}\n"
    for site in sorted(venv.glob("lib/python*/site-packages")):
        path = site / PTH_NAME
        with contextlib.suppress(OSError):
            if path.is_file() and path.read_text("utf-8") == line:
                continue
            path.write_text(line, "utf-8")


def venv_route(env: Mapping[str, str]) -> bool:
    """Whether ``env`` activates a virtualenv whose Python finds the probe on its own."""
    venv = env.get("VIRTUAL_ENV") or ""
    return bool(venv) and any(Path(venv).glob(f"lib/python*/site-packages/{PTH_NAME}"))


@contextlib.contextmanager
def root_loader(cwd: Path) -> Iterator[dict[str, str] | None]:
    """The loader in ``cwd`` for the block, and the variable that tells the probe where it is;
    None where ``cwd`` has a file of that name already (the project's own: left alone)."""
    path = cwd / LOADER_NAME
    try:
        with path.open("x", encoding="utf-8") as file:
            file.write(_LOADER.format(where=str(PROBE_DIR), module=PROBE_MODULE))
    except OSError:
        yield None
        return
    try:
        yield {LOADER_VAR: str(path)}
    finally:
        path.unlink(missing_ok=True)
        _remove_compiled(cwd)


def _remove_compiled(cwd: Path) -> None:
    """The loader's compiled file, when Python wrote one beside it."""
    cache = cwd / "__pycache__"
    for stale in cache.glob(f"{PROBE_MODULE}.*.pyc"):
        stale.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        cache.rmdir()  # only when it held nothing else


def text_env(report: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """``PYTEST_ADDOPTS`` (after what is there) asking pytest for a JUnit report at ``report``
    (file and name of each test: xunit1) and a summary line for every test (``-r`` all but the
    passes' captured output)."""
    ours = ["--junitxml", str(report), "-o", "junit_family=xunit1", "-rfEsxXp"]
    there = environ.get("PYTEST_ADDOPTS", "")
    return {"PYTEST_ADDOPTS": " ".join(filter(None, [there, shlex.join(ours)]))}
