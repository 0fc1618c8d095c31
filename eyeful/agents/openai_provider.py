"""The openai provider: chat completions against ``base_url`` (OpenAI, or any compatible server:
Ollama, llama.cpp, vLLM, LM Studio) through the official ``openai`` package, an optional
dependency."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from eyeful.agents.providers import Completion, ProviderError, Usage, as_int, one_line
from eyeful.config import AgentConfig
from eyeful.errors import EyefulError

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

OPENAI_MAX_RETRIES = 3


def _api_reason(err: openai.APIStatusError) -> str:
    """The server's own words: ``error.message`` of an OpenAI-style body, else the body."""
    body: object = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return one_line(str(inner["message"]))
        if isinstance(inner, str) and inner:
            return one_line(inner)
    if body:
        return one_line(str(body))
    return one_line(err.message)


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
            detail = one_line(str(cause)) if cause and str(cause) else one_line(err.message)
            raise ProviderError(f"openai: cannot reach {self.base_url}: {detail}") from None
        except openai.OpenAIError as err:
            raise ProviderError(f"openai: {one_line(str(err)) or type(err).__name__}") from None
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
                tokens_in=as_int(getattr(usage, "prompt_tokens", None)),
                tokens_out=as_int(getattr(usage, "completion_tokens", None)),
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
