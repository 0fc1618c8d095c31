"""What a file's outcome hooks read from other files of the repository: the names they take
from the modules they import (``from tests.helpers import QUARANTINE``, ``helpers.SKIPS``) and
the files they name in string constants (``"quarantine.txt"``).

An unchanged hook (a ``pytest_runtest_makereport`` that passes failures on a list) decides
outcomes by what it reads: when the change edits that, both sides run the change's version
(the base runs the change's tests), so a pass on both is no evidence (eyeful/testside.py's
``decides_outcomes``). Read as syntax, from the hook's functions outwards: the module's
top-level names they use, and the names those use in turn; a hook pytest calls under another
name than its own (a ``specname``, a registered object) makes the whole module the hook's.
Only the module's own statements are followed, not what an imported function reads in turn
beyond its own module's names: the rule looks one import away.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import cast

__all__ = ["Reads", "edited_reads", "hook_reads"]

_ALL = "*"  # every name of a module (a star import, a module passed on as an object)


@dataclass
class Reads:
    """What a hook file reads of other files: by imported module (dotted, with the hook file's
    directory for a relative import), the names taken from it; and the string constants its
    hooks hold (a data file's name)."""

    modules: dict[str, set[str]] = field(default_factory=dict)
    strings: set[str] = field(default_factory=set)


def hook_reads(source: bytes, path: str, hooks: Iterable[str]) -> Reads | None:
    """What the outcome hooks (by name, ``hooks``) of the module at ``path`` read; None where it
    does not parse (the caller counts it as reading anything)."""
    module = _parsed(source)
    if module is None:
        return None
    defined = _top_level(module)
    seeds = {name for name in hooks if name in defined} | _renamed_hooks(module)
    reached = _reach(defined, seeds) if seeds else set(defined)
    reads = Reads()
    for name in reached:
        for node in defined.get(name, ()):
            if isinstance(node, ast.ImportFrom):
                _from_import(node, name, path, reads)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if (alias.asname or alias.name.split(".")[0]) == name:
                        # `import tests.helpers` binds `tests`: anything of the dotted module
                        whole = "." in alias.name and not alias.asname
                        wanted = {_ALL} if whole else _attributes(defined, reached, name)
                        reads.modules.setdefault(alias.name, set()).update(wanted)
            else:
                reads.strings |= {
                    n.value for n in ast.walk(node)
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                }  # fmt: skip
    for node in module.body:  # star imports define no name of their own
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            _from_import(node, _ALL, path, reads)
    return reads


def edited_reads(reads: Reads, path: str, before: bytes | None, after: bytes | None) -> str | None:
    """The first name of the module at ``path`` that ``reads`` takes from it and that the change
    edits (compared as syntax, with the module's names it uses in turn); ``path`` itself where
    the hook names the file in a string, or a side does not parse. None: nothing it reads."""
    stem = path[: -len(".py")] if path.endswith(".py") else None
    names: set[str] = set()
    for dotted, taken in reads.modules.items():
        if stem is not None and _names_module(dotted, stem):
            names |= taken
    name = posixpath.basename(path)
    if any(text == name or text.endswith("/" + name) for text in reads.strings):
        return path
    if not names:
        return None
    old, new = _parsed(before or b""), _parsed(after or b"")
    if old is None or new is None:
        return path
    if _ALL in names:
        return path if ast.dump(old) != ast.dump(new) else None
    was, now = _top_level(old), _top_level(new)
    for name in sorted(names):
        if _definition(was, name) != _definition(now, name):
            return name
    return None


def _renamed_hooks(module: ast.Module) -> set[str]:
    """Top-level functions pytest calls under another name (``hookimpl(specname=...)``)."""
    return {
        node.name for node in module.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any("specname" in ast.dump(d) for d in node.decorator_list)
    }  # fmt: skip


def _names_module(dotted: str, stem: str) -> bool:
    """Whether an import of ``dotted`` (``tests.helpers``; ``./tests/helpers`` relative) may load
    the file ``stem`` (``tests/helpers`` without ``.py``, or a package's ``__init__``): from the
    root, or from any directory pytest or the command put on ``sys.path``."""
    if dotted.startswith("./"):
        wanted = posixpath.normpath(dotted[2:])
        return stem in (wanted, f"{wanted}/__init__")
    wanted = dotted.replace(".", "/")
    return any(
        candidate == tail or candidate.endswith("/" + tail)
        for candidate in (stem, stem.removesuffix("/__init__"))
        for tail in (wanted,)
    )


def _from_import(node: ast.ImportFrom, name: str, path: str, reads: Reads) -> None:
    """``from M import name`` (as ``name``): M's name taken, or M's submodule of that name."""
    module = node.module or ""
    if node.level:
        here = posixpath.dirname(path)
        for _ in range(node.level - 1):
            here = posixpath.dirname(here)
        module = "./" + posixpath.join(here, *module.split(".")) if module else "./" + here
    for alias in node.names:
        if name == _ALL and alias.name == "*":
            reads.modules.setdefault(module, set()).add(_ALL)
        elif (alias.asname or alias.name) == name:
            reads.modules.setdefault(module, set()).add(alias.name)
            sub = f"{module}/{alias.name}" if module.startswith("./") else f"{module}.{alias.name}"
            reads.modules.setdefault(sub, set()).add(_ALL)


def _attributes(defined: dict[str, list[ast.stmt]], reached: set[str], alias: str) -> set[str]:
    """The attributes the reached statements take of a module imported as ``alias``
    (``helpers.SKIPS``); every name where the module itself is passed on."""
    out: set[str] = set()
    for name in reached:
        for node in defined.get(name, ()):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            attributed = set()
            for sub in ast.walk(node):
                value = sub.value if isinstance(sub, ast.Attribute) else None
                if isinstance(value, ast.Name) and value.id == alias:
                    out.add(cast(ast.Attribute, sub).attr)
                    attributed.add(id(value))
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and sub.id == alias and id(sub) not in attributed:
                    return {_ALL}
    return out


def _top_level(module: ast.Module) -> dict[str, list[ast.stmt]]:
    """The module's top-level statements by the names they bind (through ``if`` and ``try``:
    an optional import's fallback binds the same name)."""
    out: dict[str, list[ast.stmt]] = {}
    for node in _statements(module.body):
        for name in _bound(node):
            out.setdefault(name, []).append(node)
    return out


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for node in body:
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            nested = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            for handler in getattr(node, "handlers", []):
                nested += handler.body
            yield from _statements(nested)
        else:
            yield node


def _bound(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name.split(".")[0]) for a in node.names if a.name != "*"]
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []


def _reach(defined: dict[str, list[ast.stmt]], seeds: set[str]) -> set[str]:
    """The top-level names the seeds' statements use, and those theirs use, and so on."""
    reached: set[str] = set()
    pending = [name for name in seeds if name in defined]
    while pending:
        name = pending.pop()
        if name in reached:
            continue
        reached.add(name)
        for node in defined[name]:
            pending += [
                n.id for n in ast.walk(node)
                if isinstance(n, ast.Name) and n.id in defined and n.id not in reached
            ]  # fmt: skip
    return reached


def _definition(defined: dict[str, list[ast.stmt]], name: str) -> list[str]:
    """A name's statements and those of the module's names they use, as syntax."""
    return sorted(ast.dump(node) for used in sorted(_reach(defined, {name}))
                  for node in defined[used])  # fmt: skip


def _parsed(data: bytes) -> ast.Module | None:
    try:
        return ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
