#!/usr/bin/env python3
"""A fake `claude`, `codex`, `llm` or `ollama` CLI for tests/test_providers.py.

tests/test_providers.py installs it on PATH under those names (each a tiny launcher run by the
test's own interpreter). The name decides the output format, the environment the behaviour:

FAKE_AGENT_MODE   ok (default) | crash | hang | line-then-hang | chatty | huge | is-error |
                  is-error-exit |
                  spawn | spawn-hang | spawn-inherit | empty
FAKE_AGENT_LOG    a file to write a JSON record to: argv, cwd, the prompt as received, whether
                  GIT_INDEX_FILE was set, this process's pid and the pid of a spawned child.

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
        "total_cost_usd": 0.01,
    }
    if "stream-json" in ARGS:
        event({"type": "system", "subtype": "init", "cwd": os.getcwd()})
        event({"type": "assistant", "message": {"content": [{"type": "text", "text": "..."}]}})
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
    event({"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": text}})
    event({"type": "turn.completed", "usage": {"input_tokens": 30, "output_tokens": 5}})


def ollama(text: str) -> None:
    if "--format" in ARGS:
        lines = text.split("\n", 1)
        text = json.dumps({"cwd": lines[0][4:], "prompt": lines[1][7:]}, ensure_ascii=False)
    out("\x1b[?25l\u280b \x1b[?25h\x1b[2K\x1b[1G\x1b[?25l\u2819 \x1b[?25h\x1b[2K\x1b[1G")
    out(f"\x1b[1m\x1b[32m{text}\x1b[0m\n\n")


def main() -> int:
    prompt = sys.stdin.buffer.read().decode("utf-8")
    record(
        name=NAME,
        argv=ARGS,
        cwd=os.getcwd(),
        prompt=prompt,
        pid=os.getpid(),
        git_index_file=os.environ.get("GIT_INDEX_FILE"),
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
