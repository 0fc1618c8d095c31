"""Asking an agent: prompt, JSON reply validated by a pydantic contract, budget, faults, usage.

Every reply must be one JSON object matching the role's contract. An invalid reply is asked for
again once, with the validation error quoted; a second failure, a crash or a timeout is a
*fault*. A fault never raises trust: callers treat it as "no answer" (a finding stays `review`,
a fix stays unverified, nothing is merged), and every fault is listed in the checklist.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from eyeful.agents.presets import strip_thinking
from eyeful.agents.providers import Provider, ProviderError
from eyeful.cache import Cache, cache_key
from eyeful.config import AgentConfig
from eyeful.findings import Claim, Oracle, ReproPath, TestId
from eyeful.report import RoleUsage

Role = Literal["expert", "same_problem", "repro", "fix", "judge"]
ROLES: tuple[Role, ...] = ("expert", "same_problem", "repro", "fix", "judge")
T = TypeVar("T", bound=BaseModel)
# The task keys holding whole files (path → text), which a prompt over the limit leaves out.
_FILE_KEYS = ("files", "documentation_and_files")


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExpertReply(_Reply):
    findings: list[Claim]


class SameProblemReply(_Reply):
    probability: float = Field(ge=0, le=1)


class ReproReply(_Reply):
    path: ReproPath
    code: str = Field(min_length=1)
    fails: str = Field(min_length=1)
    test: TestId | None = None
    oracle: Oracle


class FixReply(_Reply):
    diff: str = Field(min_length=1)


class JudgeVerdict(_Reply):
    id: str
    valid: bool
    reason: str = Field(min_length=1)


class JudgeReply(_Reply):
    verdicts: list[JudgeVerdict]


class Fault(BaseModel):
    role: Role
    subject: str
    reason: str


class AgentFault(Exception):
    """A role produced no usable answer (after its one retry)."""


class BudgetExhausted(AgentFault):
    """The run's token or call budget is spent; the work is skipped, not dropped silently."""


def extract_json(text: str) -> object:
    """The reply's JSON object: the last ```json fence, else the outermost braces; a thinking
    block at the start (``Thinking... ...done thinking.``, ``<think>…</think>``) is ignored."""
    text = strip_thinking(text)
    fences = re.findall(r"```(?:json)?\s*\n(.*?)```", text, flags=re.DOTALL)
    candidates = [*reversed(fences)]
    start, end = text.find("{"), text.rfind("}")
    if start != -1 and end > start:
        candidates.append(text[start : end + 1])
    if not candidates:
        raise ValueError("the reply has no JSON object")
    last_error: Exception | None = None
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, RecursionError) as err:  # too deep is not valid either
            last_error = err
    raise ValueError(f"the reply is not valid JSON: {last_error}")


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(reply)"
    return f"{where}: {first['msg']}"


def load_prompt(role: str, repo_root: Path | None) -> str:
    """A role's instructions: `.eyeful/prompts/<role>.md` in the repository, else eyeful's."""
    if repo_root is not None:
        override = repo_root / ".eyeful" / "prompts" / f"{role}.md"
        # An override is read only inside the repository (never through a symlink out of it).
        if override.is_file() and override.resolve().is_relative_to(repo_root.resolve()):
            return override.read_text(encoding="utf-8")
    return (resources.files("eyeful.agents") / "prompts" / f"{role}.md").read_text(encoding="utf-8")


def _role_usages() -> dict[str, RoleUsage]:
    return {role: RoleUsage() for role in ROLES}


