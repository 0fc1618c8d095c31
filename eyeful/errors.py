"""The errors eyeful expects, each tied to an exit code the user can rely on."""

from __future__ import annotations

# Exit codes are part of the interface (README, `-h`).
EXIT_OK = 0
EXIT_BLOCKING = 1
EXIT_USAGE = 2
EXIT_UNVERIFIED = 3
EXIT_INTERNAL = 4  # a bug in eyeful: never a verdict; the traceback is saved to a file
EXIT_INTERRUPTED = 130


class EyefulError(Exception):
    """Bad usage, configuration or input: one line for the user, exit 2, nothing half-done."""

    exit_code = EXIT_USAGE


class GitError(EyefulError):
    """A git call failed in a way the user has to fix (not a repository, unmerged paths, ...)."""


class MissingBase(GitError):
    """The base commit is not in the repository (a shallow clone, an unfetched ref): the change
    cannot be compared, so it could not be verified (exit 3), never compared with nothing."""

    exit_code = EXIT_UNVERIFIED
