"""The files besides the configuration that decide what a review does: the user's confirmations
directory and the prompt overrides in `.eyeful/prompts/`.

Kept apart from trust.py (which reads the validated configuration, so pydantic) because the
replay (eyeful/cli/replay.py) fingerprints both and must start without pydantic, typer, rich or
pygit2: this module imports only the standard library and eyeful's plain file reading.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from eyeful.errors import EyefulError
from eyeful.inputfiles import read_regular

PROMPTS_DIR = Path(".eyeful") / "prompts"

OUTSIDE = "not used: it leads out of the repository"


def config_home() -> Path:
    """$XDG_CONFIG_HOME/eyeful, or ~/.config/eyeful."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "eyeful"


def prompt_overrides(root: Path) -> dict[str, str]:
    """`.eyeful/prompts/*.md` in the working tree: name -> SHA-256 of the content (or why it
    is not used: an override leading out of the repository through a symlink is not read)."""
    folder = root / PROMPTS_DIR
    out: dict[str, str] = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.iterdir()):
        if path.suffix != ".md":
            continue
        try:
            inside = path.resolve().is_relative_to(root.resolve())
        except (OSError, RuntimeError):  # a symlink loop
            out[path.name] = "not used: it cannot be resolved (a symlink loop)"
            continue
        if not inside:
            out[path.name] = OUTSIDE
            continue
        try:
            content = read_regular(path, path.name)
        except EyefulError as err:
            content = f"unreadable: {err}".encode()
        out[path.name] = hashlib.sha256(content).hexdigest()
    return out
