"""stderr: the CLI's messages, one plain line each, through rich only at a terminal.

rich is imported only when stderr is a terminal (or TTY_COMPATIBLE / FORCE_COLOR ask for one):
hooks, CI and pipes get plain lines and no progress (eyeful/cli/progress.py), and do not pay rich's
start-up. rich itself honours NO_COLOR.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def _wants_rich() -> bool:
    """Whether rich could treat stderr as a terminal: the variables rich reads, else isatty."""
    if os.environ.get("TTY_COMPATIBLE") in ("0", "1") or "FORCE_COLOR" in os.environ:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class Stderr:
    """Where the CLI's messages go: one plain line each, through rich only at a terminal."""

    errors_said = 0
    """Lines starting ``eyeful: error:`` said so far, by any instance (the CLI says one)."""

    def __init__(self) -> None:
        self._console: Console | None = None

    @functools.cached_property
    def rich(self) -> bool:
        """Decided on first use, not when the module is imported."""
        return _wants_rich()

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True, highlight=False)
        return self._console

    @property
    def is_terminal(self) -> bool:
        return self.rich and self.console.is_terminal

    def say(self, text: str) -> None:
        """One message, as given: no markup, never wrapped."""
        if text.startswith("eyeful: error:"):
            Stderr.errors_said += 1
        if self.rich:
            self.console.print(text, markup=False, highlight=False, emoji=False, soft_wrap=True)
            return
        try:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # a closed stderr cannot change the exit code


def ask_yes_no(question: str) -> bool:
    """Ask on stderr, read stdin; only y/yes accepts."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")
