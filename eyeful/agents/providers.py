"""The transport to an LLM agent: one prompt in, one answer out. Nothing about prompts or roles.

Two providers, chosen by ``[tool.eyeful.agent] provider``:

``command`` (:class:`CommandProvider`)
    A shell command in the directory the caller gives (an export of the change,
    eyeful/agents/export.py: never the user's tree nor a worktree sharing its git directory), with
    the environment eyeful/agents/env.py allows: the prompt on stdin, the answer on stdout,
    stderr kept (bounded)
    for the error message. It runs in its own process group with a per-call timeout and a
    no-output timeout, and the whole group is killed on either, on Ctrl-C, and after the command
    exits (no orphans). ``preset`` names a known CLI: how it is called with a read-only posture,
    where its answer is in its output, which of its stream events are kept, its input limit (see
    ``_PRESETS``). When ``command`` is set too, it replaces the preset's command line *as is* (no
    ``--model``, posture flag or ``--format json`` is added to it) but the preset's output parsing
    and input limit still apply, so ``preset = "claude"`` plus
    ``command = "/opt/bin/claude -p --output-format json"`` works.

``openai`` (:class:`OpenAIProvider`)
    Chat completions against ``base_url`` (OpenAI, or any compatible server: Ollama, llama.cpp,
    vLLM, LM Studio) through the official ``openai`` package, an optional dependency.

Every failure to get a usable answer is a :class:`ProviderError` with a one-line message.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from pydantic import BaseModel

from eyeful.agents.env import agent_env
from eyeful.config import AgentConfig
from eyeful.errors import EyefulError
from eyeful.shell import (
    check_cancelled,
    is_cancelled,
    kill_group,
    stop_group,
    track,
    untrack,
)

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

MAX_REPLY_BYTES = 8 * 1024 * 1024  # an agent's stdout beyond this is not an answer
_STDERR_TAIL = 16 * 1024
_CHUNK = 65536
_TICK = 0.1  # seconds between checks of the timeouts
_EXIT_GRACE = 1.0  # seconds to drain output after the command exits
_MESSAGE_CHARS = 300  # of a reason quoted in a one-line error
OPENAI_MAX_RETRIES = 3


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


def make_provider(config: AgentConfig) -> Provider:
    """The provider ``config`` describes; EyefulError when it cannot be built."""
    if config.provider == "openai":
        return OpenAIProvider(config)
    return CommandProvider(config)


def _one_line(text: str, limit: int = _MESSAGE_CHARS) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return _one_line(lines[-1]) if lines else ""


# --- output formats of the presets ------------------------------------------------------------

Parsed = tuple[str, Usage, list[str]]  # the answer, its usage, notes for the checklist


class _Unreadable(Exception):
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
        raise _Unreadable("output is not JSON")
    return values


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
        raise _Unreadable("no result in its output")
    final = results[-1]
    subtype = final.get("subtype")
    if final.get("is_error") or (isinstance(subtype, str) and subtype.startswith("error")):
        raise _Unreadable(f"reported an error: {_one_line(_claude_failure(final))}")
    answer = final.get("result")
    if not isinstance(answer, str):
        raise _Unreadable("its result is not text")
    usage = final.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    tokens_in = _sum(
        [
            _int(usage.get(key))
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ]
    )
    return (
        answer,
        Usage(
            tokens_in=tokens_in,
            tokens_out=_int(usage.get("output_tokens")),
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
            raise _Unreadable(f"reported an error: {_one_line(failure)}")
        raise _Unreadable("no agent_message in its output")
    tokens_in, tokens_out = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
    return answer, Usage(tokens_in=tokens_in, tokens_out=tokens_out), []


def _parse_text(text: str) -> Parsed:
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


def _keep_event(line: bytes, drop: frozenset[str]) -> bool:
    """Whether a line of a JSON-lines stream is kept: one whose ``type`` is in ``drop`` is not.

    Claude's stream-json with ``--verbose`` echoes every tool result (whole files); the parser
    needs only the ``result`` event, so the echoes are dropped as they arrive and a long review
    stays far below ``MAX_REPLY_BYTES``.
    """
    if not line.lstrip().startswith(b"{"):
        return True
    try:
        event = json.loads(line)
    except ValueError:
        return True
    if not isinstance(event, dict):
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


def _fits(prompt: str) -> str | None:
    return None


@dataclass(frozen=True)
class _Preset:
    base: str
    model_flag: str | None  # how the model is passed, None: the model is a positional argument
    tail: str = ""  # after the model flag (codex's "-" = prompt from stdin)
    json_flag: str = ""  # added for want_json
    parse: Callable[[str], Parsed] = _parse_text
    needs_model: bool = False
    drop: frozenset[str] = frozenset()  # stream event types not kept in memory
    fits: Callable[[str], str | None] = _fits


# The posture flags (README "What an agent can do"): each CLI reads, and nothing else.
CLAUDE_POSTURE = (
    "--permission-mode dontAsk --tools Read,Grep,Glob --setting-sources user "
    "--strict-mcp-config --no-session-persistence"
)
CODEX_POSTURE = "--sandbox read-only --ephemeral"

_PRESETS: dict[str, _Preset] = {
    # stream-json rather than json: the plain json format prints nothing until the end, so a
    # long review would trip the no-output timeout; stream-json prints an event per step.
    "claude": _Preset(
        f"claude -p --output-format stream-json --verbose {CLAUDE_POSTURE}",
        "--model",
        parse=_parse_claude,
        drop=frozenset({"assistant", "user", "stream_event"}),
        fits=_claude_fits,
    ),
    "codex": _Preset(
        f"codex exec --json --skip-git-repo-check {CODEX_POSTURE}",
        "-m",
        "-",
        parse=_parse_codex,
        drop=frozenset({"item.started", "item.updated", "item.completed"}),
        fits=_codex_fits,
    ),
    "llm": _Preset("llm -n", "-m"),  # -n: not logged to the user's logs.db
    # No tools: never the experimental agent loop; thinking hidden (ollama 0.9.0 and later).
    "ollama": _Preset(
        "ollama run",
        None,
        tail="--hidethinking",
        json_flag="--format json",
        parse=_parse_ollama,
        needs_model=True,
    ),
}


# --- the command provider ---------------------------------------------------------------------


@dataclass
class _Outcome:
    code: int | None
    stdout: bytes
    stderr: str
    failure: str | None  # timed out, no output, reply too large


class CommandProvider:
    """A shell command (or a preset CLI): prompt on stdin, answer on stdout."""

    def __init__(self, config: AgentConfig) -> None:
        preset = _PRESETS[config.preset] if config.preset else None
        self.name: str = config.preset or "command"
        self.timeout = config.timeout
        self.idle_timeout = config.idle_timeout
        self._parse = preset.parse if preset else _parse_text
        self._drop = preset.drop if preset else frozenset()
        self._fits = preset.fits if preset else _fits
        self._env = agent_env(config)
        self._json_flag = ""
        if config.command:
            self.command = config.command
        elif preset is not None:
            if preset.needs_model and not config.model:
                raise EyefulError(
                    f'agent.preset = "{config.preset}" needs agent.model '
                    '(e.g. model = "qwen2.5-coder")'
                )
            parts = [preset.base]
            if config.model:
                quoted = shlex.quote(config.model)
                parts.append(f"{preset.model_flag} {quoted}" if preset.model_flag else quoted)
            if preset.tail:
                parts.append(preset.tail)
            self.command = " ".join(parts)
            self._json_flag = preset.json_flag
        else:  # AgentConfig refuses this; kept for callers that build one by hand
            raise EyefulError("the command provider needs agent.command or agent.preset")

    def prompt_fits(self, prompt: str) -> str | None:
        return self._fits(prompt)

    def command_line(self, *, want_json: bool = True) -> str:
        """The shell command one call runs."""
        if want_json and self._json_flag:
            return f"{self.command} {self._json_flag}"
        return self.command

    def complete(self, prompt: str, *, cwd: Path, want_json: bool = True) -> Completion:
        started = time.monotonic()
        outcome = self._run(self.command_line(want_json=want_json), prompt, cwd)
        seconds = time.monotonic() - started
        if outcome.failure:
            raise ProviderError(f"{self.name}: {outcome.failure}")
        text = outcome.stdout.decode("utf-8", errors="replace")
        code = outcome.code
        if code:
            raise ProviderError(f"{self.name}: {self._exit_reason(code, outcome.stderr, text)}")
        try:
            answer, usage, notes = self._parse(text)
        except _Unreadable as err:
            raise ProviderError(f"{self.name}: {err}") from None
        if not answer.strip():
            raise ProviderError(f"{self.name}: empty reply")
        return Completion(text=answer, usage=usage, seconds=seconds, notes=notes)

    def _exit_reason(self, code: int, stderr: str, stdout: str) -> str:
        if code < 0:
            reason = f"killed by {signal.Signals(-code).name}"
        elif code in (126, 127):
            reason = f"could not start (exit {code}: command not found or not executable)"
        else:
            reason = f"exited with code {code}"
        detail = _last_line(stderr)
        if not detail:  # e.g. claude's error result: the preset's parser says it best
            try:
                self._parse(stdout)
            except _Unreadable as err:
                detail = "" if "JSON" in str(err) else str(err)
            detail = detail or _last_line(stdout)
        return f"{reason}: {detail}" if detail else reason

    def _kept(self, partial: bytearray, data: bytes) -> bytes:
        """The complete lines of ``data`` (after ``partial``) that the parser needs."""
        if not self._drop:
            return data
        partial += data
        cut = partial.rfind(b"\n") + 1
        if not cut:
            if len(partial) > MAX_REPLY_BYTES:  # one endless line: let the size check see it
                kept = bytes(partial)
                partial.clear()
                return kept
            return b""
        lines = bytes(partial[:cut]).splitlines(keepends=True)
        del partial[:cut]
        return b"".join(line for line in lines if _keep_event(line, self._drop))

    def _run(self, command: str, prompt: str, cwd: Path) -> _Outcome:
        """Run ``command`` in its own process group; the group is gone when this returns."""
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                ["/bin/sh", "-c", command],
                cwd=cwd,
                env=self._env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as err:
            raise ProviderError(f"{self.name}: could not start: {err.strerror}") from None
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        stdout = bytearray()
        partial = bytearray()  # an incomplete last line, while events are filtered
        stderr = bytearray()
        pending = memoryview(prompt.encode("utf-8"))
        failure: str | None = None
        last_output = started
        exited_at: float | None = None
        selector = selectors.DefaultSelector()
        try:
            stdin_fd = proc.stdin.fileno()
            os.set_blocking(stdin_fd, False)
            if pending:
                selector.register(stdin_fd, selectors.EVENT_WRITE, "in")
            else:
                proc.stdin.close()
            selector.register(proc.stdout.fileno(), selectors.EVENT_READ, "out")
            selector.register(proc.stderr.fileno(), selectors.EVENT_READ, "err")
            readers = 2
            track(proc.pid)
            while failure is None:
                now = time.monotonic()
                if is_cancelled():
                    break
                if now - started >= self.timeout:
                    failure = f"timed out after {self.timeout:g}s"
                    break
                if now - last_output >= self.idle_timeout:
                    failure = f"no output for {self.idle_timeout:g}s (idle timeout)"
                    break
                if readers == 0:  # both pipes closed: wait for the exit
                    if proc.poll() is not None:
                        break
                    time.sleep(0.05)
                    continue
                wait = min(
                    _TICK, self.timeout - (now - started), self.idle_timeout - (now - last_output)
                )
                for key, _ in selector.select(timeout=max(wait, 0.0)):
                    if key.data == "in":
                        try:
                            written = os.write(stdin_fd, pending[:_CHUNK])
                        except BlockingIOError:
                            continue
                        except BrokenPipeError:  # it stopped reading; its output decides
                            written = len(pending)
                        pending = pending[written:]
                        if not pending:
                            selector.unregister(stdin_fd)
                            proc.stdin.close()
                        continue
                    data = os.read(key.fd, _CHUNK)
                    if not data:
                        selector.unregister(key.fd)
                        readers -= 1
                        continue
                    last_output = time.monotonic()
                    if key.data == "out":
                        stdout += self._kept(partial, data)
                        if len(stdout) > MAX_REPLY_BYTES:
                            failure = f"reply too large (over {MAX_REPLY_BYTES // 2**20} MiB)"
                            break
                    else:
                        stderr += data
                        if len(stderr) > _STDERR_TAIL:
                            del stderr[: len(stderr) - _STDERR_TAIL]
                if failure is None and readers and proc.poll() is not None:
                    # It exited but something it started still holds a pipe open.
                    exited_at = exited_at or now
                    if now - exited_at > _EXIT_GRACE:
                        break
        finally:  # also on KeyboardInterrupt, which then propagates
            selector.close()
            if proc.poll() is None:
                stop_group(proc)
            kill_group(proc.pid, signal.SIGKILL)  # whatever it left behind
            untrack(proc.pid)
            proc.wait()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                with contextlib.suppress(OSError):
                    pipe.close()
        check_cancelled()
        if partial and _keep_event(bytes(partial), self._drop):
            stdout += partial
        return _Outcome(
            code=proc.returncode,
            stdout=bytes(stdout),
            stderr=bytes(stderr).decode("utf-8", errors="replace"),
            failure=failure,
        )


# --- the openai provider ----------------------------------------------------------------------


def _api_reason(err: openai.APIStatusError) -> str:
    """The server's own words: ``error.message`` of an OpenAI-style body, else the body."""
    body: object = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return _one_line(str(inner["message"]))
        if isinstance(inner, str) and inner:
            return _one_line(inner)
    if body:
        return _one_line(str(body))
    return _one_line(err.message)


