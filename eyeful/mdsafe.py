"""Text from findings, agents and test output, put into markdown (and SARIF) without structure.

A finding's title, body, quote or a test's name or output is data: it may not open a heading, a
list item at the top level, a ``<details>`` (or close one), a link reference, or close the code
fence it is shown in, and no control character in it reaches the terminal. Each helper is for one
place in the feedback:

- :func:`line`: text inside a line (a title, a quote, a reason): made one line, raw HTML escaped;
- :func:`code`: a code span (a test id, a path), its backtick fence longer than any run inside;
- :func:`block`: prose on the lines under a list item: every line indented, and whatever could
  start a block (``#``, ``-``, ``>``, ``1.``, a fence, ``<``, ...) escaped;
- :func:`fence`: output or code in a fenced block longer than any backtick run inside;
- :func:`sarif_text`: a SARIF plain-text message (§3.11.5 braces doubled, §3.11.6 brackets
  escaped), hidden characters escaped.
"""

from __future__ import annotations

import re

from eyeful.textsafe import visible

# `<` followed by what could make it an HTML tag, comment, declaration or autolink.
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
# The start of a line that CommonMark could read as the start of a block.
# A single backtick starts an inline code span, not a block: only a run of three opens a fence.
_BLOCK_START = re.compile(r"^(\s*)(`{3,}|~{3,}|[#>+*=_|\[<-]|\d+[.)])")
_BACKTICKS = re.compile(r"`+")


def _no_html(text: str) -> str:
    return _TAG_START.sub(r"\\<", text)


def line(text: str) -> str:
    """``text`` as part of one line: whitespace runs (newlines too) become one space."""
    return _no_html(visible(" ".join(text.split())))


def code(text: str) -> str:
    """``text`` as an inline code span that nothing inside can end early."""
    flat = visible(" ".join(text.split()))
    longest = max((len(run) for run in _BACKTICKS.findall(flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def _escape_start(text: str) -> str:
    match = _BLOCK_START.match(text)
    if match is None:
        return text
    indent, marker = match.groups()
    if marker[0].isdigit():  # `1.` / `1)`: escape the punctuation
        return f"{indent}{marker[:-1]}\\{marker[-1]}{text[match.end() :]}"
    return f"{indent}\\{text[len(indent) :]}"


def block(text: str, indent: str = "  ") -> list[str]:
    """Prose lines for under a list item: indented, and none of them can start a block."""
    out = []
    for raw in visible(text.strip(), keep_newlines=True).splitlines():
        if not raw.strip():
            out.append("")
            continue
        out.append(indent + _escape_start(_no_html(raw.rstrip())))
    return out


def fence(text: str, lang: str = "text", indent: str = "  ") -> list[str]:
    """``text`` verbatim in a fenced block whose fence no line of it can close."""
    body = visible(text.rstrip(), keep_newlines=True)
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    mark = "`" * max(3, longest + 1)
    lines = [f"{indent}{row}" if row else "" for row in body.splitlines()]
    return [f"{indent}{mark}{lang}", *lines, f"{indent}{mark}"]


def sarif_text(text: str) -> str:
    """A SARIF plain-text message: no placeholder, no embedded link, nothing hidden."""
    shown = visible(text, keep_newlines=True)
    shown = shown.replace("{", "{{").replace("}", "}}")
    return re.sub(r"([\[\]])", r"\\\1", shown)
