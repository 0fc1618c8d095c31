"""The transport to agents: real subprocesses (fake CLIs on PATH) and a real local HTTP server."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from eyeful.agents.command import CommandProvider
from eyeful.agents.openai_provider import OpenAIProvider
from eyeful.agents.providers import ProviderError, Usage
from eyeful.agents.transport import make_provider
from eyeful.config import AgentConfig
from eyeful.errors import EyefulError

FAKE_AGENT = Path(__file__).parent / "fake_agents" / "fake_agent.py"
PROMPT = "Review this — naïve café, 日本語, emoji 🙂\n\tindented line\n$HOME `id` 'quoted'\n"


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def running_in(directory: Path) -> list[int]:
    """The host pids of the processes working in ``directory``: an agent in its pid namespace
    prints its own pid, not the host's, so its processes are found by their cwd."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if (cwd == str(directory) or cwd.startswith(f"{directory}/")) and alive(
                int(entry.name)
            ):
                found.append(int(entry.name))
    return found


def all_gone(directory: Path, within: float = 3.0) -> bool:
    """No process works in ``directory`` any more (within ``within`` seconds)."""
    deadline = time.monotonic() + within
    while running_in(directory):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@dataclass
class Agents:
    """Fake claude/codex/llm/ollama on PATH, a worktree to run them in, what they recorded."""

    log: Path
    worktree: Path
    monkeypatch: pytest.MonkeyPatch

    def mode(self, mode: str) -> None:
        # A file, not a variable: the agent's environment is eyeful's allow-list only.
        self.log.with_name("mode").write_text(mode, encoding="utf-8")

    def record(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.log.read_text(encoding="utf-8"))
        return data

    def provider(self, **fields: Any) -> CommandProvider:
        fields.setdefault("writable", (self.log.parent,))
        provider = make_provider(AgentConfig(**fields))
        assert isinstance(provider, CommandProvider)
        return provider


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Agents:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    state = tmp_path / "state"  # writable in the agent's sandbox: agent.writable names it
    state.mkdir()
    for name in ("claude", "codex", "llm", "ollama"):
        launcher = bin_dir / name
        launcher.write_text(
            f"#!{sys.executable}\n"
            "import os, runpy\n"
            f"os.environ['FAKE_AGENT_NAME'] = {name!r}\n"
            f"os.environ['FAKE_AGENT_LOG'] = {str(state / 'agent.json')!r}\n"
            f"mode = {str(state / 'mode')!r}\n"
            "if os.path.exists(mode):\n"
            "    os.environ['FAKE_AGENT_MODE'] = open(mode).read()\n"
            f"runpy.run_path({str(FAKE_AGENT)!r}, run_name='__main__')\n",
            encoding="utf-8",
        )
        launcher.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    log = state / "agent.json"
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    return Agents(log, worktree.resolve(), monkeypatch)


def expected(agents: Agents, prompt: str = PROMPT) -> str:
    return f"cwd={agents.worktree}\nprompt={prompt}"


# --- presets: how each CLI is called, where its answer is ------------------------------------


CLAUDE_ARGV = [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "dontAsk",
    "--tools",
    "Read,Grep,Glob",
    "--setting-sources",
    "user",
    "--strict-mcp-config",
    "--no-session-persistence",
]


def test_claude_preset(agents: Agents) -> None:
    provider = agents.provider(preset="claude", model="sonnet; touch pwned")
    reply = provider.complete(PROMPT, cwd=agents.worktree)
    assert reply.text == expected(agents)
    assert reply.usage == Usage(tokens_in=10 + 5 + 3, tokens_out=7, cost_usd=0.0123)
    assert reply.notes == []
    assert reply.seconds > 0
    seen = agents.record()
    assert seen["prompt"] == PROMPT
    assert Path(seen["cwd"]) == agents.worktree
    assert seen["argv"] == [*CLAUDE_ARGV, "--model", "sonnet; touch pwned"]
    # The fake parses them as claude 2.1.83's --help lists them: the posture is in force.
    assert seen["options"] == {
        "p": True,
        "output-format": "stream-json",
        "verbose": True,
        "permission-mode": "dontAsk",
        "tools": "Read,Grep,Glob",
        "setting-sources": "user",
        "strict-mcp-config": True,
        "no-session-persistence": True,
        "model": "sonnet; touch pwned",
    }
    assert not (agents.worktree / "pwned").exists()
    assert provider.name == "claude"


