#!/usr/bin/env python3
"""A fake `claude`, `codex`, `llm` or `ollama` CLI for tests/test_providers.py.

tests/test_providers.py installs it on PATH under those names (each a tiny launcher run by the
test's own interpreter). The name decides the output format, the environment the behaviour:

FAKE_AGENT_MODE   ok (default) | crash | hang | line-then-hang | chatty | huge | is-error |
                  is-error-exit | error-max-turns | denied | tool-echo | thinking |
                  spawn | spawn-hang | spawn-inherit | empty
FAKE_AGENT_LOG    a file to write a JSON record to: argv, the options as parsed, cwd, the prompt
                  as received, the environment, this process's pid and the pid of a spawned child.

Each CLI checks its arguments as the real one does (the option names and choices of its --help:
claude 2.1.83, codex exec 0.112, llm 0.5, ollama 0.9) and fails the same way on an unknown one,
so the flags eyeful passes are asserted against the CLI, not assumed. claude also fails as the
real one does on `-p --output-format stream-json` without `--verbose`.

The "ok" answer names the working directory and echoes the prompt, so a test can check both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

NAME = os.environ.get("FAKE_AGENT_NAME") or os.path.basename(sys.argv[0])
MODE = os.environ.get("FAKE_AGENT_MODE", "ok")
ARGS = sys.argv[1:]


def out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def event(value: object) -> None:
    out(json.dumps(value) + "\n")


def record(**fields: object) -> None:
    path = os.environ.get("FAKE_AGENT_LOG")
    if not path:
        return
    data = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    data.update(fields)
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(path + ".tmp", path)


class BadArgs(Exception):
    """What the real CLI prints when it refuses its arguments; the exit code is in args[1]."""


CLAUDE_VALUES = {
    "--output-format": ("text", "json", "stream-json"),
    "--permission-mode": ("acceptEdits", "bypassPermissions", "default", "dontAsk", "plan", "auto"),
    "--model": None,
    "--tools": None,
    "--setting-sources": None,
    "--allowedTools": None,
    "--disallowedTools": None,
    "--mcp-config": None,
    "--max-budget-usd": None,
}
CLAUDE_FLAGS = ("-p", "--print", "--verbose", "--strict-mcp-config", "--no-session-persistence")


def parse_claude(args: list[str]) -> dict[str, object]:
    """commander's parsing: `--name value` options, flags, `error: unknown option`."""
    opts: dict[str, object] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in CLAUDE_FLAGS:
            opts[arg.lstrip("-")] = True
        elif arg in CLAUDE_VALUES:
            if not rest:
                raise BadArgs(f"error: option '{arg} <value>' argument missing", 1)
            value = rest.pop(0)
            choices = CLAUDE_VALUES[arg]
            if choices is not None and value not in choices:
                raise BadArgs(f"error: option '{arg}' argument '{value}' is invalid.", 1)
            opts[arg.lstrip("-")] = value
        else:
            raise BadArgs(f"error: unknown option '{arg}'", 1)
    sources = str(opts.get("setting-sources", "user,project,local"))
    for source in sources.split(","):
        if source and source not in ("user", "project", "local"):
            raise BadArgs(
                f"Error processing --setting-sources: Invalid setting source: {source}", 1
            )
    printing = opts.get("p") or opts.get("print")
    if printing and opts.get("output-format") == "stream-json" and not opts.get("verbose"):
        raise BadArgs(
            "Error: When using --print, --output-format=stream-json requires --verbose", 1
        )
    return opts


