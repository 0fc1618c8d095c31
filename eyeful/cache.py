"""Results keyed by what determines them (tree id, commands, setup inputs), stored as JSON files.

Writes go to a temporary file renamed into place, so a reader sees a whole entry or none, and two
eyeful processes never corrupt each other's entries.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from eyeful import __version__

T = TypeVar("T")


def cache_key(**parts: object) -> str:
    """A stable key: the version of eyeful and every part, in sorted order."""
    payload = json.dumps({"eyeful": __version__, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


Served = list[tuple[Path, str]]
"""Cache entries a review was served: each path with the SHA-256 of the bytes read from it."""


class Cache:
    def __init__(self, root: Path, *, read: bool = True, served: Served | None = None) -> None:
        self.root = root
        self.read = read
        """False for `--no-cache`: nothing is served from the cache (fresh results still go in)."""
        self.served = served
        """When given, every entry served is appended with the digest of what was read (a replayed
        review checks they are intact: eyeful/cli/replay.py)."""

    def shared_file(self, name: str) -> Path | None:
        """A file that a command eyeful runs reads and writes itself, whole (the probe's parsed
        sources: eyeful_probe_deps.Imports); None for `--no-cache`."""
        if not self.read:
            return None
        self.root.mkdir(parents=True, exist_ok=True)
        return self.root / f"{name}.json"

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str, parse: Callable[[dict[str, Any]], T]) -> T | None:
        """The entry for ``key`` read by ``parse``; None when there is none, or when it is not
        what ``parse`` takes (damaged, or written by another version): a miss, never a crash."""
        if not self.read:
            return None
        path = self._path(kind, key)
        try:
            raw = path.read_bytes()
            data = json.loads(raw.decode("utf-8"))
        except (FileNotFoundError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        try:
            value = parse(data)
        except (ValueError, KeyError, TypeError):  # pydantic's ValidationError is a ValueError
            return None
        if self.served is not None:
            self.served.append((path, hashlib.sha256(raw).hexdigest()))
        return value

    def put(self, kind: str, key: str, value: dict[str, Any]) -> None:
        path = self._path(kind, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(value, handle)
            Path(tmp).replace(path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