@dataclass(eq=False, repr=False)  # compared and shown as an object, not by its fields
class Agents:
    """One run's access to the configured agent: budget, usage per role, faults, reply cache."""

    config: AgentConfig
    provider: Provider
    _: KW_ONLY
    cwd: Callable[[], Path]
    cache: Cache | None
    repo_root: Path | None
    usage: dict[str, RoleUsage] = field(init=False, default_factory=_role_usages)
    faults: list[Fault] = field(init=False, default_factory=list)
    skipped: list[str] = field(init=False, default_factory=list)
    notes: list[str] = field(init=False, default_factory=list)
    """Checklist lines about calls that answered: tools refused, files left out."""
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _tokens: int = field(init=False, default=0)
    _calls: int = field(init=False, default=0)

    # -- budget ---------------------------------------------------------------------------

    def _reserve(self) -> None:
        with self._lock:
            if self._tokens >= self.config.budget_tokens or self._calls >= self.config.budget_calls:
                raise BudgetExhausted(
                    f"the agent budget is spent ({self._tokens} tokens, {self._calls} calls)"
                )
            self._calls += 1

    def _account(self, role: Role, tokens: int, seconds: float, cost: float | None = None) -> None:
        with self._lock:
            self._tokens += tokens
            usage = self.usage[role]
            usage.calls += 1
            usage.tokens += tokens
            usage.seconds = round(usage.seconds + seconds, 3)
            if cost is not None:
                usage.cost_usd = round((usage.cost_usd or 0.0) + cost, 6)

    def note(self, text: str) -> None:
        with self._lock:
            self.notes.append(text)

    def fault(self, role: Role, subject: str, reason: str) -> None:
        with self._lock:
            self.usage[role].faults += 1
            self.faults.append(Fault(role=role, subject=subject, reason=reason))

    def skip(self, what: str) -> None:
        with self._lock:
            self.skipped.append(what)

    # -- asking ---------------------------------------------------------------------------

    def prompt(self, role: str, task: dict[str, object], contract: type[BaseModel]) -> str:
        instructions = load_prompt(role, self.repo_root)
        schema = json.dumps(contract.model_json_schema(), indent=1)
        return (
            f"{instructions.strip()}\n\n## Input\n\n```json\n"
            f"{json.dumps(task, indent=1, ensure_ascii=False)}\n```\n\n## Reply\n\n"
            "End your answer with ONE JSON object (in a ```json fence) that matches this JSON "
            f"Schema, and nothing after it:\n\n```json\n{schema}\n```\n"
        )

    def _call(self, role: Role, subject: str, prompt: str) -> str:
        self._reserve()
        started = time.monotonic()
        try:
            completion = self.provider.complete(prompt, cwd=self.cwd(), want_json=True)
        except ProviderError:
            self._account(role, 0, time.monotonic() - started)
            raise
        tokens = (completion.usage.tokens_in or 0) + (completion.usage.tokens_out or 0)
        self._account(role, tokens, completion.seconds, completion.usage.cost_usd)
        for text in completion.notes:
            self.note(f"{role} for {subject}: {text}")
        return completion.text

    def _fitted(
        self, role: Role, subject: str, task: dict[str, object], contract: type[BaseModel]
    ) -> str:
        """The prompt, within the provider's input limit: whole files are left out, the last
        first (as ``max_file_chars`` cuts them), and the checklist says which. A prompt over
        the limit even without files is a fault, never sent to fail."""
        prompt = self.prompt(role, task, contract)
        limit = self.provider.prompt_fits(prompt)
        if limit is None:
            return prompt
        task = dict(task)
        left_out: list[str] = []
        for key in _FILE_KEYS:
            original = task.get(key)
            if not isinstance(original, dict):
                continue
            files = dict(original)
            task[key] = files
            while files and limit is not None:
                path = next(reversed(files))
                del files[path]
                left_out.append(path)
                told = task.get("truncated_files")
                if isinstance(told, list):  # the expert is told which files it lacks
                    task["truncated_files"] = [*told, path]
                prompt = self.prompt(role, task, contract)
                limit = self.provider.prompt_fits(prompt)
        if limit is not None:
            reason = f"the prompt is over {limit} even without the changed files"
            self.fault(role, subject, reason)
            raise AgentFault(reason)
        self.note(
            f"{role} for {subject}: the prompt was over the agent's input limit; "
            f"left out {len(left_out)} file(s): {', '.join(left_out)}"
        )
        return prompt

    def ask(self, role: Role, subject: str, task: dict[str, object], contract: type[T]) -> T:
        """One validated reply, or :class:`AgentFault` (recorded) when there is none."""
        prompt = self._fitted(role, subject, task, contract)
        key = cache_key(
            kind="agent",
            provider=self.provider.name,
            agent=self.config.model_dump(mode="json"),
            role=role,
            prompt=prompt,
        )
        if self.cache is not None:
            hit = self.cache.get("agents", key, contract.model_validate)
            if hit is not None:
                with self._lock:
                    self.usage[role].cached += 1
                return hit
        attempt_prompt = prompt
        for attempt in (1, 2):
            try:
                text = self._call(role, subject, attempt_prompt)
            except BudgetExhausted as err:
                self.skip(f"{role} for {subject}: {err}")
                raise
            except ProviderError as err:
                self.fault(role, subject, str(err))
                raise AgentFault(str(err)) from None
            try:
                reply = contract.model_validate(extract_json(text))
            except ValueError as err:  # ValidationError is a ValueError
                problem = _first_error(err) if isinstance(err, ValidationError) else str(err)
                if attempt == 2:
                    reason = f"invalid reply twice: {problem}"
                    self.fault(role, subject, reason)
                    raise AgentFault(reason) from None
                attempt_prompt = (
                    f"{prompt}\n\n## Your previous reply was rejected\n\n{problem}\n\n"
                    "Answer again with one JSON object that matches the schema.\n"
                )
                limit = self.provider.prompt_fits(attempt_prompt)
                if limit is not None:  # no room to quote the error: not sent to fail
                    reason = f"invalid reply: {problem} (asking again would be over {limit})"
                    self.fault(role, subject, reason)
                    raise AgentFault(reason) from None
                continue
            if self.cache is not None:
                self.cache.put("agents", key, reply.model_dump(mode="json"))
            return reply
        raise AssertionError("unreachable")  # pragma: no cover
