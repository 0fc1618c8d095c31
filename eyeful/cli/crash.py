"""An unexpected internal error: its traceback saved to a file, outside the user's tree.

A crash must never look like a verdict to a hook (exit 0 or 1), nor flood the terminal: the CLI
prints one line naming the saved file and exits with EXIT_INTERNAL.
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

from eyeful import __version__


def save_traceback(error: BaseException) -> Path | None:
    """Write ``error``'s traceback to a new file in the temporary directory; None if that fails."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    text = "".join(traceback.format_exception(error))
    try:
        try:
            cwd = str(Path.cwd())
        except OSError:  # removed while eyeful ran
            cwd = "(removed)"
        header = f"eyeful {__version__}, pid {os.getpid()}, cwd {cwd}\n\n"
        fd, name = tempfile.mkstemp(prefix=f"eyeful-crash-{stamp}-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
            handle.write(header + text)
    except OSError:
        return None
    return Path(name)


def one_line(error: BaseException) -> str:
    """``Type: message`` on one line, shortened."""
    text = " ".join(str(error).split())
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
