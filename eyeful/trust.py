"""Which command sets the user confirmed, for which repository.

A record is SHA-256(repository path NUL digest of the commands). Records live in the user's config
directory (XDG), never in the repository, so a command set committed by someone else is never
confirmed by the act of cloning it.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from eyeful.config import Config
from eyeful.errors import EyefulError


def config_home() -> Path:
    """$XDG_CONFIG_HOME/eyeful, or ~/.config/eyeful."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "eyeful"


def commands_digest(config: Config) -> str:
    """What is confirmed: each command with its name; any change asks again."""
    digest = hashlib.sha256()
    items = config.commands.items() + (config.agent.digest_items() if config.agent else [])
    for name, command in items:
        digest.update(name.encode() + b"\0" + command.encode() + b"\0")
    return digest.hexdigest()


class TrustStore:
    """An append-only file of confirmation records."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or config_home() / "confirmed"

    def _record(self, root: Path, config: Config) -> str:
        key = str(root.resolve()).encode() + b"\0" + commands_digest(config).encode()
        return hashlib.sha256(key).hexdigest()

    def is_confirmed(self, root: Path, config: Config) -> bool:
        try:
            lines = self.path.read_text(encoding="ascii").split()
        except (FileNotFoundError, NotADirectoryError):
            return False
        return self._record(root, config) in lines

    def check_writable(self) -> None:
        """Fail now, before the commands are shown, when a confirmation could not be recorded."""
        existing = next(p for p in (self.path, *self.path.parents) if p.exists())
        if existing == self.path and self.path.is_file():
            return
        if existing != self.path and existing.is_dir():
            return
        raise EyefulError(
            f"cannot record confirmations in {self.path}: {existing} is not "
            f"{'a file' if existing == self.path else 'a directory'}; move it away "
            "(or set XDG_CONFIG_HOME)"
        )

    def confirm(self, root: Path, config: Config) -> None:
        if self.is_confirmed(root, config):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="ascii") as handle:
                handle.write(self._record(root, config) + "\n")
        except OSError as err:
            raise EyefulError(
                f"cannot record the confirmation in {self.path}: {err.strerror}; "
                "make that path a writable file (or set XDG_CONFIG_HOME)"
            ) from None
