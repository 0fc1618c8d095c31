"""SIGINT, SIGTERM and SIGHUP: the first one interrupts, the ones after are ignored.

Installed as the first thing the console script does (eyeful/cli/launch.py), before any import
that takes time, so an interrupt at any moment of a run is one line and exit 130, never a
traceback; and again by the review (eyeful/reaper.py), for a caller that imports eyeful. One
Ctrl-C on `git eyeful` delivers two (git forwards its own): the second must not cut short what the
first started, nor its message. A signal that whoever started eyeful ignored (``nohup``, a shell's
background job) stays ignored. Only the standard library's ``signal``: importing this costs
nothing.
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


def ignore_until_exit() -> None:
    """The run is over and its exit code decided: an interrupt from now on changes nothing.
    Set at the C level (``SIG_IGN``), because the interpreter's finalization puts a Python
    handler back to the default, and a second Ctrl-C arriving then would kill the process with
    no message and no exit code of ours."""
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