class _Request(Protocol):
    """What the deadline hook touches of an httpx request (httpx or httpx2, by openai version)."""

    extensions: dict[str, Any]


class OpenAIProvider:
    """Chat completions against ``base_url`` with the official ``openai`` package.

    The key comes from the environment variable ``api_key_env`` (default ``OPENAI_API_KEY``), or
    is the placeholder ``unused`` when that is unset (local servers need none). The client retries
    429, 408, 409, 5xx, connection errors and timeouts ``max_retries`` times with exponential
    backoff (0.5 s doubling, at most 8 s, minus up to 25% jitter; a server's Retry-After of up to
    2 min wins). ``timeout`` bounds the whole call, retries included: each attempt gets at most what
    is left of it, and none starts after it.
    """

    def __init__(self, config: AgentConfig, *, max_retries: int = OPENAI_MAX_RETRIES) -> None:
        try:
            import openai
        except ImportError:
            raise EyefulError(
                "the openai provider needs the openai package: pip install 'eyeful[openai]'"
            ) from None
        if not (config.base_url and config.model):  # AgentConfig refuses this already
            raise EyefulError("the openai provider needs agent.base_url and agent.model")
        self.name: str = "openai"
        self.base_url = config.base_url
        self.model = config.model
        self.timeout = config.timeout
        self._openai = openai
        self._local = threading.local()  # the deadline of the call running on this thread
        key = os.environ.get(config.api_key_env or "OPENAI_API_KEY") or "unused"
        self._client = openai.OpenAI(
            api_key=key,
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=max_retries,
            http_client=openai.DefaultHttpxClient(event_hooks={"request": [self._bound]}),
        )

    def _bound(self, request: _Request) -> None:
        """Before each attempt: give it at most what is left of the call's time, or refuse it."""
        deadline: float | None = getattr(self._local, "deadline", None)
        if deadline is None:
            return
        left = deadline - time.monotonic()
        if left <= 0:
            # Raised inside the client's send; recent clients pass an OpenAIError through
            # without retrying it, older ones retry (failing again at once) and then raise.
            raise self._openai.APITimeoutError(request=cast("Any", request))
        current = request.extensions.get("timeout") or dict.fromkeys(
            ("connect", "read", "write", "pool")
        )
        bounded = {k: left if v is None else min(float(v), left) for k, v in current.items()}
        request.extensions = {**request.extensions, "timeout": bounded}

    def prompt_fits(self, prompt: str) -> str | None:
        """The server's context window is its own to refuse (an HTTP error, a fault)."""
        return None

    def complete(self, prompt: str, *, cwd: Path, want_json: bool = True) -> Completion:
        """``cwd`` is not used: the server sees only the prompt."""
        openai = self._openai
        started = time.monotonic()
        deadline = started + self.timeout
        self._local.deadline = deadline
        try:
            response = self._create(prompt, want_json)
        except openai.APITimeoutError:
            raise self._timed_out() from None
        except openai.APIStatusError as err:
            raise ProviderError(
                f"openai: HTTP {err.status_code} from {self.base_url}: {_api_reason(err)}"
            ) from None
        except openai.APIConnectionError as err:
            if time.monotonic() >= deadline:
                raise self._timed_out() from None
            cause = err.__cause__ or err.__context__
            detail = _one_line(str(cause)) if cause and str(cause) else _one_line(err.message)
            raise ProviderError(f"openai: cannot reach {self.base_url}: {detail}") from None
        except openai.OpenAIError as err:
            raise ProviderError(f"openai: {_one_line(str(err)) or type(err).__name__}") from None
        finally:
            self._local.deadline = None
        seconds = time.monotonic() - started
        try:
            choice = response.choices[0]
            text = choice.message.content
            finish = choice.finish_reason
        except (AttributeError, IndexError, TypeError):
            raise ProviderError(f"openai: unreadable reply from {self.base_url}") from None
        if not isinstance(text, str) or not text.strip():
            raise ProviderError(f"openai: empty reply (finish_reason {finish})")
        usage = getattr(response, "usage", None)
        return Completion(
            text=text,
            usage=Usage(
                tokens_in=_int(getattr(usage, "prompt_tokens", None)),
                tokens_out=_int(getattr(usage, "completion_tokens", None)),
            ),
            seconds=seconds,
        )

    def _timed_out(self) -> ProviderError:
        return ProviderError(f"openai: timed out after {self.timeout:g}s ({self.base_url})")

    def _create(self, prompt: str, want_json: bool) -> ChatCompletion:
        messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": prompt}]
        completions = self._client.chat.completions
        if not want_json:
            return completions.create(model=self.model, messages=messages)
        try:
            return completions.create(
                model=self.model, messages=messages, response_format={"type": "json_object"}
            )
        except (self._openai.BadRequestError, self._openai.UnprocessableEntityError) as err:
            # Some local servers do not know response_format; ask once more without it.
            if "response_format" not in f"{err.message} {err.body}".lower():
                raise
        return completions.create(model=self.model, messages=messages)
