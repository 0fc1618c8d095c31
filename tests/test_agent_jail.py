"""Agent commands run in a sandbox (issue 21, point 2): in a pid namespace of their own, with the
filesystem read-only except the export, their TMPDIR and their CLI's state; the network stays.
Where no sandbox can be had, the review says so, and `sandbox = "require"` exits 3."""

from __future__ import annotations

import json
import os
import shlex
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from eyeful import sandbox
from eyeful.agents.command import CommandProvider
from eyeful.agents.jail import state_paths
from eyeful.agents.providers import ProviderError
from eyeful.config import AgentConfig
from tests.gitrepo import confirm, eyeful, eyeful_config, make_repo, report_json, stage

needs_bwrap = pytest.mark.skipif(
    sandbox.unavailable() is not None,
    reason=f"no sandbox here: {sandbox.unavailable()} (.ci/run installs bubblewrap as root)",
)

# What a command agent with a shell tries (the adversarial run of issue 21): each attempt is
# printed as one JSON line, {"what": ..., "ok": bool, "detail": ...}.
PROBE = r"""
import json, os, sys, urllib.request
targets = json.loads(sys.argv[1])
sys.stdin.read()
out = {}
def attempt(what, action):
    try:
        out[what] = [True, str(action())]
    except Exception as err:
        out[what] = [False, f"{type(err).__name__}: {err}"]
def write(path):
    with open(path, "w") as handle:
        handle.write("agent was here")
    return path
for name, path in targets.get("write", {}).items():
    attempt("write " + name, lambda path=path: write(path))
attempt("write TMPDIR", lambda: write(os.path.join(os.environ["TMPDIR"], "scratch")))
pid = targets.get("pid")
if pid:
    attempt("environ", lambda: open(f"/proc/{pid}/environ", "rb").read())
    attempt("cwd", lambda: os.readlink(f"/proc/{pid}/cwd"))
    attempt("write through cwd", lambda: write(f"/proc/{pid}/cwd/through-proc"))
attempt("pids", lambda: sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
url = targets.get("url")
if url:
    attempt("network", lambda: urllib.request.urlopen(url, timeout=10).read().decode())
print(json.dumps(out))
"""


