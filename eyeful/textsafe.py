"""Text from a repository or an agent, made safe to show on a terminal.

A control character (an ANSI escape, a carriage return), a bidirectional override or a
zero-width character can make a terminal show something other than what is there: a confirmation
prompt showing a harmless command while another one runs. Configuration values may not contain
them (tab excepted); whatever eyeful shows is shown with them escaped.
"""

from __future__ import annotations

import re
import unicodedata

# Cc: C0/C1 controls and DEL; Cf: format characters (bidi overrides, zero-width joiners);
# Zl/Zp: line and paragraph separators; Cs: lone surrogates.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def _hidden(char: str) -> bool:
    return char != "\t" and unicodedata.category(char) in _HIDDEN_CATEGORIES


# A control sequence (CSI): colours and cursor moves a runner writes for a terminal.
_CSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def uncoloured(text: str) -> str:
    """``text`` without the control sequences a terminal takes for colours or cursor moves
    (pytest's `--color=yes` puts them in its assertion explanations, in the exception's own
    message): the words a terminal shows, not markup. Any other hidden character stays, to be
    escaped where shown."""
    return _CSI.sub("", text) if "\x1b" in text else text


def first_hidden(text: str) -> str | None:
    """The first character of ``text`` a terminal would not show as itself (tab excepted)."""
    return next((char for char in text if _hidden(char)), None)


def escape_char(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every hidden character (and tab, and newline unless kept) escaped."""
    out = []
    for char in text:
        if char == "\n" and keep_newlines:
            out.append(char)
        elif char == "\t" or _hidden(char):
            out.append(escape_char(char))
        else:
            out.append(char)
    return "".join(out)


def json_text(text: str) -> str:
    """JSON text with every hidden character JSON-escaped (``\\u202e``): the same values to a
    JSON reader, but a bidirectional override or an escape sequence from a finding, an agent or
    a test cannot reorder or hide what a terminal, an editor or a diff of the file shows. Only
    strings can hold such characters, so the result is valid JSON whenever ``text`` is."""
    out = []
    for char in text:
        if char in "\n\t" or not _hidden(char):
            out.append(char)
            continue
        code = ord(char)
        if code >= 0x10000:  # as a UTF-16 surrogate pair, as JSON writes it
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)
