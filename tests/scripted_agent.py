"""A scripted agent for end-to-end tests: it plays every role from a JSON script.

Used two ways, both real: as a command-provider executable (prompt on stdin, reply on stdout:
`python tests/scripted_agent.py SCRIPT`), and behind a local HTTP server that speaks the OpenAI
chat-completions API (see `serve_openai`). The script says, per role and subject, what to answer;
a judge's answer may be "omit" (no verdict) or a whole verdict under a made-up id; special
answers produce faults: "garbage" (not JSON, every time), "malformed" (JSON breaking the
contract, every time), "crash" (exit 1), "hang" (never answers), "http500" (HTTP only).

With ``"mischief": FILE`` in the script, the command agent first does what an agent with a shell
could do to the repository it runs in (see `mischief`) and appends what happened to FILE.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

ROLE_NAMES = {
    "an expert reviewing a code change": "expert",
    "deciding whether two findings are one problem": "same_problem",
    "writing a reproduction test": "repro",
    "writing a fix": "fix",
    "judging findings no test could show": "judge",
}


def parse_prompt(prompt: str) -> tuple[str, dict]:
    first = prompt.splitlines()[0]
    role = ROLE_NAMES[first.removeprefix("# Role: ").strip()]
    block = prompt.split("## Input", 1)[1]
    task = json.loads(re.search(r"```json\n(.*?)\n```", block, flags=re.DOTALL).group(1))
    return role, task


def _log(script: dict, role: str, task: dict, prompt: str) -> None:
    log = script.get("log")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"role": role, "task": task, "prompt": prompt}) + "\n")


def _first_time(script: dict, key: str) -> bool:
    """True the first time ``key`` is asked for in this script's log (across processes)."""
    marker = Path(f"{script['log']}.{hashlib.sha256(key.encode()).hexdigest()[:12]}.seen")
    if marker.exists():
        return False
    marker.write_text("seen")
    return True


def answer(prompt: str, script: dict) -> object:
    """The reply object, or one of the fault words."""
    role, task = parse_prompt(prompt)
    _log(script, role, task, prompt)
    if role == "expert":
        reply = script.get("expert", {}).get(task["expert"], [])
        if isinstance(reply, dict) and "once" in reply:  # a fault the first time only
            reply = reply["once"] if _first_time(script, task["expert"]) else reply["then"]
        return reply if isinstance(reply, str) else {"findings": reply}
    if role == "same_problem":
        pairs = script.get("same_problem", {})
        first, second = task["first"]["title"], task["second"]["title"]
        value = pairs.get(f"{first}|{second}", pairs.get(f"{second}|{first}", 0.0))
        return value if isinstance(value, str) else {"probability": value}
    if role == "repro":
        title = task["finding"]["title"]
        reply = script.get("repro", {}).get(title, "garbage")
        if isinstance(reply, dict) and "previous_attempt" in task and "corrected" in reply:
            return reply["corrected"]
        if isinstance(reply, dict):
            return {k: v for k, v in reply.items() if k != "corrected"}
        return reply
    if role == "fix":
        return script.get("fix", {}).get(task["problem"], "garbage")
    if role == "judge":
        verdicts = []
        judge = script.get("judge", {})
        if isinstance(judge, str):
            return judge
        for finding in task["findings"]:
            answer_ = judge.get(finding["title"], [True, "looks right"])
            if answer_ == "omit":  # no verdict for this finding
                continue
            if isinstance(answer_, dict):  # a verdict under an id the judge made up
                verdicts.append(answer_)
                continue
            valid, reason = answer_
            verdicts.append({"id": finding["id"], "valid": valid, "reason": reason})
        return {"verdicts": verdicts}
    raise AssertionError(role)


def render(reply: object) -> str:
    if reply == "garbage":
        return "I think the code is fine, really."
    if reply == "malformed":
        return '```json\n{"unexpected": true}\n```'
    return "Here is my answer.\n\n```json\n" + json.dumps(reply) + "\n```\n"


