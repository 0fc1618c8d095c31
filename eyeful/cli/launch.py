"""The console scripts' entry point: imports only what the command line asks for.

Importing typer, pydantic and the rest costs more than everything else a start does, so:
`--version` needs none of it, and the review's command lines run before every push (none at all,
from pre-commit's hook or a developer; `--hook --base ID --head ID` from the plain hook) and
`--format json` alone (scripts, CI) go straight to the review, without typer
(eyeful/cli/reviewcmd.py); every other command line is parsed by the CLI (eyeful/cli/app.py) into
the same options.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # the C module: no `enum` to import
import sys

from eyeful.errors import EXIT_INTERRUPTED


def main() -> int:
    try:
        # First, before any import that takes time (even the standard library's `signal`, which
        # imports `enum`): an interrupt from here on is one line and exit 130 (README, "Exit
        # codes"), and a second one (git forwards Ctrl-C) is ignored.
        _interrupt_once()
        return _main()
    except KeyboardInterrupt:
        try:
            sys.stderr.write("eyeful: error: interrupted\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        return EXIT_INTERRUPTED
    finally:
        # The exit code is decided: an interrupt from now on changes nothing. SIG_IGN, not a
        # Python handler, which the interpreter's finalization would put back to the default.
        for sig in _SIGNALS:
            _signal.signal(sig, _signal.SIG_IGN)


_SIGNALS = (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)


def _ignore(signum: int, frame: object) -> None:
    """A repeated interrupt: the first one's message and cleanup must finish."""


def _interrupted(signum: int, frame: object) -> None:
    for sig in _SIGNALS:
        _signal.signal(sig, _ignore)
    raise KeyboardInterrupt


def _interrupt_once() -> None:
    """eyeful/interrupts.py's handler, through the C module: the first interrupt raises, the
    later ones are ignored, one ignored when eyeful started stays ignored."""
    for sig in _SIGNALS:
        if _signal.getsignal(sig) is not _signal.SIG_IGN:
            _signal.signal(sig, _interrupted)


def _main() -> int:
    args = sys.argv[1:]
    if args == ["--version"]:
        from eyeful import __version__

        print(f"eyeful {__version__}")
        return 0
    if not args or args[0] in ("--hook", "--format") or args[0].startswith("--format="):
        from eyeful.cli.reviewcmd import main_quick, quick_options

        options = quick_options(args)
        if options is not None:
            return main_quick(options, args)
    from eyeful.cli.app import main as cli_main

    return cli_main()