def parse_codex(args: list[str]) -> dict[str, object]:
    """clap's parsing of `codex exec`: `error: unexpected argument`, exit 2."""
    if not args or args[0] != "exec":
        raise BadArgs("fake codex: only `exec` is implemented", 2)
    opts: dict[str, object] = {"sandbox": None, "prompt": None}
    rest = args[1:]
    while rest:
        arg = rest.pop(0)
        if arg in ("--json", "--skip-git-repo-check", "--ephemeral", "--ignore-user-config"):
            opts[arg.lstrip("-")] = True
        elif arg in ("-s", "--sandbox"):
            value = rest.pop(0) if rest else ""
            if value not in ("read-only", "workspace-write", "danger-full-access"):
                raise BadArgs(f"error: invalid value '{value}' for '--sandbox <SANDBOX_MODE>'", 2)
            opts["sandbox"] = value
        elif arg in ("-m", "--model", "-c", "--config"):
            if not rest:
                raise BadArgs(f"error: a value is required for '{arg}'", 2)
            opts[arg.lstrip("-")] = rest.pop(0)
        elif arg == "-" or not arg.startswith("-"):
            if opts["prompt"] is not None:
                raise BadArgs(f"error: unexpected argument '{arg}' found", 2)
            opts["prompt"] = arg
        else:
            raise BadArgs(f"error: unexpected argument '{arg}' found", 2)
    return opts


def parse_llm(args: list[str]) -> dict[str, object]:
    """click's parsing of `llm [prompt]`: `Error: No such option`, exit 2."""
    opts: dict[str, object] = {}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in ("-n", "--no-log"):
            opts["no_log"] = True
        elif arg in ("-m", "--model", "-o", "--option"):
            opts["model"] = rest.pop(0)
        elif arg.startswith("-"):
            raise BadArgs(f"Error: No such option: {arg}", 2)
        else:
            opts["prompt"] = arg
    return opts


def parse_ollama(args: list[str]) -> dict[str, object]:
    """cobra's parsing of `ollama run MODEL`: `Error: unknown flag`, exit 1."""
    if not args or args[0] != "run":
        raise BadArgs("fake ollama: only `run` is implemented", 1)
    opts: dict[str, object] = {"model": None}
    rest = args[1:]
    while rest:
        arg = rest.pop(0)
        if arg == "--format":
            opts["format"] = rest.pop(0)
        elif arg in ("--hidethinking", "--experimental", "--yolo", "--verbose", "--insecure"):
            opts[arg.lstrip("-")] = True
        elif arg.startswith("--think"):
            opts["think"] = arg.partition("=")[2] or "true"
        elif arg.startswith("-"):
            raise BadArgs(f"Error: unknown flag: {arg}", 1)
        elif opts["model"] is None:
            opts["model"] = arg
    if opts["model"] is None:
        raise BadArgs("Error: accepts at least 1 arg(s), received 0", 1)
    return opts


PARSERS = {"claude": parse_claude, "codex": parse_codex, "llm": parse_llm, "ollama": parse_ollama}


def forever() -> None:
    while True:
        time.sleep(60)


def answer_text(prompt: str) -> str:
    return f"cwd={os.getcwd()}\nprompt={prompt}"