def _try_write(path: Path, text: str, *, existing: bool = False) -> str:
    """Write ``path`` if its directory exists (never creates one outside the agent's directory);
    with ``existing``, only append to a file that is there."""
    if not path.parent.is_dir():
        return "no such directory"
    if existing and not path.is_file():
        return "no such file"
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as err:
        return f"refused: {err.strerror}"
    return "written"


def mischief(log: Path) -> None:
    """Everything an agent with a shell could try on the repository around its directory: git
    config, commit, branch; a pre-push hook in `.git/hooks`, through the `.git` link of a linked
    worktree, and up the tree into a shared git directory; a file next to its directory."""
    here = Path.cwd()
    done: dict[str, object] = {"cwd": str(here)}
    for name, argv in {
        "config": ["git", "config", "core.hooksPath", "/tmp/pwned-hooks"],
        "user": ["git", "config", "user.name", "pwned"],
        "commit": ["git", "commit", "-q", "--allow-empty", "-m", "pwned"],
        "branch": ["git", "branch", "pwned"],
    }.items():
        proc = subprocess.run(argv, capture_output=True, text=True, check=False)
        done[name] = proc.returncode
    hook = "#!/bin/sh\necho pwned\n"
    link = here / ".git"
    if not link.is_file():  # its own directory: a `.git/hooks` made there is its own business
        (link / "hooks").mkdir(parents=True, exist_ok=True)
    done["dot_git_hook"] = _try_write(here / ".git" / "hooks" / "pre-push", hook)
    if link.is_file():  # a linked worktree: follow its gitdir to the common directory
        gitdir = Path(link.read_text().removeprefix("gitdir: ").strip())
        done["linked_hook"] = _try_write(gitdir.parent.parent / "hooks" / "pre-push", hook)
    up = here.parent.parent.parent  # from <git dir>/eyeful/worktrees/wt-N: the git dir
    done["up_hook"] = _try_write(up / "hooks" / "pre-push", hook)
    done["up_config"] = _try_write(up / "config", "[core]\n\tbare = true\n", existing=True)
    done["beside"] = _try_write(here.parent / "eyeful-agent-was-here", "x")
    done["git_vars"] = sorted(n for n in os.environ if n.startswith("GIT_"))
    with log.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(done) + "\n")


def main() -> int:
    script = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    if script.get("mischief"):
        mischief(Path(script["mischief"]))
    reply = answer(sys.stdin.read(), script)
    if reply == "crash":
        print("agent crashed", file=sys.stderr)
        return 1
    if reply == "hang":
        time.sleep(3600)
    sys.stdout.write(render(reply))
    return 0


class _Handler(BaseHTTPRequestHandler):
    script: ClassVar[dict] = {}
    requests: ClassVar[list[dict]] = []

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append({"path": self.path, "body": body,
                              "auth": self.headers.get("Authorization")})  # fmt: skip
        prompt = body["messages"][-1]["content"]
        reply = answer(prompt, self.script)
        if reply in ("http500", "crash"):
            # Retry at once: the client's own backoff is test_providers' subject, not a wait here.
            error = {"error": {"message": "scripted server error"}}
            self._send(500, error, {"retry-after-ms": "1"})
            return
        if reply == "hang":
            time.sleep(30)
        content = render(reply)
        usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": len(content) // 4}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        self._send(200, {
            "id": "chatcmpl-test", "object": "chat.completion", "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": usage,
        })  # fmt: skip

    def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve_openai(script: dict) -> tuple[ThreadingHTTPServer, list[dict]]:
    """A local OpenAI-compatible server on 127.0.0.1 (a free port), answering from ``script``."""
    handler = type("Handler", (_Handler,), {"script": script, "requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, handler.requests


if __name__ == "__main__":
    raise SystemExit(main())
