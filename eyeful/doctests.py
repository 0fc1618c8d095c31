"""A failing doctest's example, and whether the base's doctest holds it as the change's does.

A module whose doctests run is the code (eyeful/testside.py): the base runs its own docstrings.
A doctest that fails at an example the change wrote, or after examples it wrote or changed
before it (they set what it sees), is then no evidence of what the change's code does: the base
never ran that. The probe gives a doctest's failure in its own words (``Failed example:
SOURCE``, ``Expected: WANT``, then ``Got: ...`` or ``Got nothing``; an example that raised:
``(raised by the doctest example: SOURCE)``).
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

Example = tuple[str, str]
_RAISED = re.compile(r"\(raised by the doctest example: (?P<source>.*)\)\s*$", re.DOTALL)


def failing_example(chain: list[str]) -> tuple[str, str | None] | None:
    """The example a doctest failed at, from its failure's exception chain (the first link):
    its source, and what it expected (None for one that raised); None for another failure."""
    first = chain[0] if chain else ""
    _, found, rest = first.partition("Failed example: ")
    if found and "\nExpected: " in rest:
        source, _, said = rest.partition("\nExpected: ")
        # (the last "Got": what was expected may hold a line starting "Got" itself, or be
        # nothing at all: helper-72)
        before, got, _ = ("\n" + said).rpartition("\nGot: ")
        want = before[1:] if got else said.removesuffix("\nGot nothing")
        return source.strip(), want.strip()
    raised = _RAISED.search(first)
    return (raised["source"].strip(), None) if raised is not None else None


def examples_by_name(text: str, python: bool) -> dict[str, list[Example]]:
    """Each doctest's examples (source and expected output, stripped), in order, by the name
    doctest gives it below its module: "" for the module's docstring (or a text file's whole
    text), a function's or class's qualified name, `__test__.KEY` for the `__test__` dict's."""
    if not python:
        return {"": _examples(text)}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, list[Example]] = {"": _examples(ast.get_docstring(tree, clean=True) or "")}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                examples = _examples(ast.get_docstring(child, clean=True) or "")
                if examples or name not in found:  # (a property's setter: its getter's doc)
                    found[name] = examples
                visit(child, name + ".")
            elif not isinstance(child, ast.Lambda):
                visit(child, prefix)  # (one defined under `try:`, `if`: helper-70)

    visit(tree, "")
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and node.targets else None
        if isinstance(target, ast.Name) and target.id == "__test__":
            assert isinstance(node, ast.Assign)
            if isinstance(node.value, ast.Dict):
                for key, value in zip(node.value.keys, node.value.values, strict=True):
                    said = [n.value if isinstance(n, ast.Constant) else None for n in (key, value)]
                    if isinstance(said[0], str) and isinstance(said[1], str):
                        found[f"__test__.{said[0]}"] = _examples(said[1])
    return found


def _examples(doc: str) -> list[Example]:
    import doctest  # (only here: a review that meets no failing doctest never imports it)

    try:
        examples = doctest.DocTestParser().get_examples(doc)
    except ValueError:  # a malformed example: doctest itself refuses it
        return []
    return [(e.source.strip(), e.want.strip()) for e in examples]


def _of(found: dict[str, list[Example]], name: str, modules: list[str]) -> list[Example] | None:
    """The examples of the doctest ``name`` (``calc.add``: its module's dotted name, then the
    object's): what follows the module's dotted name, the longest of ``modules`` it starts
    with (`slug` names the module's docstring where the module holds a function `slug` too:
    helper-70; `textkit.textkit.shout`, a module named as its package: helper-71), else the
    longest qualified name of the file it ends with; the module's own."""
    for module in modules:
        if name == module or name.startswith(module + "."):
            return found.get(name[len(module) + 1 :])
    parts = name.split(".")
    for at in range(len(parts)):
        if ".".join(parts[at:]) in found:
            return found[".".join(parts[at:])]
    return found.get("") if parts else None


def written_by_change(
    name: str, chain: list[str], base_text: str | None, head_text: str | None, path: str
) -> str | None:
    """The source of the example the doctest ``name`` failed at where the base's doctest does
    not run the same examples up to it (the change wrote it, changed what it expects, or wrote
    or changed one before it); None where it does (the code's doing) or this is no doctest's
    failure."""
    failed = failing_example(chain)
    if failed is None:
        return None
    source, want = failed
    python = path.endswith(".py")
    file = PurePosixPath(path)
    dotted = [*file.parent.parts, *([] if file.name == "__init__.py" else [file.stem])]
    modules = [".".join(dotted[at:]) for at in range(len(dotted))]  # (the longest first)
    if not head_text:
        return None  # (no file found: nothing tells the change wrote it)
    if python:
        base = _of(examples_by_name(base_text, True), name, modules) if base_text else None
        head = _of(examples_by_name(head_text, True), name, modules)
    else:  # (a text file of doctests is one: its whole text)
        base = examples_by_name(base_text, False)[""] if base_text else None
        head = examples_by_name(head_text, False)[""]
    if head is None:
        # A name that is no def's (`area = property(_get_area)`: helper-72): any of the base
        # file's examples.
        held = [e for found in examples_by_name(base_text or "", python).values() for e in found]
        return None if any(s == source and want in (None, w) for s, w in held) else source
    first = chain[0] if chain else ""

    def failed_at(example: Example) -> bool:
        said, expected = example
        if said != source:
            return False
        # (the message's own words for this example's expectation: one holding "Got: " itself
        # is not read apart from what it got: helper-73)
        return (
            want is None
            or expected == want
            or f"Failed example: {said}\nExpected: {expected}\nGot" in first
        )

    matches = [i for i, example in enumerate(head) if failed_at(example)]
    if not matches:
        return source  # (not found as the change wrote it: not shown to be the code's)
    if base is None:
        return source  # (the base has no such doctest: all of it is the change's)
    # (an example the doctest holds twice: any of them may be the one it failed at: helper-71)
    return None if all(head[: i + 1] == base[: i + 1] for i in matches) else source