def claude(text: str) -> None:
    usage = {
        "input_tokens": 10,
        "cache_creation_input_tokens": 5,
        "cache_read_input_tokens": 3,
        "output_tokens": 7,
    }
    error = MODE.startswith("is-error")
    result = {
        "type": "result",
        "subtype": "error_during_execution" if error else "success",
        "is_error": error,
        "result": "API Error: 529 overloaded" if error else text,
        "usage": usage,
        "total_cost_usd": 0.0123,
        "permission_denials": [],
    }
    if MODE == "error-max-turns":  # no result, the reason in errors[]
        del result["result"]
        result.update(subtype="error_max_turns", is_error=False,
                      errors=["Reached maximum number of turns (3)"])  # fmt: skip
    if MODE == "denied":
        result["permission_denials"] = [
            {"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "git commit"}},
            {"tool_name": "Write", "tool_use_id": "t2", "tool_input": {"file_path": "x"}},
        ]
    if "stream-json" in ARGS:
        event({"type": "system", "subtype": "init", "cwd": os.getcwd()})
        event({"type": "assistant", "message": {"content": [{"type": "text", "text": "..."}]}})
        if MODE == "tool-echo":  # --verbose echoes every file a tool read: 9 MiB of them
            for n in range(9):
                content = f"file {n}: {{not json}} " + "y" * 2**20
                echo = {"type": "tool_result", "tool_use_id": f"t{n}", "content": content}
                event({"type": "user", "message": {"content": [echo]}})
        event(result)
    else:  # --output-format json: one object
        out(json.dumps(result))


def codex(text: str) -> None:
    event({"type": "thread.started", "thread_id": "t1"})
    event({"type": "turn.started"})
    event({"type": "item.completed", "item": {"id": "i0", "type": "reasoning", "text": "hm"}})
    event(
        {"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": "draft"}}
    )
    usage = {"input_tokens": 100, "cached_input_tokens": 50, "output_tokens": 20}
    event({"type": "turn.completed", "usage": usage})
    event({"type": "turn.started"})
    if MODE == "tool-echo":  # a command's whole output in item events: 9 MiB of them
        for n in range(9):
            output = "z" * 2**20
            item = {"id": f"c{n}", "type": "command_execution", "aggregated_output": output}
            event({"type": "item.updated", "item": item})
    event({"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": text}})
    # codex reports the thread's running total: this one includes the first turn.
    event({"type": "turn.completed", "usage": {"input_tokens": 130, "output_tokens": 25}})


def ollama(text: str) -> None:
    if "--format" in ARGS:
        lines = text.split("\n", 1)
        text = json.dumps({"cwd": lines[0][4:], "prompt": lines[1][7:]}, ensure_ascii=False)
    out("\x1b[?25l\u280b \x1b[?25h\x1b[2K\x1b[1G\x1b[?25l\u2819 \x1b[?25h\x1b[2K\x1b[1G")
    if MODE == "thinking" and "--hidethinking" not in ARGS:
        out('Thinking...\nThe user wants {"json": maybe} } braces {\n...done thinking.\n\n')
    out(f"\x1b[1m\x1b[32m{text}\x1b[0m\n\n")


def main() -> int:
    try:
        options = PARSERS[NAME](ARGS) if NAME in PARSERS else {}
    except BadArgs as err:
        record(name=NAME, argv=ARGS, refused=str(err.args[0]))
        sys.stderr.write(f"{err.args[0]}\n")
        return int(err.args[1])
    prompt = sys.stdin.buffer.read().decode("utf-8")
    record(
        name=NAME,
        argv=ARGS,
        options=options,
        cwd=os.getcwd(),
        prompt=prompt,
        pid=os.getpid(),
        git_index_file=os.environ.get("GIT_INDEX_FILE"),
        env=dict(os.environ),
    )
    if MODE.startswith("spawn"):
        inherit = MODE == "spawn-inherit"
        child = subprocess.Popen(
            ["sleep", "300"],
            stdin=subprocess.DEVNULL,
            stdout=None if inherit else subprocess.DEVNULL,
            stderr=None if inherit else subprocess.DEVNULL,
        )
        record(child=child.pid)
        if MODE == "spawn-hang":
            forever()
    if MODE == "crash":
        sys.stderr.write("Traceback (most recent call last):\nfake: error: model not found\n")
        return 1
    if MODE == "hang":
        forever()
    if MODE == "line-then-hang":
        out("thinking...\n")
        forever()
    if MODE == "chatty":
        while True:
            out(".\n")
            time.sleep(0.2)
    if MODE == "huge":
        block = "x" * 65536 + "\n"
        for _ in range(200):  # 12.5 MiB
            out(block)
        return 0
    if MODE == "empty":
        return 0
    text = answer_text(prompt)
    {"claude": claude, "codex": codex, "ollama": ollama}.get(NAME, out)(text)
    return 1 if MODE == "is-error-exit" else 0


if __name__ == "__main__":
    sys.exit(main())
