"""The agent's transport a configuration names: a command, or an OpenAI-compatible endpoint."""

from __future__ import annotations

from eyeful.agents.providers import Provider
from eyeful.config import AgentConfig


def make_provider(config: AgentConfig) -> Provider:
    """The provider ``config`` describes; EyefulError when it cannot be built."""
    if config.provider == "openai":
        from eyeful.agents.openai_provider import OpenAIProvider  # imports openai only if asked

        return OpenAIProvider(config)
    from eyeful.agents.command import CommandProvider

    return CommandProvider(config)
