"""What a test file writes itself, for a ``fails`` text to be the test's own words: a string literal
of the file (an assertion's message, an expected value, an f-string's text), an assertion's
comparison with a literal (``== 6`` of ``assert mul(2, 3) == 6``: pytest's explanation repeats
it), a name an assertion uses (``mul``, ``LookupError``), or the name of a function or method the
file calls (``cache_clear`` of ``c.get.cache_clear()``: the exception of a call that fails itself
names it; not the call's arguments, nor a special method's name like ``__init__``), which shows a
failure only where its exception names it as what was called (:func:`named_as_called`), not as a
word of another message (``index`` of ``list index out of range``). An assertion is an ``assert``
statement or an assertion call (``self.assertEqual(len(w), 2)``, ``assert_equal(...)``,
``pytest.raises(...)``): its arguments' names, and what its message says of a literal it compares
against (``!= 2``: unittest's ``0 != 2``) or of the exception it expects (``DID NOT RAISE
ValueError``, ``ValueError not raised``). Read from the file's syntax tree, so a comment, or a
name the file only imports, is not what it writes. A file that is not Python (a Go test) is read
as text."""

from __future__ import annotations

import ast
import builtins
import re

__all__ = ["named_as_called", "only_called", "written_by_test", "written_texts"]

_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}  # fmt: skip


def written_texts(code: str, calls: bool = True) -> list[str] | None:
    """The texts ``code`` writes (its string literals; the names of what it calls, unless not
    ``calls``; of each assertion, each comparison with a literal as ``<op> <literal>`` and the
    names it uses); None when it is not Python."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    texts = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    for node in ast.walk(tree):
        if calls and isinstance(node, ast.Call) and (called := _callee(node)) is not None:
            texts.append(called)
        if isinstance(node, ast.Assert):
            texts += _compared(node.test, code)
            texts += _names(node.test)
        elif isinstance(node, ast.Call) and (name := _assertion(node)) is not None:
            args = [*node.args, *(k.value for k in node.keywords)]
            for arg in args:
                texts += _names(arg)
            shown = _literal(node.args[1], code) if len(node.args) > 1 else None
            op = _CALL_OPS.get(name)
            if shown is not None and op is not None:
                texts.append(f"{op} {shown}")
            expected = node.args[0] if node.args and name in _RAISES else None
            if isinstance(expected, ast.Name | ast.Attribute):
                # What the runner says when the code did not raise it (pytest, unittest).
                texts.append(_RAISES[name].format(ast.unparse(expected)))
    return texts


# What the runner says when the code did not raise (or warn) what the call expects.
_RAISES = {
    "raises": "DID NOT RAISE {}", "warns": "DID NOT WARN",
    "assertRaises": "{} not raised", "assertRaisesRegex": "{} not raised",
    "assertWarns": "{} not triggered", "assertWarnsRegex": "{} not triggered",
}  # fmt: skip

# unittest's assertions (and numpy's), by what their message puts before the second argument
# (``0 != 2``), each by its whole name: ``assertIsNone``'s second argument is its message, and
# ``assertIsNot`` says ``unexpectedly identical``.
_CALL_OPS = {
    "assertEqual": "!=", "assertEquals": "!=", "assert_equal": "!=", "assertNotEqual": "==",
    "assertAlmostEqual": "!=", "assertNotAlmostEqual": "==", "assertIs": "is not",
}  # fmt: skip
_CALLED = frozenset({"raises", "warns", "fail", "failIf"})


def _assertion(node: ast.Call) -> str | None:
    """The name of an assertion call (``self.assertX``, ``assert_x``, ``pytest.raises``,
    ``self.fail``; not ``failover()``)."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if isinstance(name, str) and (name.startswith(("assert", "failUnless")) or name in _CALLED):
        return name
    return None


def _callee(node: ast.Call) -> str | None:
    """The name of the function or method a call calls (``cache_clear`` of
    ``c.get.cache_clear()``): what its exception says when the call itself fails; None for a
    special method's."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    # A special method (``super().__init__()``) is not what its exception names: Python says
    # ``Widget.__init__()`` of any ``Widget(...)``, a call the test need not have written.
    if not isinstance(name, str) or (name.startswith("__") and name.endswith("__")):
        return None
    return name


def _names(node: ast.AST) -> list[str]:
    return [
        n.id if isinstance(n, ast.Name) else n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Name | ast.Attribute)
    ]


def _compared(test: ast.expr, code: str) -> list[str]:
    out = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Compare):
            continue
        for op, right in zip(node.ops, node.comparators, strict=True):
            shown = _literal(right, code)
            if shown is not None and type(op) in _OPS:
                out.append(f"{_OPS[type(op)]} {shown}")
    return out


def _literal(node: ast.expr, code: str) -> str | None:
    """The source of a literal (a number, a string, ``-1``, a tuple or list of those)."""
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return ast.get_source_segment(code, node)


def written_by_test(text: str, code: str, calls: bool = True) -> bool:
    """Whether the test file ``code`` writes ``text`` itself (see the module's docstring); not
    counting the names of what it calls, unless ``calls``."""
    texts = written_texts(code, calls)
    if texts is None:
        return text in code
    return any(text in written for written in texts if written)


def only_called(text: str, code: str) -> bool:
    """Whether ``text`` is the test file's own words only as (part of) the name of something it
    calls: it then shows a failure only as :func:`named_as_called`."""
    return written_by_test(text, code) and not written_by_test(text, code, calls=False)


# A builtin class's own construction never names its `__init__` or `__new__` (`object(1)`:
# `object() takes no arguments`): `object.__init__() takes exactly one argument` is another
# class's `super().__init__(x)`, `int.__new__(A)` a slot called by hand.
_BUILTIN_CLASSES = frozenset(name for name, v in vars(builtins).items() if isinstance(v, type))


def named_as_called(name: str, said: str) -> bool:
    """Whether the exception message ``said`` names ``name`` as a function or method that was
    called or looked up, as Python's own messages do (``cache_clear() missing 1 required
    positional argument``, ``Cache.clear() takes 1 positional argument``, ``has no attribute
    'clear'``, ``cannot import name 'clear'``), or a class as constructed (``Widget.__init__()
    got an unexpected keyword argument``, of a ``Widget(...)`` call; never a builtin class,
    ``object.__init__()`` of another class's ``super().__init__(x)``): not a word of other prose
    (``index`` of ``list index out of range``, ``main`` of ``no such domain``), nor a value's
    repr (``Side(size=2)`` of ``where False = fits(2, Side(size=2))``)."""
    n = re.escape(name)
    # `cache_clear()`: Python names a call without its arguments; `Side(size=2)` is a value's
    # repr (a dataclass's, a named tuple's) in any message, no call that failed.
    called = rf"(?<!\w){n}\(\)|(?:attribute|name) '{n}'"
    if name not in _BUILTIN_CLASSES:
        called += rf"|(?<![\w.]){n}\.__(?:init|new)__\("
    return re.search(called, said) is not None
