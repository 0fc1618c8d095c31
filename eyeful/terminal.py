"""stderr: messages, and progress with rich (phase, running command, elapsed time).

rich is imported only when stderr is a terminal (or TTY_COMPATIBLE / FORCE_COLOR ask for one):
hooks, CI and pipes get plain lines and no progress, and do not pay rich's start-up. rich itself
honours NO_COLOR. The core reports from worker threads: every update holds one lock, and a display
that fails turns itself off rather than change the exit code or lose the report.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from eyeful.runs import Run

_STYLE = {"PASSED": "green", "FAILED": "red", "ERROR": "yellow"}


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
        if self.rich:
            self.console.print(text, markup=False, highlight=False, emoji=False, soft_wrap=True)
            return
        try:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # a closed stderr cannot change the exit code


class RichProgress:
    """Implements :class:`eyeful.progress.Progress` on a rich console."""

    def __init__(self, stderr: Stderr) -> None:
        self.enabled = stderr.is_terminal
        console = stderr.console if self.enabled else None
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._lock = threading.Lock()
        if self.enabled:  # hooks, CI and pipes never show progress: skip the import there
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )

    def _safely(self, update: Callable[[Progress], None]) -> None:
        """Run one display update under the lock; a failing display is switched off."""
        with self._lock:
            bar = self._bar
            if bar is None:
                return
            try:
                update(bar)
            except Exception:
                # Progress is a courtesy: the review goes on, silently.
                self._bar = None
                with contextlib.suppress(Exception):
                    bar.stop()

    def __enter__(self) -> RichProgress:
        self._safely(lambda bar: bar.start())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._safely(lambda bar: bar.stop())

    def _show(self, text: str) -> None:
        def update(bar: Progress) -> None:
            if self._task is not None:
                bar.remove_task(self._task)
                self._task = None
            self._task = bar.add_task(text, total=None)

        self._safely(update)

    def phase(self, text: str) -> None:
        self._show(text)

    def started(self, label: str, command: str) -> None:
        self._show(f"{label}: {command}")

    def finished(self, run: Run) -> None:
        how = "cached" if run.cached else f"{run.duration:.1f}s"
        style = _STYLE.get(run.status, "")
        self._safely(
            lambda bar: bar.console.print(
                f"[{style}]{run.status}[/] {run.name} on the {run.side} ({how})", highlight=False
            )
        )


def ask_yes_no(question: str) -> bool:
    """Ask on stderr, read stdin; only y/yes accepts."""
    sys.stderr.write(f"{question} [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")