def test_fake_claude_refuses_stream_json_without_verbose(agents: Agents) -> None:
    """The fake is strict as the real one is: the posture test above would catch a lost flag."""
    provider = agents.provider(preset="claude", command="claude -p --output-format stream-json")
    with pytest.raises(ProviderError) as err:
        provider.complete("hi", cwd=agents.worktree)
    assert str(err.value) == (
        "claude: exited with code 1: Error: When using --print, --output-format=stream-json "
        "requires --verbose"
    )
    provider = agents.provider(preset="claude", command="claude -p --permission-mode ask")
    with pytest.raises(ProviderError, match=r"argument 'ask' is invalid"):
        provider.complete("hi", cwd=agents.worktree)


def test_claude_error_subtype_reports_its_errors(agents: Agents) -> None:
    agents.mode("error-max-turns")
    with pytest.raises(ProviderError) as err:
        agents.provider(preset="claude").complete("hi", cwd=agents.worktree)
    assert str(err.value) == (
        "claude: reported an error: error_max_turns: Reached maximum number of turns (3)"
    )


def test_claude_permission_denials_become_notes(agents: Agents) -> None:
    agents.mode("denied")
    reply = agents.provider(preset="claude").complete("hi", cwd=agents.worktree)
    assert reply.text == expected(agents, "hi")
    assert reply.notes == ["claude was refused 2 tool use(s) (Bash, Write): it runs read-only"]


@pytest.mark.parametrize("preset", ["claude", "codex"])
def test_tool_echoes_are_not_kept(agents: Agents, preset: str) -> None:
    """9 MiB of echoed tool results is not an answer too large: only needed events are kept."""
    agents.mode("tool-echo")
    reply = agents.provider(preset=preset).complete("hi", cwd=agents.worktree)
    assert reply.text == expected(agents, "hi")
    if preset == "claude":  # 12.5 MiB of lines that are not events: still too large
        agents.mode("huge")
        with pytest.raises(ProviderError, match=r"reply too large"):
            agents.provider(preset=preset).complete("hi", cwd=agents.worktree)


def test_claude_single_object_output_with_command_override(agents: Agents) -> None:
    """`command` replaces the preset's command line; the preset's parsing still applies."""
    provider = agents.provider(preset="claude", command="claude -p --output-format json", model="x")
    reply = provider.complete("hi", cwd=agents.worktree)
    assert reply.text == expected(agents, "hi")
    assert reply.usage == Usage(tokens_in=18, tokens_out=7, cost_usd=0.0123)
    assert agents.record()["argv"] == ["-p", "--output-format", "json"]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        (
            "is-error",
            "claude: reported an error: error_during_execution: API Error: 529 overloaded",
        ),
        (
            "is-error-exit",
            "claude: exited with code 1: reported an error: error_during_execution: "
            "API Error: 529 overloaded",
        ),
    ],
)
def test_claude_is_error(agents: Agents, mode: str, message: str) -> None:
    agents.mode(mode)
    provider = agents.provider(preset="claude")
    with pytest.raises(ProviderError) as err:
        provider.complete("hi", cwd=agents.worktree)
    assert str(err.value) == message


def test_codex_preset_last_agent_message_wins(agents: Agents) -> None:
    provider = agents.provider(preset="codex", model="gpt-5")
    reply = provider.complete(PROMPT, cwd=agents.worktree)
    assert reply.text == expected(agents)
    # The last turn.completed is the thread's running total (summing would say 230 and 45).
    assert reply.usage == Usage(tokens_in=130, tokens_out=25)
    seen = agents.record()
    assert seen["argv"] == [
        "exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only", "--ephemeral",
        "-m", "gpt-5", "-",
    ]  # fmt: skip
    assert seen["options"]["sandbox"] == "read-only"
    assert seen["options"]["ephemeral"] is True
    assert seen["prompt"] == PROMPT


def test_fake_codex_refuses_an_unknown_argument(agents: Agents) -> None:
    provider = agents.provider(preset="codex", command="codex exec --json --sandboxed -")
    with pytest.raises(ProviderError) as err:
        provider.complete("hi", cwd=agents.worktree)
    assert str(err.value) == (
        "codex: exited with code 2: error: unexpected argument '--sandboxed' found"
    )


def test_codex_output_without_json(agents: Agents) -> None:
    provider = agents.provider(preset="codex", command="echo 'not json at all'")
    with pytest.raises(ProviderError, match=r"^codex: output is not JSON$"):
        provider.complete("hi", cwd=agents.worktree)