def _probe(tmp_path: Path, targets: dict, **fields: object) -> dict[str, list]:
    script = tmp_path / "probe.py"
    script.write_text(PROBE, encoding="utf-8")
    export = tmp_path / "export"
    export.mkdir(exist_ok=True)
    command = " ".join(shlex.quote(part) for part in
                       [sys.executable, str(script), json.dumps(targets)])  # fmt: skip
    provider = CommandProvider(AgentConfig(command=command, timeout=60, **fields))
    reply = provider.complete("review this", cwd=export)
    result: dict[str, list] = json.loads(reply.text)
    return result


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A user's repository and HOME, and a secret in eyeful's environment."""
    home = tmp_path / "home"
    home.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("EYEFUL_TEST_SECRET", "s3cret-for-the-jail-test")
    monkeypatch.chdir(repo)  # eyeful's cwd: the user's repository
    return {"home": home, "repo": repo}


@needs_bwrap
def test_an_agent_command_writes_only_its_export_tmpdir_and_state(tmp_path, user):
    state = tmp_path / "state"
    state.mkdir()
    writes = {
        "export": str(tmp_path / "export" / "notes.txt"),
        "state": str(state / "session.json"),
        "repository": str(user["repo"] / "planted.py"),
        "home": str(user["home"] / ".bashrc"),
        "git hooks": str(user["repo"] / ".git-hooks-post-checkout"),
    }
    seen = _probe(tmp_path, {"write": writes}, writable=(state,))
    assert seen["write export"][0] and seen["write state"][0], seen
    assert seen["write TMPDIR"][0], seen
    for name in ("repository", "home", "git hooks"):
        ok, detail = seen[f"write {name}"]
        assert not ok and "Read-only file system" in detail, (name, detail)
        assert not Path(writes[name]).exists()
    assert (state / "session.json").read_text() == "agent was here"
    # TMPDIR was the call's own, and is gone with it.
    assert not Path(seen["write TMPDIR"][1]).parent.exists()


@needs_bwrap
def test_a_preset_writes_its_own_state_only(tmp_path, user):
    """A preset CLI (here `codex`, whose state is ~/.codex) may write its state, not the rest of
    HOME; a state directory the user does not have stays absent (nothing is made for it)."""
    (user["home"] / ".codex").mkdir()
    writes = {
        "codex state": str(user["home"] / ".codex" / "session.jsonl"),
        "claude state": str(user["home"] / ".claude" / "x"),
        "home": str(user["home"] / "elsewhere"),
    }
    script = tmp_path / "probe.py"
    script.write_text(PROBE, encoding="utf-8")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} "
    command += shlex.quote(json.dumps({"write": writes}))
    export = tmp_path / "export"
    export.mkdir()
    # The preset's command line is the test's: what it may write is the preset's.
    provider = CommandProvider(AgentConfig(preset="codex", command=command, timeout=60))
    seen = json.loads(provider._run(command, "hi", export).stdout)
    assert seen["write codex state"][0], seen
    assert not seen["write claude state"][0] and not seen["write home"][0], seen
    assert not (user["home"] / ".claude").exists()


@needs_bwrap
def test_an_agent_command_sees_none_of_eyefuls_processes(tmp_path, user):
    seen = _probe(tmp_path, {"pid": os.getpid(), "write": {}})
    ok, detail = seen["environ"]
    assert not ok and "s3cret" not in detail, detail
    assert not seen["cwd"][0], seen["cwd"]
    assert not seen["write through cwd"][0]
    assert not (user["repo"] / "through-proc").exists()
    ok, pids = seen["pids"]
    assert ok
    assert len(json.loads(pids)) <= 4, pids  # bwrap's init, sh, python: nothing else


@pytest.fixture
def server() -> Iterator[str]:
    class Hello(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"hello from the host"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


@needs_bwrap
def test_an_agent_command_keeps_the_network(tmp_path, user, server):
    seen = _probe(tmp_path, {"url": server})
    assert seen["network"] == [True, "hello from the host"], seen


# --- where there is no sandbox -------------------------------------------------------------------


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    tools = tmp_path / "tools"
    tools.mkdir()
    monkeypatch.setenv("PATH", str(tools))
    sandbox.unavailable.cache_clear()
    try:
        assert "not installed" in (sandbox.unavailable() or "")
        yield
    finally:
        monkeypatch.undo()
        sandbox.unavailable.cache_clear()


def test_without_bwrap_auto_runs_the_agent_unsandboxed(tmp_path, user, no_bwrap):
    seen = _probe(tmp_path, {"write": {"repository": str(user["repo"] / "planted.py")}})
    assert seen["write repository"][0], seen  # nothing stopped it: the review says so


def test_without_bwrap_require_refuses_to_run_the_agent(tmp_path, user, no_bwrap):
    script = tmp_path / "ran"
    provider = CommandProvider(AgentConfig(command=f"touch {script}"), "require")
    with pytest.raises(ProviderError, match=r"no sandbox for the agent's command .*not installed"):
        provider.complete("hi", cwd=tmp_path)
    assert not script.exists()


def _path_without_bwrap(tmp_path: Path) -> str:
    import shutil

    tools = tmp_path / "review-tools"
    tools.mkdir()
    for name in ("git", "sh", "env"):
        found = shutil.which(name)
        assert found is not None
        (tools / name).symlink_to(found)
    bin_dir = str(Path(shutil.which("git-eyeful") or "").parent)
    return os.pathsep.join([bin_dir, str(tools)])


@pytest.mark.parametrize("mode", ["auto", "require"])
def test_without_bwrap_the_review_says_so_and_require_exits_3(tmp_path, mode):
    ran = tmp_path / "agent-ran"
    agent = f'[tool.eyeful.agent]\ncommand = "echo > {ran}"\nexperts = ["correctness"]\n'
    config = eyeful_config(extra=f'sandbox = "{mode}"') + agent
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, "calc.py": "x = 1\n"})
    confirm(repo)
    stage(repo, {"calc.py": "x = 2\n"})
    env = {**os.environ, "PATH": _path_without_bwrap(tmp_path)}
    proc = eyeful("--format", "json", cwd=repo, env=env)
    uncertainty = report_json(proc)["uncertainty"]
    texts = [u["text"] for u in uncertainty]
    if mode == "auto":
        [note] = [u for u in uncertainty if "the agent's command ran unsandboxed: bubblewrap"
                  in u["text"]]  # fmt: skip
        assert not note["unverified"]  # the agent's word is checked all the same
        assert ran.exists()
    else:
        assert any(
            "the agent's command could not run (sandbox is required): bubblewrap" in t
            for t in texts
        ), texts
        assert not ran.exists()
        assert proc.returncode == 3


@pytest.mark.parametrize("path", ["relative/state", "/"])
def test_agent_writable_must_be_an_absolute_directory(path):
    with pytest.raises(ValueError, match=r"(?s)writable.*must be an absolute directory"):
        AgentConfig(command="true", writable=(path,))


@pytest.mark.parametrize(
    ("preset", "env", "expected"),
    [
        ("codex", {"HOME": "/h"}, ["/h/.codex"]),
        ("codex", {"HOME": "/h", "CODEX_HOME": "/c"}, ["/c"]),
        ("claude", {"HOME": "/h"}, ["/h/.claude", "/h/.claude.json", "/h/.local/state/claude"]),
        ("llm", {"HOME": "/h"}, ["/h/.config/io.datasette.llm"]),
        ("llm", {"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, ["/x/io.datasette.llm"]),
        ("llm", {"HOME": "/h", "LLM_USER_PATH": "/l"}, ["/l"]),
    ],
)
def test_each_preset_names_its_own_state(preset, env, expected):
    assert [str(p) for p in state_paths(AgentConfig(preset=preset), env)] == expected


@pytest.mark.parametrize("path", ["~", "~/..", "/home/../", "/"])
def test_agent_writable_never_holds_all_of_home(path):
    with pytest.raises(ValueError, match=r"(?s)writable.*(holds all of HOME|not /)"):
        AgentConfig(command="true", writable=(path,))
    assert AgentConfig(command="true", writable=("~/.gemini",)).writable[0].name == ".gemini"


def test_what_an_agent_may_write_is_part_of_what_is_confirmed():
    """`agent.writable` widens the agent's sandbox: a change to it asks for confirmation again,
    as a change to its command does."""
    from eyeful.cli.reviewcmd import to_confirm
    from eyeful.config import Config

    plain = Config(agent=AgentConfig(command="gemini -p"))
    wider = Config(agent=AgentConfig(command="gemini -p", writable=("/srv/gemini",)))
    assert ("agent.writable", "/srv/gemini") in to_confirm(wider)
    assert to_confirm(plain) == [i for i in to_confirm(wider) if i[0] != "agent.writable"]


@needs_bwrap
def test_claude_writes_a_copy_of_claude_json_of_its_own(tmp_path, user):
    """Experts run in parallel: each claude call writes a copy of ~/.claude.json (Claude Code
    writes it in place in the sandbox), never the user's file; ~/.claude is its own."""
    (user["home"] / ".claude").mkdir()
    (user["home"] / ".claude.json").write_text('{"numStartups": 1}')
    writes = {"claude json": str(user["home"] / ".claude.json"),
              "claude dir": str(user["home"] / ".claude" / "session.jsonl")}  # fmt: skip
    script = tmp_path / "probe.py"
    script.write_text(PROBE, encoding="utf-8")
    command = shlex.join([sys.executable, str(script), json.dumps({"write": writes})])
    export = tmp_path / "export"
    export.mkdir()
    provider = CommandProvider(AgentConfig(preset="claude", command=command, timeout=60))
    seen = json.loads(provider._run(command, "hi", export).stdout)
    assert seen["write claude json"][0] and seen["write claude dir"][0], seen
    assert (user["home"] / ".claude.json").read_text() == '{"numStartups": 1}'
    assert (user["home"] / ".claude" / "session.jsonl").read_text() == "agent was here"


