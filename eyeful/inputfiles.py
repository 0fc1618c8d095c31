"""Reading a file the user named or the repository holds: a regular file only, never waited on.

A FIFO would block the read until someone writes to it (forever, in a hook), a device such as
`/dev/zero` never ends, and a directory, a dangling symlink or a symlink loop is no file at all:
each is a one-line error naming the file, exit 2, before anything runs. The open itself cannot
block (``O_NONBLOCK``: a FIFO with no writer opens at once, and is refused by its type).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from eyeful.errors import EyefulError

MIB = 1024 * 1024


def kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def read_regular(path: Path, name: str, *, limit: int | None = None) -> bytes:
    """The bytes of ``path``, which must be a regular file (through symlinks) of at most
    ``limit`` bytes; otherwise an :class:`EyefulError` starting with ``name``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        if path.is_symlink():
            raise EyefulError(
                f"{name}: is a symbolic link to {path.readlink()}, which does not exist"
            ) from None
        raise EyefulError(f"{name}: does not exist") from None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise EyefulError(f"{name}: is a symbolic link loop; make it a file") from None
        raise EyefulError(f"{name}: cannot read it: {err.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise EyefulError(f"{name}: not a regular file ({kind(info.st_mode)}); give a file")
        if limit is not None and info.st_size > limit:
            raise EyefulError(f"{name}: larger than {limit // MIB} MiB, the limit")
        chunks = []
        left = limit + 1 if limit is not None else None
        while left is None or left > 0:
            chunk = os.read(fd, MIB if left is None else min(MIB, left))
            if not chunk:
                break
            chunks.append(chunk)
            if left is not None:
                left -= len(chunk)
        data = b"".join(chunks)
        if limit is not None and len(data) > limit:  # it grew while being read
            raise EyefulError(f"{name}: larger than {limit // MIB} MiB, the limit")
        return data
    except OSError as err:
        raise EyefulError(f"{name}: cannot read it: {err.strerror}") from None
    finally:
        os.close(fd)


def exists(path: Path) -> bool:
    """Whether anything is at ``path``, a dangling or looping symlink included."""
    return os.path.lexists(path)
