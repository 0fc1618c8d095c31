"""The console scripts' entry point: imports only what the command line asks for.

Importing typer, pydantic and the rest costs more than everything else a start does, so:
`--version` needs none of it, and `git eyeful` with no arguments (what pre-commit's hook and a
developer run before every push) goes straight to the review, without typer; every other command
line is parsed by the CLI (eyeful/cli.py) into the same options.
"""

from __future__ import annotations

import sys


def main() -> int:
    args = sys.argv[1:]
    if args == ["--version"]:
        from eyeful import __version__

        print(f"eyeful {__version__}")
        return 0
    if not args:
        from eyeful.reviewcmd import main_plain

        return main_plain()
    from eyeful.cli import main as cli_main

    return cli_main()
