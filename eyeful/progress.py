"""How the core tells a front end what it is doing. The core never prints; the CLI listens."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from eyeful.runs import Run


class Progress(Protocol):
    def phase(self, text: str) -> None:
        """A new step of the run starts (snapshot, setup, tests on the change, ...)."""

    def started(self, label: str, command: str) -> None:
        """A project command starts; ``label`` says which and where."""

    def finished(self, run: Run) -> None:
        """A project command ended, or its result came from the cache."""


class Silent:
    """The default listener: hears everything, says nothing."""

    def phase(self, text: str) -> None:
        return None

    def started(self, label: str, command: str) -> None:
        return None

    def finished(self, run: Run) -> None:
        return None
