"""Where an agent's command may write: bubblewrap around it (eyeful/sandbox.py), network kept.

The command (a preset CLI or the user's own) runs in its own pid namespace (``/proc`` shows it
nothing of eyeful's or the user's processes, and it dies with eyeful) with the filesystem
read-only, except (README "What untrusted code can do"):

- the export it works in (eyeful/agents/export.py), a copy made for it;
- a temporary directory of its own (``TMPDIR``), removed after the call;
- its CLI's own state (``STATE``: where each preset keeps its sessions, settings, logins), when
  that exists (claude's ``~/.claude.json``: a copy of the call's own); a custom command has
  none unless ``agent.writable`` names it.

The network stays: the CLI needs its API.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from eyeful import sandbox
from eyeful.config import AgentConfig

# Each preset's own state, under HOME unless its variable moves it (the CLIs' documentation).
STATE: dict[str, tuple[tuple[str | None, str], ...]] = {
    # ~/.claude.json is writable as a file: Claude Code's lock directory and temporary file
    # beside it are refused, and it falls back to writing the file in place (nikvdp/cco#23);
    # denied that file, it logs each failed write without end (anthropics/claude-code#27691).
    # Each call writes a copy of its own (_copies): calls run in parallel, and writes in place
    # would race on the user's file.
    "claude": (
        ("CLAUDE_CONFIG_DIR", ".claude"),
        (None, ".claude.json"),
        (None, ".local/state/claude"),  # its version locks
    ),
    "codex": (("CODEX_HOME", ".codex"),),
    "llm": (("LLM_USER_PATH", ".config/io.datasette.llm"),),
    "ollama": ((None, ".ollama"),),
}


def state_paths(config: AgentConfig, env: Mapping[str, str]) -> list[Path]:
    """The CLI's own state the command may write: the preset's, and ``agent.writable``."""
    home = Path(env.get("HOME") or Path("~").expanduser())
    paths = []
    for name, default in STATE.get(config.preset or "", ()):
        if name and env.get(name):
            paths.append(Path(env[name]))
        elif default.startswith(".config/") and env.get("XDG_CONFIG_HOME"):  # llm's click dir
            paths.append(Path(env["XDG_CONFIG_HOME"]) / default.removeprefix(".config/"))
        else:
            paths.append(home / default)
    return [*paths, *config.writable]


def _copies(config: AgentConfig, env: Mapping[str, str], tmp: Path) -> list[str]:
    """bwrap's binds of the state files a call gets a copy of, dropped with ``tmp``: claude's
    ``~/.claude.json`` (parallel calls would each rewrite the user's in place)."""
    if config.preset != "claude":
        return []
    original = Path(env.get("HOME") or Path("~").expanduser()) / ".claude.json"
    if not original.is_file():
        return []
    copy = tmp / "eyeful-claude.json"
    shutil.copyfile(original, copy)
    return ["--bind", str(copy), str(original.resolve())]


def jailed(argv: list[str], config: AgentConfig, env: Mapping[str, str], *, cwd: Path,
           tmp: Path) -> list[str]:  # fmt: skip
    """``argv`` under bwrap: writing only ``cwd``, ``tmp`` and the CLI's state; network kept."""
    out = sandbox.wrapped(argv, [cwd, tmp], network=True, may_be_missing=state_paths(config, env))
    at = out.index("--")  # the copies are bound over the originals: after them
    return [*out[:at], *_copies(config, env, tmp), *out[at:]]
