"""The console scripts' entry point: imports only what the command line asks for.

Importing typer, pydantic and the rest costs more than everything else a start does, so:
`--version` needs none of it, and the review's command lines run before every push (none at all,
from pre-commit's hook or a developer; `--hook --base ID --head ID` from the plain hook) go
straight to the review, without typer (eyeful/cli/reviewcmd.py); every other command line is parsed
by the CLI (eyeful/cli/app.py) into the same options.
"""

from __future__ import annotations

import sys

from eyeful.errors import EXIT_INTERRUPTED


def main() -> int:
    # First, before any import that takes time: an interrupt from here on is one line and exit
    # 130 (README, "Exit codes"), and a second one (git forwards Ctrl-C) is ignored.
    from eyeful.interrupts import handle_interrupts, ignore_until_exit

    handle_interrupts()
    try:
        return _main()
    except KeyboardInterrupt:
        try:
            sys.stderr.write("eyeful: error: interrupted\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        return EXIT_INTERRUPTED
    finally:
        ignore_until_exit()


def _main() -> int:
    args = sys.argv[1:]
    if args == ["--version"]:
        from eyeful import __version__

        print(f"eyeful {__version__}")
        return 0
    if not args or args[0] == "--hook":
        from eyeful.cli.reviewcmd import main_quick, quick_options

        options = quick_options(args)
        if options is not None:
            return main_quick(options, args)
    from eyeful.cli.app import main as cli_main

    return cli_main()
