"""Progress on stderr with rich: the phase, the running command, elapsed time.

Shown only when stderr is a terminal. The core reports from worker threads: every update holds one
lock, and a display that fails turns itself off rather than change the exit code or lose the report.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

from eyeful.cli.terminal import Stderr

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from eyeful.runs import Run

_STYLE = {"PASSED": "green", "FAILED": "red", "ERROR": "yellow"}


class RichProgress:
    """Implements :class:`eyeful.runs.Progress` on a rich console."""

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