# What the adversarial run's command agent tried, through `git eyeful` itself: every process it
# can see, for eyeful's secret and for a working directory in the user's repository.
SCAN = r"""
import json, os, sys
args = json.loads(sys.argv[1])
sys.stdin.read()
secret, repo_cwd, writes = [], [], {}
for entry in (e for e in os.listdir("/proc") if e.isdigit()):
    try:
        if args["secret"].encode() in open(f"/proc/{entry}/environ", "rb").read():
            secret.append(entry)
        if os.readlink(f"/proc/{entry}/cwd").startswith(args["repo"]):
            repo_cwd.append(entry)
    except OSError:
        pass
for path in args["write"]:
    try:
        with open(path, "w") as handle:
            handle.write("agent was here")
        writes[path] = "written"
    except OSError as err:
        writes[path] = err.strerror
with open(args["out"], "w") as handle:
    json.dump({"secret": secret, "repo_cwd": repo_cwd, "writes": writes}, handle)
print(json.dumps({"findings": []}))
"""


@pytest.mark.parametrize("sandboxed", [pytest.param(True, marks=needs_bwrap), False])
def test_through_git_eyeful_the_agent_finds_no_secret_and_no_way_into_the_repository(
    tmp_path, sandboxed
):
    """eyeful started with a secret in its environment, in the user's repository; its agent
    command looks through /proc for both. Unsandboxed (no bwrap on PATH) the same scan finds
    them: the test can tell."""
    state = tmp_path / "agent-state"
    state.mkdir()
    repo = make_repo(tmp_path / "user", {"pyproject.toml": eyeful_config(), "a.py": "x = 1\n"})
    out = state / "seen.json"
    targets = [repo / "pwned.txt", repo / ".git" / "hooks" / "post-checkout"]
    args = {"write": [str(t) for t in targets], "secret": "s3cret-of-eyeful",
            "repo": str(repo), "out": str(out)}  # fmt: skip
    scan = tmp_path / "scan.py"
    scan.write_text(SCAN, encoding="utf-8")
    command = shlex.join([sys.executable, str(scan), json.dumps(args)])
    pyproject = repo / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text()
        + f'\n[tool.eyeful.agent]\ncommand = {json.dumps(command)}\nexperts = ["correctness"]\n'
        + f"writable = [{json.dumps(str(state))}]\n"
    )
    confirm(repo)
    stage(repo, {"a.py": "x = 2\n"})
    env = {**os.environ, "EYEFUL_TEST_TOKEN": "s3cret-of-eyeful"}
    if not sandboxed:
        env["PATH"] = _path_without_bwrap(tmp_path)
    proc = eyeful("--format", "json", "--level", "read_only", cwd=repo, env=env)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(out.read_text())
    if not sandboxed:
        assert seen["secret"] and seen["repo_cwd"], seen
        return
    assert seen["secret"] == [] and seen["repo_cwd"] == [], seen
    assert all(seen["writes"][str(t)] == "Read-only file system" for t in targets), seen
    assert not any(t.exists() for t in targets)
