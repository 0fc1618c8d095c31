"""The agent's transport a configuration names: a command, or an OpenAI-compatible endpoint."""

from __future__ import annotations

from typing import Literal

from eyeful.agents.providers import Provider
from eyeful.config import AgentConfig


def make_provider(
    config: AgentConfig, sandbox: Literal["auto", "require", "all"] = "auto"
) -> Provider:
    """The provider ``config`` describes; EyefulError when it cannot be built. ``sandbox``: the
    review's setting, which an agent's command follows (eyeful/agents/jail.py)."""
    if config.provider == "openai":
        from eyeful.agents.openai_provider import OpenAIProvider  # imports openai only if asked

        return OpenAIProvider(config)
    from eyeful.agents.command import CommandProvider

    return CommandProvider(config, sandbox)
