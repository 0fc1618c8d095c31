"""What a mined case's reference finding claims its test fails with: a text the fix's test's
exception said on the reverted source (the probe's record) that the test file writes too, so the
reference can pass ``fails_as_claimed``; and whether the commit is a feature rather than a fix."""

from __future__ import annotations

import ast
import builtins
import keyword
import re

from eyeful.failures import Failure, own_words
from eyeful.gates import generic_fails_text
from eyeful.runs import Run
from eyeful.written import named_as_called, only_called, written_by_test, written_texts


def failures_of(run: Run, test: str) -> list[Failure]:
    """The recorded failures of the tests of ``test`` (a file) in ``run``, its collection error
    included, in id order."""
    return [
        failure
        for test_id, failure in sorted((run.failures or {}).items())
        if test_id == test or test_id.startswith((test + "::", test + "["))
    ]


_PREFIX = re.compile(r"[A-Za-z_][\w.]*: ")
_UNSTABLE = re.compile(r"0x[0-9a-fA-F]{6,}|/tmp/|\.eyeful|eyeful-|worktree", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
# Words pytest's assertion explanation and exception messages are made of, not the test's.
_PROSE = {
    "where", "assert", "with", "from", "cannot", "import", "name", "module", "object", "attribute",
    "argument", "arguments", "keyword", "unexpected", "got", "has", "have", "differing", "items",
    "item", "left", "right", "contains", "more", "first", "extra", "full", "diff", "omitting",
    "identical", "index", "called", "positional", "required", "missing", "given", "takes",
    "were", "was", "type", "types", "instance", "supported", "between", "instances",
}  # fmt: skip
# Builtins say nothing of the failure (list, len, str), but an exception type does (LookupError).
_BUILTIN = {
    name
    for name in dir(builtins)
    if not (
        isinstance(getattr(builtins, name), type)
        and issubclass(getattr(builtins, name), BaseException)
    )
} | set(keyword.kwlist)


def _within(text: str, said: str) -> bool:
    """``text`` in ``said``, not as part of a longer word (the literal 'func' is not in
    'functoolz')."""
    left = r"(?<!\w)" if re.match(r"\w", text) else ""
    right = r"(?!\w)" if re.search(r"\w$", text) else ""
    return re.search(left + re.escape(text) + right, said) is not None


def _literals(code: str) -> list[str]:
    """The test file's one-line string literals."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return [m[2] for m in re.finditer(r"([\"'])((?:(?!\1)[^\\\n])+)\1", code)]
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" not in node.value
    ]


def _usable(text: str, code: str, stem: str, words: list[str]) -> bool:
    return (
        "\n" not in text
        and text == text.strip()
        and not generic_fails_text(text)
        and written_by_test(text, code)
        and not _UNSTABLE.search(text)
        and (not stem or stem not in text)
        # the name of a call the test makes, only where the exception names it as called
        and (not only_called(text, code) or any(named_as_called(text, said) for said in words))
    )


def fails_text(failures: list[Failure], code: str, stem: str = "") -> str | None:
    """A ``fails`` text for the reference finding: something the recorded exception said
    (eyeful.failures.own_words: the chain's ``Type: message``, pytest's assertion explanation
    included) that the test file itself writes, so that it passes ``fails_as_claimed`` (a
    substring of an exception message in the chain, written by the test file). In order of
    preference: a whole line of a message the test file holds (the assert's message, an
    expected error text); the longest of the test file's string literals a message holds; an
    assertion's comparison with a literal (``== 6``: a plain ``assert f(x) == 6``, as pytest's
    explanation ``assert 7 == 6`` says it); the longest name both hold (a function an
    assertion calls, an exception type it uses; not a builtin like ``len``, nor the test's own
    name from a repr). None when the failures were not recorded (read from text) or share
    nothing the file writes (its syntax tree: eyeful/written.py, as the ``fails_as_claimed``
    gate reads it). ``stem``: the test module's name, never part of the text (the reproduction
    may run under another)."""
    words = [w for f in failures if f.source == "probe" for w in own_words(f)]
    if not words:
        return None
    lines = []
    for said in words:
        for number, line in enumerate(said.splitlines()):
            line = line.strip()
            lines.append(_PREFIX.sub("", line, count=1) if number == 0 else line)
    whole = [line for line in lines if len(line) >= 8 and _usable(line, code, stem, words)]
    if whole:
        return max(whole, key=len)
    literals = [
        text
        for text in _literals(code)
        if any(_within(text, said) for said in words) and _usable(text, code, stem, words)
    ]
    if literals:
        return max(literals, key=len)
    compared = [
        text
        for text in written_texts(code) or []
        if text.startswith(("=", "!", "<", ">", "in ", "not in ", "is "))
        and any(_within(text, said) for said in words)
        and _usable(text, code, stem, words)
    ]
    if compared:  # a plain `assert f(x) == 6`: pytest's explanation says `assert 7 == 6`
        return max(compared, key=len)
    names = {
        m[0]
        for said in words
        for m in _WORD.finditer(said)
        if m[0] not in _BUILTIN
        and m[0].casefold() not in _PROSE
        and not m[0].casefold().startswith("test")  # the test's own name, as a repr shows it
    }
    found = [
        name
        for name in names
        if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", code) and _usable(name, code, stem, words)
    ]
    return max(sorted(found), key=len) if found else None


_MISSING = re.compile(
    r"^(?:ImportError|ModuleNotFoundError): |^AttributeError: (?:module|type object) .* has no "
    r"attribute |^TypeError: .*got an unexpected keyword argument "
)


def feature_reason(failures: list[Failure]) -> str | None:
    """Why the fix looks like a feature: every recorded failure on the reverted source is a name
    the test uses that is missing there (it imports, looks up or passes what the commit added)."""
    if not failures or any(f.source != "probe" for f in failures):
        return None
    said = [f.chain[0] if f.chain else f.message for f in failures]
    if all(_MISSING.search(text) for text in said):
        first = one_line(said[0])[:160]
        return f"its test fails on the reverted source only for a name it uses missing ({first})"
    return None


def why_no_fails(run: Run, test: str, failures: list[Failure]) -> str:
    if not failures:
        how = run.read_from_text or f"the run read {run.tests_from or 'nothing'}"
        return f"{test}: no recorded failure of its tests ({one_line(how)})"
    if all(f.source != "probe" for f in failures):
        return f"{test}: its failures were read from {failures[0].source}, not recorded"
    first = failures[0].chain[0] if failures[0].chain else failures[0].message
    return f"{test}: the test file writes nothing its exception said ({one_line(first)[:120]})"


def written_text(tail: str, code: str) -> str | None:
    """The test file's own text for a finding no recorded failure can show: a line pytest
    marks with `>` in the failing run, else the file's first assert."""
    for line in tail.splitlines():
        if line.startswith(">"):
            text = line[1:].strip()
            if len(text) >= 8 and text in code:
                return text
    asserts = [line.strip() for line in code.splitlines() if line.strip().startswith("assert ")]
    return asserts[0] if asserts else None


_ABSOLUTE = re.compile(r" ?\((?:/|[A-Za-z]:\\)[^)]*\)|(?<![\w.])/(?:[^\s/'\")]+/)+")


def one_line(text: str) -> str:
    """One line, without the machine's absolute paths (a case file names none)."""
    return " ".join(_ABSOLUTE.sub("", text).split())
