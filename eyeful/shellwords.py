"""A shell command line's simple commands, each as its words: what a setup command names
(eyeful/runs.py) and which files a test command runs (eyeful/testside.py) are read from them."""

from __future__ import annotations

import shlex
from collections.abc import Iterator

SEPARATORS = frozenset({";", "&&", "||", "|", "&", ";;", "(", ")"})


def simple_commands(text: str, *, parentheses: bool = False) -> Iterator[list[str]]:
    """``text``'s commands, each as its words: lines (a trailing backslash joins the next), and
    within one, what `;`, `&&`, `|` and the like separate; a quoted argument that holds a
    command (`sh -c 'pip install ...'`) is one of its own. ``parentheses``: a subshell's `(` and
    `)` separate too (else they join a word: a script's `open('data/x.txt')` names no file)."""
    for line in text.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()" if parentheses else ";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:
            tokens = line.split()
        command: list[str] = []
        for token in tokens:
            if token in SEPARATORS:
                yield command
                command = []
            elif command and " " in token.strip():
                yield from simple_commands(token, parentheses=parentheses)  # (`-c '...'`)
            else:
                command.append(token)
        yield command
