"""The transport to an LLM agent: one prompt in, one answer out. Nothing about prompts or roles.

Two providers, chosen by ``[tool.eyeful.agent] provider``:

``command`` (:class:`~eyeful.agents.command.CommandProvider`)
    A shell command in the directory the caller gives (an export of the change,
    eyeful/agents/export.py: never the user's tree nor a worktree sharing its git directory), with
    the environment eyeful/agents/env.py allows: the prompt on stdin, the answer on stdout,
    stderr kept (bounded)
    for the error message. It runs in its own process group with a per-call timeout and a
    no-output timeout, and the whole group is killed on either, on Ctrl-C, and after the command
    exits (no orphans). ``preset`` names a known CLI: how it is called with a read-only posture,
    where its answer is in its output, which of its stream events are kept, its input limit (see
    ``PRESETS`` in eyeful/agents/presets.py). When ``command`` is set too, it replaces the
    preset's command line *as is* (no ``--model``, posture flag or ``--format json`` is added to
    it) but the preset's output parsing and input limit still apply, so ``preset = "claude"`` plus
    ``command = "/opt/bin/claude -p --output-format json"`` works.

``openai`` (:class:`~eyeful.agents.openai_provider.OpenAIProvider`)
    Chat completions against ``base_url`` (OpenAI, or any compatible server: Ollama, llama.cpp,
    vLLM, LM Studio) through the official ``openai`` package, an optional dependency.

Every failure to get a usable answer is a :class:`ProviderError` with a one-line message. This
module holds what every provider shares: the :class:`Provider` protocol, what a call returns
and eyeful/agents/transport.py builds the one a configuration names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

_MESSAGE_CHARS = 300  # of a reason quoted in a one-line error


class Usage(BaseModel):
    """Tokens (and money) one call used; None when the provider reports none."""

    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None


@dataclass
class Completion:
    text: str
    usage: Usage
    seconds: float
    notes: list[str] = field(default_factory=list)
    """What the checklist should say about the call (e.g. tools the CLI refused)."""


class ProviderError(Exception):
    """A call that produced no usable answer: crash (non-zero exit), timeout, no-output timeout,
    HTTP error after retries, unreadable output. The message is one line saying which."""


class Provider(Protocol):
    name: str

    def prompt_fits(self, prompt: str) -> str | None:
        """None when ``prompt`` is within the provider's input limit, else that limit in words."""
        ...

    def complete(self, prompt: str, *, cwd: Path, want_json: bool = True) -> Completion: ...


def one_line(text: str, limit: int = _MESSAGE_CHARS) -> str:
    """``text`` as one line of at most ``limit`` characters, for an error message."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def last_line(text: str) -> str:
    """The last line of ``text`` that is not blank, as :func:`one_line`."""
    lines = [line for line in text.splitlines() if line.strip()]
    return one_line(lines[-1]) if lines else ""


def as_int(value: object) -> int | None:
    """``value`` when it is an integer (not a bool), else None: a count a provider reported."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
