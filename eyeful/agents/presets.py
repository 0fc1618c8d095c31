"""The preset CLIs of the command provider (``[tool.eyeful.agent] preset``).

For each: how it is called with a read-only posture, where its answer is in its output, which of
its stream events are kept in memory, its input limit (``PRESETS``). A parser returns the answer,
its usage and notes for the checklist, or raises :class:`Unreadable`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from eyeful.agents.providers import Usage, as_int, one_line
from eyeful.records import json_object

Parsed = tuple[str, Usage, list[str]]  # the answer, its usage, notes for the checklist


class Unreadable(Exception):
    """The command's output has no answer in the expected format (message: why, one line)."""


def _json_values(text: str) -> list[Any]:
    """The output as JSON values: one document (an array counts as its items), or JSON lines.

    Lines that are not JSON (a wrapper's banner, a warning) are skipped.
    """
    stripped = text.strip()
    try:
        whole = json.loads(stripped)
    except (ValueError, RecursionError):
        pass
    else:
        return whole if isinstance(whole, list) else [whole]
    values = []
    for line in stripped.splitlines():
        with contextlib.suppress(ValueError, RecursionError):
            values.append(json.loads(line))
    if not values:
        raise Unreadable("output is not JSON")
    return values


def _float(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _sum(values: list[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _claude_failure(final: dict[str, Any]) -> str:
    """Why a claude result is an error: its subtype and its ``errors[]``, else its result."""
    subtype = final.get("subtype")
    errors = final.get("errors")
    words = [str(e) for e in errors if str(e).strip()] if isinstance(errors, list) else []
    if not words and isinstance(final.get("result"), str) and final["result"].strip():
        words = [final["result"]]
    detail = "; ".join(words)
    if isinstance(subtype, str) and subtype.startswith("error"):
        return f"{subtype}: {detail}" if detail else subtype
    return detail or (str(subtype) if subtype else "no detail")


def _claude_denials(final: dict[str, Any]) -> list[str]:
    """The tools claude refused during the call (``permission_denials``), one line."""
    denials = final.get("permission_denials")
    if not isinstance(denials, list) or not denials:
        return []
    names = sorted(
        {str(d.get("tool_name") or "a tool") if isinstance(d, dict) else "a tool" for d in denials}
    )
    tools = ", ".join(names)
    return [f"claude was refused {len(denials)} tool use(s) ({tools}): it runs read-only"]


def _parse_claude(text: str) -> Parsed:
    """``claude -p --output-format stream-json`` (JSON lines) or ``json`` (one object).

    The answer is the ``result`` of the last ``result`` event. An error result (``is_error``, or a
    subtype ``error_max_turns``, ``error_during_execution``, ``error_max_budget_usd``) is reported
    with its subtype and ``errors[]``. Tokens in = input + cache creation + cache read tokens,
    tokens out = output tokens; ``total_cost_usd`` is the cost; ``permission_denials`` become
    notes.
    """
    events = [e for e in _json_values(text) if isinstance(e, dict)]
    results = [e for e in events if e.get("type") == "result"] or [
        e for e in events if "result" in e
    ]
    if not results:
        raise Unreadable("no result in its output")
    final = results[-1]
    subtype = final.get("subtype")
    if final.get("is_error") or (isinstance(subtype, str) and subtype.startswith("error")):
        raise Unreadable(f"reported an error: {one_line(_claude_failure(final))}")
    answer = final.get("result")
    if not isinstance(answer, str):
        raise Unreadable("its result is not text")
    usage = final.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    tokens_in = _sum(
        [
            as_int(usage.get(key))
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ]
    )
    return (
        answer,
        Usage(
            tokens_in=tokens_in,
            tokens_out=as_int(usage.get("output_tokens")),
            cost_usd=_float(final.get("total_cost_usd")),
        ),
        _claude_denials(final),
    )


def _parse_codex(text: str) -> Parsed:
    """``codex exec --json``: JSON lines; the answer is the text of the last ``agent_message``
    item (or of an older release's ``msg`` event of type ``agent_message``). Usage is that of the
    last ``turn.completed`` event: codex reports the thread's running total there, so summing
    the events would count earlier turns twice."""
    answer: str | None = None
    failure: str | None = None
    usage: dict[str, Any] = {}
    for event in _json_values(text):
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        item = event.get("item")
        legacy = event.get("msg")
        if kind == "item.completed" and isinstance(item, dict):
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                answer = item["text"]
        elif isinstance(legacy, dict) and legacy.get("type") == "agent_message":
            if isinstance(legacy.get("message"), str):
                answer = legacy["message"]
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            usage = event["usage"]
        elif kind == "turn.failed" and isinstance(event.get("error"), dict):
            failure = str(event["error"].get("message") or "turn failed")
        elif kind == "error":
            failure = str(event.get("message") or "error")
    if answer is None:
        if failure:
            raise Unreadable(f"reported an error: {one_line(failure)}")
        raise Unreadable("no agent_message in its output")
    tokens_in, tokens_out = as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens"))
    return answer, Usage(tokens_in=tokens_in, tokens_out=tokens_out), []


def parse_text(text: str) -> Parsed:
    """All of stdout is the answer; no usage reported."""
    return text, Usage(), []


# CSI (colours, cursor moves, ?25l), OSC (titles), other two-byte escapes; braille spinner frames.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\u2800-\u28ff]"
)

# What a thinking model prints before its answer: ollama's "Thinking... / ...done thinking."
# block, a <think>…</think> block, or (templates that lose the opening tag) text up to </think>.
THINKING = re.compile(
    r"\A\s*(?:Thinking\.\.\..*?\.\.\.done thinking\."
    r"|<think>.*?</think>|(?:(?!<think>).)*?</think>)",
    re.DOTALL,
)


def strip_thinking(text: str) -> str:
    """``text`` without a thinking block at its start."""
    return THINKING.sub("", text, count=1)


def _parse_ollama(text: str) -> Parsed:
    """``ollama run``: all of stdout without the terminal escape codes, spinner frames and a
    thinking block (``--hidethinking`` hides it; older releases and some templates still print
    it)."""
    return strip_thinking(_ANSI.sub("", text).replace("\r", "")), Usage(), []


def keep_event(line: bytes, drop: frozenset[str]) -> bool:
    """Whether a line of a JSON-lines stream is kept: one whose ``type`` is in ``drop`` is not.

    Claude's stream-json with ``--verbose`` echoes every tool result (whole files); the parser
    needs only the ``result`` event, so the echoes are dropped as they arrive and a long review
    stays far below the command provider's ``MAX_REPLY_BYTES``.
    """
    if not line.lstrip().startswith(b"{"):
        return True
    event = json_object(line)
    if event is None:
        return True
    kind = event.get("type")
    if kind == "item.completed" and "item.completed" in drop:  # codex: keep the messages
        item = event.get("item")
        return isinstance(item, dict) and item.get("type") == "agent_message"
    return not (isinstance(kind, str) and kind in drop)


# Claude Code caps piped stdin at 10 MB (v2.1.128); newer codex rejects text input over
# 1,048,576 characters (MAX_USER_INPUT_TEXT_CHARS).
CLAUDE_STDIN_BYTES = 10_000_000
CODEX_INPUT_CHARS = 1_048_576


def _claude_fits(prompt: str) -> str | None:
    if len(prompt.encode("utf-8")) <= CLAUDE_STDIN_BYTES:
        return None
    return "claude's 10 MB stdin limit"


def _codex_fits(prompt: str) -> str | None:
    if len(prompt) <= CODEX_INPUT_CHARS:
        return None
    return f"codex's limit of {CODEX_INPUT_CHARS:,} characters"


def no_limit(prompt: str) -> str | None:
    """Any prompt fits (a CLI with no known input limit)."""
    return None


@dataclass(frozen=True)
class Preset:
    base: str
    model_flag: str | None  # how the model is passed, None: the model is a positional argument
    tail: str = ""  # after the model flag (codex's "-" = prompt from stdin)
    json_flag: str = ""  # added for want_json
    parse: Callable[[str], Parsed] = parse_text
    needs_model: bool = False
    drop: frozenset[str] = frozenset()  # stream event types not kept in memory
    fits: Callable[[str], str | None] = no_limit


# The posture flags (README "What an agent can do"): each CLI reads, and nothing else.
CLAUDE_POSTURE = (
    "--permission-mode dontAsk --tools Read,Grep,Glob --setting-sources user "
    "--strict-mcp-config --no-session-persistence"
)
CODEX_POSTURE = "--sandbox read-only --ephemeral"

PRESETS: dict[str, Preset] = {
    # stream-json rather than json: the plain json format prints nothing until the end, so a
    # long review would trip the no-output timeout; stream-json prints an event per step.
    "claude": Preset(
        f"claude -p --output-format stream-json --verbose {CLAUDE_POSTURE}",
        "--model",
        parse=_parse_claude,
        drop=frozenset({"assistant", "user", "stream_event"}),
        fits=_claude_fits,
    ),
    "codex": Preset(
        f"codex exec --json --skip-git-repo-check {CODEX_POSTURE}",
        "-m",
        "-",
        parse=_parse_codex,
        drop=frozenset({"item.started", "item.updated", "item.completed"}),
        fits=_codex_fits,
    ),
    "llm": Preset("llm -n", "-m"),  # -n: not logged to the user's logs.db
    # No tools: never the experimental agent loop; thinking hidden (ollama 0.9.0 and later).
    "ollama": Preset(
        "ollama run",
        None,
        tail="--hidethinking",
        json_flag="--format json",
        parse=_parse_ollama,
        needs_model=True,
    ),
}
