"""`git eyeful install-hook`: put the plain pre-push hook in place, never over someone else's."""

from __future__ import annotations

import contextlib
import os
from importlib import resources
from pathlib import Path

from eyeful.errors import EyefulError
from eyeful.gitutil import RepoPaths, git

MARKER = "eyeful-managed hook"


def hook_text() -> str:
    """The hook shipped in the wheel, or `hooks/pre-push` of a source checkout."""
    packaged = resources.files("eyeful") / "data" / "hooks" / "pre-push"
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    return (Path(__file__).resolve().parents[2] / "hooks" / "pre-push").read_text(encoding="utf-8")


def hooks_dir(paths: RepoPaths) -> Path:
    configured = git("config", "--get", "core.hooksPath", cwd=paths.root, check=False, hooks=True)
    value = configured.stdout.decode().strip()
    if configured.returncode == 0 and value:
        path = Path(value).expanduser()
        return path if path.is_absolute() else paths.root / path
    return paths.common_dir / "hooks"


def install_hook(paths: RepoPaths) -> Path:
    """Write the hook; refuse when a pre-push hook that is not eyeful's is there."""
    target = hooks_dir(paths) / "pre-push"
    if target.exists() or target.is_symlink():
        try:
            current = target.read_text(encoding="utf-8", errors="replace")
        except OSError:
            current = ""
        if MARKER not in current:
            raise EyefulError(
                f"{target} already exists and is not eyeful's: remove or rename it, or add "
                "`git-eyeful --base <remote sha> --head <local sha>` to it yourself"
            )
    directory = target.parent
    if directory.exists() and not directory.is_dir():
        raise EyefulError(
            f"{directory}, where git looks for hooks (core.hooksPath), is not a directory, so git "
            "runs no hooks: point core.hooksPath at a directory or unset it, then run this again"
        )
    temporary = directory / f".pre-push.eyeful-{os.getpid()}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        temporary.write_text(hook_text(), encoding="utf-8")
        temporary.chmod(0o755)
        temporary.replace(target)  # atomic: never a half-written hook, never through a symlink
    except OSError as err:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        raise EyefulError(f"cannot write {target}: {err.strerror or err}") from None
    return target
