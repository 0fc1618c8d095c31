"""The environment an agent command gets: what its CLI needs, not the user's whole environment.

An agent reads a change that may be someone else's; every token in the user's environment
(cloud keys, GitHub tokens, database passwords) is out of its reach unless it is listed here.
Kept (README "What an agent can do"):

- always: ``PATH``, ``HOME``, ``USER``, ``LOGNAME``, ``TMPDIR``, ``TERM``, the locale (``LANG``,
  ``LANGUAGE``, ``LC_*``), the XDG base directories, the proxy settings (``HTTP(S)_PROXY``,
  ``ALL_PROXY``, ``NO_PROXY``, either case) and the CA bundles (``SSL_CERT_FILE``,
  ``SSL_CERT_DIR``, ``REQUESTS_CA_BUNDLE``, ``NODE_EXTRA_CA_CERTS``);
- the variable ``agent.api_key_env`` names;
- per preset, the CLI's own settings and credentials (``_PRESET_VARS``).

No ``GIT_*`` variable is kept: the agent has no repository to point at.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from eyeful.config import AgentConfig
from eyeful.shell import project_env

_ALWAYS = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "TMPDIR",
        "TERM",
        "LANG",
        "LANGUAGE",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "XDG_RUNTIME_DIR",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
    }
)
_PROXIES = frozenset({"http_proxy", "https_proxy", "all_proxy", "no_proxy"})

# What each CLI reads for its configuration and its credentials (their documentation).
_PRESET_VARS: dict[str, frozenset[str]] = {
    "claude": frozenset(
        {
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
            "CLAUDE_CONFIG_DIR",
            "CLAUDE_CODE_USE_BEDROCK",
            "CLAUDE_CODE_USE_VERTEX",
        }
    ),
    "codex": frozenset({"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"}),
    "llm": frozenset({"LLM_USER_PATH", "OPENAI_API_KEY"}),
    "ollama": frozenset({"OLLAMA_HOST"}),
}


def kept(name: str, config: AgentConfig) -> bool:
    """Whether the variable ``name`` reaches the agent ``config`` describes."""
    if name in _ALWAYS or name.lower() in _PROXIES or name.startswith("LC_"):
        return True
    if config.api_key_env and name == config.api_key_env:
        return True
    return bool(config.preset) and name in _PRESET_VARS.get(config.preset or "", frozenset())


def agent_env(config: AgentConfig, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the agent's command: :func:`project_env` (PATH without pre-commit's
    own virtualenv), less everything :func:`kept` does not name."""
    env = project_env(os.environ if base is None else base)
    return {name: value for name, value in env.items() if kept(name, config)}
