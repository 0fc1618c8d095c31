"""What eyeful says when it runs as pre-commit's hook.

pre-commit installs eyeful in an environment of its own, so a pre-commit user has no `git eyeful`
on PATH: the way to confirm is the repository's second hook, `eyeful-confirm`, run on demand.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

CONFIRM_HOOK = "eyeful-confirm"


def under_pre_commit(env: Mapping[str, str] | None = None) -> bool:
    """Whether pre-commit started this process (it sets PRE_COMMIT=1 for its hooks)."""
    return bool((os.environ if env is None else env).get("PRE_COMMIT"))


def confirm_command(env: Mapping[str, str] | None = None) -> str:
    """The command that confirms the project's commands, from where eyeful was started."""
    if under_pre_commit(env):
        return f"pre-commit run --hook-stage manual {CONFIRM_HOOK}"
    return "git eyeful confirm"