def test_llm_preset(agents: Agents) -> None:
    reply = agents.provider(preset="llm", model="gpt-4o-mini").complete(PROMPT, cwd=agents.worktree)
    assert reply.text == expected(agents)
    assert reply.usage == Usage()
    assert agents.record()["argv"] == ["-n", "-m", "gpt-4o-mini"]
    assert agents.record()["options"] == {"no_log": True, "model": "gpt-4o-mini"}
    agents.provider(preset="llm").complete(PROMPT, cwd=agents.worktree)
    assert agents.record()["argv"] == ["-n"]


def test_ollama_needs_a_model(agents: Agents) -> None:
    with pytest.raises(EyefulError, match=r"needs agent\.model") as err:
        make_provider(AgentConfig(preset="ollama"))
    assert "\n" not in str(err.value)


def test_ollama_preset_strips_escape_codes(agents: Agents) -> None:
    provider = agents.provider(preset="ollama", model="qwen2.5-coder:7b")
    reply = provider.complete(PROMPT, cwd=agents.worktree, want_json=False)
    assert "\x1b" not in reply.text
    assert reply.text.strip() == expected(agents).strip()
    assert reply.usage == Usage()
    assert agents.record()["argv"] == ["run", "qwen2.5-coder:7b", "--hidethinking"]

    reply = provider.complete(PROMPT, cwd=agents.worktree)  # want_json
    argv = agents.record()["argv"]
    assert argv == ["run", "qwen2.5-coder:7b", "--hidethinking", "--format", "json"]
    assert "--experimental" not in argv and "--yolo" not in argv  # no tools, ever
    assert json.loads(reply.text) == {"cwd": str(agents.worktree), "prompt": PROMPT}


def test_ollama_thinking_block_is_ignored(agents: Agents) -> None:
    """An ollama that prints its thinking anyway (no --hidethinking): its braces are no answer."""
    agents.mode("thinking")
    provider = agents.provider(preset="ollama", model="qwen3", command="ollama run qwen3")
    reply = provider.complete(PROMPT, cwd=agents.worktree, want_json=False)
    assert "Thinking" not in reply.text
    assert reply.text.strip() == expected(agents).strip()
    assert agents.record()["argv"] == ["run", "qwen3"]


def test_plain_command(agents: Agents) -> None:
    provider = agents.provider(command="cat")
    assert provider.name == "command"
    reply = provider.complete(PROMPT, cwd=agents.worktree)
    assert reply.text == PROMPT
    assert reply.usage == Usage()


def test_big_prompt_both_ways(agents: Agents) -> None:
    """A prompt far beyond a pipe's buffer, echoed while it is still being written."""
    prompt = ("línea " * 20 + "\n") * 20_000  # ~2.6 MB
    reply = agents.provider(command="cat").complete(prompt, cwd=agents.worktree)
    assert reply.text == prompt


def test_command_runs_in_cwd_without_git_index_file(
    agents: Agents, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_INDEX_FILE", str(agents.worktree / "index"))
    monkeypatch.setenv("GIT_DIR", str(agents.worktree / ".git"))
    reply = agents.provider(preset="llm").complete("x", cwd=agents.worktree)
    assert reply.text.startswith(f"cwd={agents.worktree}\n")
    assert agents.record()["git_index_file"] is None


# --- failures ----------------------------------------------------------------------------------


def test_crash_is_one_line_with_stderr(agents: Agents) -> None:
    agents.mode("crash")
    with pytest.raises(ProviderError) as err:
        agents.provider(preset="codex").complete("hi", cwd=agents.worktree)
    assert str(err.value) == "codex: exited with code 1: fake: error: model not found"


def test_missing_command(agents: Agents) -> None:
    with pytest.raises(ProviderError, match=r"^command: could not start \(exit 127"):
        agents.provider(command="no-such-agent-for-eyeful").complete("hi", cwd=agents.worktree)


def test_empty_reply(agents: Agents) -> None:
    agents.mode("empty")
    with pytest.raises(ProviderError, match=r"^llm: empty reply$"):
        agents.provider(preset="llm").complete("hi", cwd=agents.worktree)


def test_huge_reply(agents: Agents) -> None:
    agents.mode("huge")
    with pytest.raises(ProviderError, match=r"^llm: reply too large \(over 8 MiB\)$"):
        agents.provider(preset="llm").complete("hi", cwd=agents.worktree)
    assert all_gone(agents.worktree)


def test_total_timeout_on_silence(agents: Agents) -> None:
    agents.mode("hang")
    provider = agents.provider(preset="claude", timeout=1.5, idle_timeout=60)
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"^claude: timed out after 1.5s$"):
        provider.complete("hi", cwd=agents.worktree)
    assert time.monotonic() - started < 4
    assert all_gone(agents.worktree, within=0.5)


