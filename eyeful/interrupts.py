"""SIGINT, SIGTERM and SIGHUP: the first one interrupts, the ones after are ignored.

The console script installs the same handler as its first act (eyeful/cli/launch.py, through
the C module `_signal`, before any import that takes time), so an interrupt at any moment of a
run is one line and exit 130, never a traceback; the review installs this one (eyeful/reaper.py),
for a caller that imports eyeful. One Ctrl-C on `git eyeful` delivers two (git forwards its
own): the second must not cut short what the first started, nor its message. A signal that
whoever started eyeful ignored (``nohup``, a shell's background job) stays ignored.
"""

from __future__ import annotations

import signal
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def ignore(signum: int, frame: FrameType | None) -> None:
    """A repeated interrupt: the first one's cleanup is under way and must finish."""


def interrupted(signum: int, frame: FrameType | None) -> None:
    for sig in SIGNALS:
        signal.signal(sig, ignore)
    raise KeyboardInterrupt


def handle_interrupts() -> None:
    """Interrupt once, then ignore (main thread)."""
    for sig in SIGNALS:
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, interrupted)


def decided() -> None:
    """The exit code is decided (the report is being written): an interrupt from now on changes
    nothing. SIG_IGN, not a Python handler, which the interpreter's finalization would put back
    to the default. One that came before this call still interrupts here, before any output."""
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
