"""The command line: entry points and everything that talks to a terminal."""
