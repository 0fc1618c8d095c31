"""Whether a test class still has a test method, read from its module's text: a method its class
(or a class of the same module it derives from) defines, or one a base from elsewhere may bring
(a mixin of checks in another module, a decorator that makes methods). A class that derives only
from unittest's own ``TestCase`` has what its body defines, and nothing else: a method the change
deleted from it, or moved to another class, is gone (not "still defined").
"""

from __future__ import annotations

import ast

_UNITTEST_BASES = frozenset({"TestCase", "IsolatedAsyncioTestCase"})


def class_defines(text: str, classes: list[str], name: str) -> bool | None:
    """Whether the class ``classes`` (nested: outer first) of the module ``text`` has the test
    method ``name``, or may have it; None when the text cannot tell (it does not parse, or it
    sets attributes on classes at run time)."""
    if "setattr(" in text:
        return None
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    scope: list[ast.stmt] = module.body
    found: ast.ClassDef | None = None
    for cls in classes:
        found = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if found is None:
            return False
        scope = found.body
    if found is None:
        return None
    return _has(found, name, module, _from_unittest(module), set())


def _from_unittest(module: ast.Module) -> set[str]:
    """The names the module imports from unittest (``from unittest import TestCase``)."""
    return {
        alias.asname or alias.name
        for node in module.body
        if isinstance(node, ast.ImportFrom) and node.module == "unittest"
        for alias in node.names
    }


_DYNAMIC = frozenset({"locals", "exec", "eval", "setattr", "vars", "globals"})


def _body(statements: list[ast.stmt]) -> list[ast.stmt]:
    """A class body's statements, those under `if`, `try`, `with`, `for` and `while` too (a
    method defined only where a feature is there)."""
    out: list[ast.stmt] = []
    for node in statements:
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                out += _body([n for n in inner if isinstance(n, ast.stmt)])
                for handler in inner:
                    if isinstance(handler, ast.ExceptHandler):
                        out += _body(handler.body)
    return out


def _has(
    cls: ast.ClassDef, name: str, module: ast.Module, unittest_names: set[str], seen: set[str]
) -> bool:
    if cls.decorator_list:
        return True  # a class decorator may make methods (parametrized classes)
    body = _body(cls.body)
    for node in body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in _DYNAMIC
            for call in ast.walk(node)
        ):
            return True  # methods made at run time (`locals()[...] = ...`): it may be there
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True  # test_x = other_test
    seen.add(cls.name)
    for base in cls.bases:
        if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
            if base.value.id == "unittest" and base.attr in _UNITTEST_BASES:
                continue
            return True
        if not isinstance(base, ast.Name):
            return True
        if base.id == "object" or (base.id in _UNITTEST_BASES and base.id in unittest_names):
            continue
        local = next(
            (n for n in module.body if isinstance(n, ast.ClassDef) and n.name == base.id), None
        )
        if local is None:
            return True  # a base from elsewhere (a mixin of checks) may define it
        if local.name not in seen and _has(local, name, module, unittest_names, seen):
            return True
    return False