def test_total_timeout_while_it_keeps_printing(agents: Agents) -> None:
    agents.mode("chatty")
    provider = agents.provider(preset="llm", timeout=1.5, idle_timeout=1)
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"^llm: timed out after 1.5s$"):
        provider.complete("hi", cwd=agents.worktree)
    assert time.monotonic() - started < 4


def test_idle_timeout_after_one_line(agents: Agents) -> None:
    agents.mode("line-then-hang")
    provider = agents.provider(preset="codex", timeout=60, idle_timeout=1)
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"^codex: no output for 1s \(idle timeout\)$"):
        provider.complete("hi", cwd=agents.worktree)
    elapsed = time.monotonic() - started
    assert 1 <= elapsed < 4
    assert all_gone(agents.worktree, within=0.5)


@pytest.mark.parametrize("mode", ["spawn", "spawn-inherit"])
def test_no_orphans_after_exit(agents: Agents, mode: str) -> None:
    """A child left running is killed with the group, also when it holds stdout open."""
    agents.mode(mode)
    started = time.monotonic()
    reply = agents.provider(preset="llm", timeout=30).complete("hi", cwd=agents.worktree)
    assert time.monotonic() - started < 10
    assert reply.text == f"cwd={agents.worktree}\nprompt=hi"
    seen = agents.record()
    assert "child" in seen
    assert all_gone(agents.worktree, within=0.5)


def test_no_orphans_after_timeout(agents: Agents) -> None:
    agents.mode("spawn-hang")
    with pytest.raises(ProviderError, match="timed out"):
        agents.provider(preset="llm", timeout=1.5).complete("hi", cwd=agents.worktree)
    seen = agents.record()
    assert "child" in seen
    assert all_gone(agents.worktree, within=0.5)


def test_ctrl_c_kills_the_group_and_propagates(agents: Agents) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach only the main thread")
    agents.mode("spawn-hang")
    provider = agents.provider(preset="llm", timeout=30)
    running: list[int] = []

    def interrupt_once_spawned() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                if "child" in agents.record():
                    break
            time.sleep(0.05)
        running.extend(running_in(agents.worktree))  # what all_gone must not find afterwards
        os.kill(os.getpid(), signal.SIGINT)

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        thread = threading.Thread(target=interrupt_once_spawned)
        started = time.monotonic()
        thread.start()
        with pytest.raises(KeyboardInterrupt):
            provider.complete("hi", cwd=agents.worktree)
        thread.join()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - started < 10
    seen = agents.record()
    assert "child" in seen
    assert len(running) >= 2, running  # the agent and its child, found by their cwd
    assert all_gone(agents.worktree, within=0.5)


# --- the openai provider against a real local server ------------------------------------------


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict -> JSON, str -> as is; None -> a chat completion of `content`
    content: str | None = '{"ok": true}'
    delay: float = 0.0


def completion(content: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }


ERROR_500 = Reply(500, {"error": {"message": "upstream exploded", "type": "server_error"}})


@dataclass
class ChatServer:
    """POST /v1/chat/completions answering a script of replies; records every request.

    It serves at most ``limit`` requests, then shuts itself down.
    """

    replies: list[Reply]
    limit: int
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def next_reply(self, request: dict[str, Any]) -> Reply:
        with self.lock:
            self.requests.append(request)
            count = len(self.requests)
            if count >= self.limit:
                assert self.server is not None
                threading.Thread(target=self.server.shutdown, daemon=True).start()
        return self.replies[min(count, len(self.replies)) - 1]


def start_server(replies: list[Reply], limit: int | None = None) -> ChatServer:
    state = ChatServer(replies, limit or len(replies) + 2)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            reply = state.next_reply(
                {
                    "path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": json.loads(raw),
                }
            )
            time.sleep(reply.delay)
            body = completion(reply.content) if reply.body is None else reply.body
            data = (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a client that gave up (the timeout test) is not an error here

    server = Server(("127.0.0.1", 0), Handler)
    state.server = server
    threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    ).start()
    return state


