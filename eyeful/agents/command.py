"""The command provider: a shell command (or a preset CLI), the prompt on stdin, the answer on
stdout.

The command runs in the directory the caller gives (an export of the change,
eyeful/agents/export.py), with the environment eyeful/agents/env.py allows, in bubblewrap where
it can (eyeful/agents/jail.py: its own pid namespace, writing only the export, its ``TMPDIR`` and
its CLI's state; ``sandbox = "require"`` refuses to run it unsandboxed), in its own process
group with a per-call timeout and a no-output timeout; the whole group is killed on either, on
Ctrl-C, and after the command exits (no orphans). stderr is kept (bounded) for the error message.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shlex
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from eyeful import sandbox
from eyeful.agents.env import agent_env
from eyeful.agents.jail import jailed
from eyeful.agents.presets import PRESETS, Unreadable, keep_event, no_limit, parse_text
from eyeful.agents.providers import Completion, ProviderError, last_line
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

MAX_REPLY_BYTES = 8 * 1024 * 1024  # an agent's stdout beyond this is not an answer
_STDERR_TAIL = 16 * 1024
_CHUNK = 65536
_TICK = 0.1  # seconds between checks of the timeouts
_EXIT_GRACE = 1.0  # seconds to drain output after the command exits


@dataclass
class _Outcome:
    code: int | None
    stdout: bytes
    stderr: str
    failure: str | None  # timed out, no output, reply too large


class CommandProvider:
    """A shell command (or a preset CLI): prompt on stdin, answer on stdout."""

    def __init__(
        self, config: AgentConfig, sandbox_mode: Literal["auto", "require", "all"] = "auto"
    ) -> None:
        self._config = config
        self._sandbox_mode = sandbox_mode
        preset = PRESETS[config.preset] if config.preset else None
        self.name: str = config.preset or "command"
        self.timeout = config.timeout
        self.idle_timeout = config.idle_timeout
        self._parse = preset.parse if preset else parse_text
        self._drop = preset.drop if preset else frozenset()
        self._fits = preset.fits if preset else no_limit
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
        except Unreadable as err:
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
        detail = last_line(stderr)
        if not detail:  # e.g. claude's error result: the preset's parser says it best
            try:
                self._parse(stdout)
            except Unreadable as err:
                detail = "" if "JSON" in str(err) else str(err)
            detail = detail or last_line(stdout)
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
        return b"".join(line for line in lines if keep_event(line, self._drop))

    def _argv(self, command: str, cwd: Path, tmp: Path) -> list[str]:
        """``sh -c command``, in the sandbox unless there is none (and none is required)."""
        argv = ["/bin/sh", "-c", command]
        why = sandbox.unavailable()
        if why is None:
            return jailed(argv, self._config, self._env, cwd=cwd, tmp=tmp)
        if self._sandbox_mode != "auto":
            raise ProviderError(
                f'{self.name}: no sandbox for the agent\'s command (sandbox = "require"): {why}'
            )
        return argv

    def _run(self, command: str, prompt: str, cwd: Path) -> _Outcome:
        """Run ``command`` with its own ``TMPDIR``; removed when this returns."""
        with tempfile.TemporaryDirectory(prefix="eyeful-agent-") as tmp:
            return self._run_in(self._argv(command, cwd, Path(tmp)), prompt, cwd, Path(tmp))

    def _run_in(self, argv: list[str], prompt: str, cwd: Path, tmp: Path) -> _Outcome:
        """Run ``argv`` in its own process group; the group is gone when this returns."""
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env={**self._env, "TMPDIR": str(tmp)},
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
        if partial and keep_event(bytes(partial), self._drop):
            stdout += partial
        return _Outcome(
            code=proc.returncode,
            stdout=bytes(stdout),
            stderr=bytes(stderr).decode("utf-8", errors="replace"),
            failure=failure,
        )
