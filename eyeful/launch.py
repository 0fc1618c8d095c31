"""The console scripts' entry point: answers `--version` without importing the command line.

Importing typer, pydantic and the rest costs more than everything else a start does; a version
check needs none of it.
"""

from __future__ import annotations

import sys


def main() -> int:
    if sys.argv[1:] == ["--version"]:
        from eyeful import __version__

        print(f"eyeful {__version__}")
        return 0
    from eyeful.cli import main as cli_main

    return cli_main()
