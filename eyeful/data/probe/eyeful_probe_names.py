# ruff: noqa: PTH100, PTH118
# (os.path, not pathlib: this runs in any project's Python)
"""What every run of eyeful's probe needs, and nothing more: a module's file read without asking
the module, and where the standard library and the installed distributions are. The rest of the
probe (the tracer, the map, the sandbox's watch) is imported only by a run that asks for it.
Standard library only. PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import contextlib
import functools
import os
import site
import sysconfig
from types import ModuleType
from typing import Any


def namespace_of(module: object) -> dict[str, Any] | None:
    """A module's namespace, read without asking the module (one loaded lazily,
    ``importlib.util._LazyModule``, would be loaded; another class's ``__getattr__`` run): None
    for any other object."""
    if not isinstance(module, ModuleType):
        return None
    try:
        namespace = object.__getattribute__(module, "__dict__")
    except Exception:
        return None
    return namespace if isinstance(namespace, dict) else None


def module_file(module: object) -> str | None:
    """A module's file (``__file__``), read as :func:`namespace_of` reads."""
    namespace = namespace_of(module)
    name = namespace.get("__file__") if namespace is not None else None
    return name if isinstance(name, str) else None


@functools.cache
def library_roots() -> tuple[str, ...]:
    """The standard library's and the installed distributions' directories (read once a run:
    they do not move while it runs)."""
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    with contextlib.suppress(Exception):  # an old virtualenv's site module lacks them
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    roots = {os.path.abspath(root) for root in roots if root}
    roots |= {os.path.realpath(root) for root in roots}
    return tuple(os.path.join(root, "") for root in roots)