@pytest.fixture
def chat_server() -> Iterator[Callable[..., ChatServer]]:
    servers: list[ChatServer] = []

    def start(replies: list[Reply], limit: int | None = None) -> ChatServer:
        servers.append(start_server(replies, limit))
        return servers[-1]

    yield start
    for state in servers:
        assert state.server is not None
        state.server.shutdown()
        state.server.server_close()


def openai_provider(base_url: str, **fields: Any) -> OpenAIProvider:
    fields.setdefault("timeout", 20)
    provider = make_provider(
        AgentConfig(provider="openai", base_url=base_url, model="test-model", **fields)
    )
    assert isinstance(provider, OpenAIProvider)
    return provider


def test_openai_answer_usage_and_request(
    chat_server: Callable[..., ChatServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EYEFUL_TEST_KEY", "sk-test-123")
    server = chat_server([Reply(content='{"verdict": "ok"}')])
    provider = openai_provider(server.base_url, api_key_env="EYEFUL_TEST_KEY")
    reply = provider.complete(PROMPT, cwd=tmp_path)
    assert reply.text == '{"verdict": "ok"}'
    assert reply.usage == Usage(tokens_in=12, tokens_out=5)
    assert reply.seconds > 0
    [request] = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer sk-test-123"
    assert request["body"]["model"] == "test-model"
    assert request["body"]["messages"] == [{"role": "user", "content": PROMPT}]
    assert request["body"]["response_format"] == {"type": "json_object"}


def test_openai_placeholder_key_and_no_json_mode(
    chat_server: Callable[..., ChatServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = chat_server([Reply(content="plain words")])
    reply = openai_provider(server.base_url).complete("hi", cwd=tmp_path, want_json=False)
    assert reply.text == "plain words"
    [request] = server.requests
    assert request["headers"]["authorization"] == "Bearer unused"
    assert "response_format" not in request["body"]


@pytest.mark.parametrize(
    "first",
    [ERROR_500, Reply(429, {"error": {"message": "slow down", "type": "rate_limit"}})],
    ids=["500", "429"],
)
def test_openai_retries_then_answers(
    chat_server: Callable[..., ChatServer], tmp_path: Path, first: Reply
) -> None:
    server = chat_server([first, Reply(content="second time lucky")])
    reply = openai_provider(server.base_url).complete("hi", cwd=tmp_path)
    assert reply.text == "second time lucky"
    assert len(server.requests) == 2


def test_openai_gives_up_after_retries_with_backoff(
    chat_server: Callable[..., ChatServer], tmp_path: Path
) -> None:
    server = chat_server([ERROR_500])
    started = time.monotonic()
    with pytest.raises(ProviderError) as err:
        openai_provider(server.base_url).complete("hi", cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert str(err.value) == f"openai: HTTP 500 from {server.base_url}: upstream exploded"
    assert len(server.requests) == 4  # one try and three retries
    assert elapsed >= (0.5 + 1 + 2) * 0.75  # exponential backoff, less at most 25% jitter


def test_openai_retries_without_response_format_once(
    chat_server: Callable[..., ChatServer], tmp_path: Path
) -> None:
    refusal = {
        "error": {
            "message": "response_format is not supported by this server",
            "type": "invalid_request_error",
            "param": "response_format",
        }
    }
    server = chat_server([Reply(400, refusal), Reply(content='{"a": 1}')])
    reply = openai_provider(server.base_url).complete("hi", cwd=tmp_path)
    assert reply.text == '{"a": 1}'
    first, second = server.requests
    assert first["body"]["response_format"] == {"type": "json_object"}
    assert "response_format" not in second["body"]


def test_openai_other_bad_request_is_not_retried(
    chat_server: Callable[..., ChatServer], tmp_path: Path
) -> None:
    server = chat_server([Reply(400, {"error": {"message": "model 'test-model' not found"}})])
    with pytest.raises(ProviderError, match=r"HTTP 400 from .*: model 'test-model' not found$"):
        openai_provider(server.base_url).complete("hi", cwd=tmp_path)
    assert len(server.requests) == 1


@pytest.mark.parametrize("content", [None, "", "  \n"])
def test_openai_empty_content(
    chat_server: Callable[..., ChatServer], tmp_path: Path, content: str | None
) -> None:
    server = chat_server([Reply(content=content)])
    with pytest.raises(ProviderError, match=r"^openai: empty reply"):
        openai_provider(server.base_url).complete("hi", cwd=tmp_path)


def test_openai_unreadable_body(chat_server: Callable[..., ChatServer], tmp_path: Path) -> None:
    server = chat_server([Reply(body={"unexpected": "shape"})])
    with pytest.raises(ProviderError, match=r"^openai: (unreadable|empty) reply"):
        openai_provider(server.base_url).complete("hi", cwd=tmp_path)


def test_openai_connection_refused(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(ProviderError, match=rf"^openai: cannot reach {base_url}: ") as err:
        openai_provider(base_url).complete("hi", cwd=tmp_path)
    assert "\n" not in str(err.value)


def test_openai_timeout_bounds_the_whole_call(
    chat_server: Callable[..., ChatServer], tmp_path: Path
) -> None:
    """A slow server is not asked again and again: the timeout covers the retries too."""
    server = chat_server([Reply(content="too late", delay=4)])
    started = time.monotonic()
    with pytest.raises(ProviderError, match=r"^openai: timed out after 1s"):
        openai_provider(server.base_url, timeout=1).complete("hi", cwd=tmp_path)
    assert time.monotonic() - started < 3
    assert len(server.requests) == 1


def test_openai_package_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # what `import openai` sees when absent
    config = AgentConfig(provider="openai", base_url="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(EyefulError, match=r"pip install 'eyeful\[openai\]'"):
        make_provider(config)


# --- what an agent gets: its environment, a prompt within its CLI's limit ----------------------


def test_agent_environment_is_an_allow_list(
    agents: Agents, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FOO_TOKEN", "secret-foo")
    monkeypatch.setenv("MY_AGENT_KEY", "sk-mine")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    monkeypatch.setenv("GIT_DIR", str(agents.worktree / ".git"))
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("no_proxy", "localhost")
    agents.provider(preset="claude", api_key_env="MY_AGENT_KEY").complete("hi", cwd=agents.worktree)
    env = agents.record()["env"]
    assert "FOO_TOKEN" not in env
    assert not [name for name in env if name.startswith("GIT_")]
    assert env["MY_AGENT_KEY"] == "sk-mine"
    assert env["ANTHROPIC_API_KEY"] == "sk-ant"  # claude's own credential
    assert env["PATH"] == os.environ["PATH"] and env["HOME"] == os.environ["HOME"]
    assert (env["LANG"], env["LC_ALL"]) == ("C.UTF-8", "C.UTF-8")
    assert env["HTTPS_PROXY"] == "http://proxy.invalid:3128" and env["no_proxy"] == "localhost"
    # Another CLI does not get claude's credential; a plain command gets only the basics.
    agents.provider(preset="llm").complete("hi", cwd=agents.worktree)
    env = agents.record()["env"]
    assert "ANTHROPIC_API_KEY" not in env and "MY_AGENT_KEY" not in env
    assert "FOO_TOKEN" not in env


CODEX_ANSWER = (
    "import json, sys; p = sys.stdin.read(); open(sys.argv[1], 'w').write(p); "
    "print(json.dumps({'type': 'item.completed', 'item': {'type': 'agent_message', "
    "'text': json.dumps({'probability': 0.5})}}))"
)


def test_prompt_over_codex_limit_leaves_out_whole_files(tmp_path: Path) -> None:
    """Over codex's 1,048,576 characters: the last files go whole, the checklist says so, and
    a prompt over the limit even without files is never sent."""
    from eyeful.agents.agent import AgentFault, Agents, SameProblemReply

    seen = tmp_path / "prompt.txt"
    command = f"{sys.executable} -c {shlex.quote(CODEX_ANSWER)} {seen}"
    provider = make_provider(AgentConfig(preset="codex", command=command))
    agents = Agents(
        AgentConfig(preset="codex", command=command),
        provider,
        cwd=lambda: tmp_path,
        cache=None,
        repo_root=None,
    )
    files = {"first.py": "a" * 400_000, "second.py": "b" * 400_000, "third.py": "c" * 400_000}
    task: dict[str, object] = {"diff": "d" * 100, "files": files, "truncated_files": []}
    reply = agents.ask("same_problem", "x and y", task, SameProblemReply)
    assert reply.probability == 0.5
    prompt = seen.read_text()
    assert len(prompt) <= 1_048_576
    assert '"first.py": "aaa' in prompt and '"second.py": "bbb' in prompt
    assert '"third.py": "' not in prompt and "ccc" not in prompt
    assert '"truncated_files": [\n  "third.py"\n ]' in prompt  # the agent is told
    assert agents.notes == [
        "same_problem for x and y: the prompt was over the agent's input limit; "
        "left out 1 file(s): third.py"
    ]
    seen.unlink()
    with pytest.raises(AgentFault, match="over codex's limit of 1,048,576 characters even"):
        agents.ask(
            "same_problem", "big", {"diff": "d" * 1_100_000, "files": files}, SameProblemReply
        )
    assert not seen.exists()  # never sent
    assert agents.faults[-1].reason.startswith("the prompt is over codex's limit")


CLAUDE_ANSWER = (
    "import json, sys; sys.stdin.read(); "
    "print(json.dumps({'type': 'system', 'subtype': 'init'})); "
    "print(json.dumps({'type': 'result', 'subtype': 'success', 'is_error': False, "
    "'result': 'Thinking about it.\\n```json\\n{\"probability\": 0.25}\\n```', "
    "'usage': {'input_tokens': 40, 'output_tokens': 2}, 'total_cost_usd': 0.0125, "
    "'permission_denials': [{'tool_name': 'Bash', 'tool_use_id': 't'}]}))"
)


def test_claude_cost_and_denials_reach_the_report(tmp_path: Path) -> None:
    """total_cost_usd adds up per role into the JSON `agents` field and the footer; refused
    tools are a checklist line."""
    from eyeful.agents.agent import Agents, SameProblemReply
    from eyeful.report import Report, SideInfo, to_markdown

    config = AgentConfig(
        preset="claude", command=f"{sys.executable} -c {shlex.quote(CLAUDE_ANSWER)}"
    )
    agents = Agents(config, make_provider(config), cwd=lambda: tmp_path, cache=None, repo_root=None)
    for subject in ("a and b", "c and d"):
        assert agents.ask("same_problem", subject, {"x": 1}, SameProblemReply).probability == 0.25
    usage = agents.usage["same_problem"]
    assert (usage.calls, usage.tokens, usage.cost_usd) == (2, 84, 0.025)
    assert agents.usage["expert"].cost_usd is None  # nothing reported, nothing claimed
    assert agents.notes[0] == (
        "same_problem for a and b: claude was refused 1 tool use(s) (Bash): it runs read-only"
    )
    side = SideInfo(tree="t", commit=None, label="the staged change", short="staged")
    report = Report(base=side, head=side, agents=agents.usage).finish()
    assert report.model_dump(mode="json")["agents"]["same_problem"]["cost_usd"] == 0.025
    assert "same_problem 2 calls, 84 tokens, " in to_markdown(report)
    assert ", $0.0250.</sub>" in to_markdown(report)


def test_a_thinking_block_is_no_json() -> None:
    from eyeful.agents.agent import extract_json

    thinking = 'Thinking...\nThe reply is {"probability": 1} or {maybe}.\n...done thinking.\n\n'
    assert extract_json(thinking + '{"probability": 0.5}\n') == {"probability": 0.5}
    assert extract_json('<think>{"a": {</think>\n{"b": 2}') == {"b": 2}
    assert extract_json('reasoning {"a": 1} }\n</think>\n{"b": 3}') == {"b": 3}


def test_no_second_try_past_codex_limit(tmp_path: Path) -> None:
    """A prompt that fits but whose retry (with the error quoted) would not: one call, a fault."""
    from eyeful.agents.agent import AgentFault, Agents, SameProblemReply

    calls = tmp_path / "calls"
    answer = (
        "import json, sys; sys.stdin.read(); open(sys.argv[1], 'a').write('x'); "
        "print(json.dumps({'type': 'item.completed', 'item': {'type': 'agent_message', "
        "'text': 'no JSON here'}}))"
    )
    config = AgentConfig(
        preset="codex", command=f"{sys.executable} -c {shlex.quote(answer)} {calls}"
    )
    agents = Agents(config, make_provider(config), cwd=lambda: tmp_path, cache=None, repo_root=None)
    task: dict[str, object] = {"diff": ""}
    room = 1_048_576 - len(agents.prompt("same_problem", task, SameProblemReply))
    task["diff"] = "d" * (room - 10)
    with pytest.raises(AgentFault, match=r"asking again would be over codex's limit"):
        agents.ask("same_problem", "x", task, SameProblemReply)
    assert calls.read_text() == "x"
