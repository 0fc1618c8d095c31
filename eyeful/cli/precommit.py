"""What eyeful says when it runs as pre-commit's hook.

pre-commit installs eyeful in an environment of its own, so a pre-commit user has no `git eyeful`
on PATH: the way to confirm is the repository's second hook, `eyeful-confirm`, run on demand.
How to reach it depends on where the `eyeful` hook came from:

- the repository's `.pre-commit-config.yaml` lists `eyeful-confirm`:
  `pre-commit run --hook-stage manual eyeful-confirm`;
- it does not (`pre-commit try-repo`, a configuration elsewhere, or one with the `eyeful` hook
  only): the same hook through `pre-commit try-repo`, from the repository and commit pre-commit
  installed this eyeful from (its environment lives in pre-commit's clone of that repository);
- neither is known: add the hook to the configuration, then run it.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

CONFIRM_HOOK = "eyeful-confirm"
CONFIG_FILE = ".pre-commit-config.yaml"
MANIFEST_FILE = ".pre-commit-hooks.yaml"
_RUN_CONFIRM = f"pre-commit run --hook-stage manual {CONFIRM_HOOK}"
_LISTED = re.compile(rf"^[ \t]*(?:-[ \t]+)?id:[ \t]*(['\"]?){CONFIRM_HOOK}\1[ \t]*(?:#.*)?$", re.M)
_MAX_CONFIG_BYTES = 1 << 20
_MAX_URL = 400
_ENV_PREFIX = "py_env-"  # pre-commit's python environments: <clone>/py_env-<version>


def under_pre_commit(env: Mapping[str, str] | None = None) -> bool:
    """Whether pre-commit started this process (it sets PRE_COMMIT=1 for its hooks)."""
    return bool((os.environ if env is None else env).get("PRE_COMMIT"))


def confirm_hint(
    root: Path, env: Mapping[str, str] | None = None, prefix: str | None = None
) -> str:
    """What to do to confirm the project's commands, from where eyeful was started: "run `...`"
    (or, when no command can be known, what to add first). ``prefix`` is the environment eyeful
    runs in (``sys.prefix``)."""
    if not under_pre_commit(env):
        return "run `git eyeful confirm`"
    if lists_confirm_hook(root):
        return f"run `{_RUN_CONFIRM}`"
    source = hook_source(Path(sys.prefix if prefix is None else prefix))
    if source is not None:
        return f"run `{_try_repo(*source)}`"
    add = f"add `- id: {CONFIRM_HOOK}` to eyeful's hooks in {CONFIG_FILE}"
    return f"{add}, then run `{_RUN_CONFIRM}`"


def lists_confirm_hook(root: Path) -> bool:
    """Whether the repository's pre-commit configuration has an `id: eyeful-confirm` line (block
    style, as the README's snippet; a commented-out line does not count). Only a regular file
    at the top of the repository is read."""
    path = root / CONFIG_FILE
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > _MAX_CONFIG_BYTES:
            return False
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return _LISTED.search(text) is not None


def hook_source(prefix: Path) -> tuple[str, str] | None:
    """The repository URL and commit pre-commit installed this eyeful from, or None.

    pre-commit makes a python hook's environment, `py_env-<version>`, inside its clone of the
    hook's repository (`origin` is the repository as configured, a local path made absolute);
    that clone holds eyeful's manifest. The URL is read as configured (not as `insteadOf`
    rewrites it, which is often how a token gets in) and is only printed, never run. See
    :func:`_pasteable` for the URLs left out; so is try-repo's copy of uncommitted changes
    (beside the clone, gone once try-repo ends).
    """
    if not prefix.name.startswith(_ENV_PREFIX):
        return None  # not a python hook's environment (a `language: system` hook, a venv)
    clone = prefix.parent
    manifest = clone / MANIFEST_FILE
    try:
        if not manifest.is_file() or _LISTED.search(manifest.read_text(errors="replace")) is None:
            return None  # not eyeful's clone, or an eyeful from before the confirming hook
    except OSError:
        return None
    import pygit2

    try:
        # NO_SEARCH: the clone itself, never a repository it happens to sit in.
        repo = pygit2.Repository(str(clone), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        url = repo.config["remote.origin.url"]
        rev = str(repo.head.peel(pygit2.Commit).id)
    except (pygit2.GitError, KeyError, ValueError, TypeError):
        return None
    if not isinstance(url, str) or not _pasteable(url):
        return None
    if Path(url).is_absolute() and Path(url).parent == clone.parent:
        return None  # try-repo's shadow copy of uncommitted changes
    return url, rev


def _pasteable(url: str) -> bool:
    """Whether a URL may go into the report as part of a command to paste: short, printable, no
    backtick, not an option, no user name or password in a web URL (a token, as often as not),
    and nothing the report's markdown would change (runs of spaces, tags)."""
    if not url or len(url) > _MAX_URL or not url.isprintable() or "`" in url:
        return False
    if url.startswith("-"):
        return False
    if "://" in url:
        try:
            parts = urlsplit(url)
        except ValueError:
            return False
        if parts.scheme.lower() in ("http", "https", "ftp", "ftps") and "@" in parts.netloc:
            return False
    from eyeful import mdsafe

    command = _try_repo(url, "0" * 40)
    return mdsafe.line(command) == command


def _try_repo(url: str, rev: str) -> str:
    return f"pre-commit try-repo {shlex.quote(url)} {CONFIRM_HOOK} --ref {rev} --hook-stage manual"
