"""Go source without its comments: what a change of comments and layout alone leaves alike.

A Go file's tokens, line by line (Go ends a statement at a line's end), its comments taken out
and the space between tokens made one; strings, runes and raw strings kept as written (a raw
string's line breaks too). What the go tool reads in a comment is code: a directive
(`//go:generate`, `//go:linkname`...), cgo's `//export`, `//line`; a file that uses cgo (`"C"`,
whose preamble is a comment of C code), has build constraints or embeds files is never read so
(None).
"""

from __future__ import annotations

_GAP = "\0"  # (no Go source holds it)
_LINE = "\x01"  # a line break inside a raw string (its blank lines are its value: helper-70)
_DIRECTIVES = ("//go:", "//export ", "//line ", "//extern ")
# A file whose comments the go tool may read for more than a directive's line: cgo's preamble
# (`import "C"`, grouped too), build constraints (`// +build` wants a blank line after it, and
# `//+build` is one too), embedded files.
_NOT_TOLD = ('"C"', "+build", "//go:build", "//go:embed")


def without_comments(source: bytes) -> list[str] | None:
    """``source``'s code lines without comments (None: not told apart: cgo, an embed, not
    UTF-8, an unterminated literal)."""
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if any(sign in text for sign in _NOT_TOLD) or _GAP in text or _LINE in text:
        return None
    out: list[str] = []
    at, n = 0, len(text)
    while at < n:
        char = text[at]
        if text.startswith("//", at):
            end = text.find("\n", at)
            end = n if end < 0 else end
            if text.startswith(_DIRECTIVES, at):
                out.append(text[at:end])  # read by the go tool: code
            at = end
        elif text.startswith("/*", at):
            end = text.find("*/", at + 2)
            if end < 0:
                return None
            out.append("\n" if "\n" in text[at:end] else _GAP)  # (Go reads it as a newline)
            at = end + 2
        elif char in "\"'`":
            closed = _literal_end(text, at)
            if closed is None:
                return None
            out.append(text[at:closed].replace("\n", _LINE))
            at = closed
        elif char in " \t\r":
            out.append(_GAP)  # (a gap between tokens; a literal's own spaces stay as they are)
            at += 1
        else:
            out.append(char)
            at += 1
    lines = ("".join(out)).split("\n")
    return [gaps for line in lines if (gaps := _one_gap(line))]


def _one_gap(line: str) -> str:
    """A line's gaps between tokens made one space, none at its ends."""
    parts = [part for part in line.split(_GAP) if part]
    return " ".join(parts)


def _literal_end(text: str, start: int) -> int | None:
    """Where the string, rune or raw string at ``start`` ends (past its closing quote)."""
    quote = text[start]
    at = start + 1
    while at < len(text):
        char = text[at]
        if char == "\\" and quote != "`":
            at += 2
            continue
        if char == quote:
            return at + 1
        if char == "\n" and quote != "`":
            return None
        at += 1
    return None
