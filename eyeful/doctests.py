"""A failing doctest's example, and whether the base's file holds it.

A module whose doctests run is the code (eyeful/testside.py): the base runs its own docstrings.
An example the change wrote into a docstring that fails on the change is then no evidence of what
the change's code does: the base never ran it (its code may fail it too). The probe gives a
doctest's failure in its own words (``Failed example: SOURCE``, ``Expected: WANT``; an example that
raised: ``(raised by the doctest example: SOURCE)``).
"""

from __future__ import annotations

import ast
import re

_FAILED = re.compile(
    r"Failed example: (?P<source>.*?)\nExpected: (?P<want>.*?)\nGot[: ]", re.DOTALL
)
_RAISED = re.compile(r"\(raised by the doctest example: (?P<source>.*)\)\s*$", re.DOTALL)


def failing_example(chain: list[str]) -> tuple[str, str | None] | None:
    """The example a doctest failed at, from its failure's exception chain (the first link):
    its source, and what it expected (None for one that raised); None for another failure."""
    first = chain[0] if chain else ""
    found = _FAILED.search(first)
    if found is not None:
        return found["source"].strip(), found["want"].strip()
    raised = _RAISED.search(first)
    return (raised["source"].strip(), None) if raised is not None else None


def examples_in(text: str, python: bool) -> set[tuple[str, str]]:
    """Every example a file's doctests hold (source and expected output, stripped): of each
    docstring of a Python file, or of the whole text of another (`--doctest-glob`)."""
    if python:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return set()
        docs = [
            ast.get_docstring(node, clean=True) or ""
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        ]
    else:
        docs = [text]
    import doctest  # (only here: a review that meets no failing doctest never imports it)

    parser = doctest.DocTestParser()
    found: set[tuple[str, str]] = set()
    for doc in docs:
        try:
            examples = parser.get_examples(doc)
        except ValueError:  # a malformed example: doctest itself refuses it
            continue
        found.update((e.source.strip(), e.want.strip()) for e in examples)
    return found


def written_by_change(chain: list[str], base_text: str | None, python: bool) -> str | None:
    """The source of the example a doctest failed at, where the base's file (``base_text``)
    holds no such example (with its expected output): the change wrote it; else None."""
    failed = failing_example(chain)
    if failed is None:
        return None
    source, want = failed
    held = examples_in(base_text, python) if base_text is not None else set()
    if any(s == source and (want is None or w == want) for s, w in held):
        return None
    return source
