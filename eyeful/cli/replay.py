"""The last review's answer, given again while nothing it depended on has changed.

`git eyeful` run again on the same change (a developer checks, then pushes: the hook runs it
again) serves every test run from the cache, and its report is the same text. Reaching that
text costs more than it needs: importing pydantic and pygit2 alone is about the whole start-up
budget. So a review whose every run came from the cache is remembered with a fingerprint of
everything it read, and the next `git eyeful` with the same fingerprint and command line (none,
or the plain hook's `--hook --base ID --head ID`) prints it without importing either.

What the fingerprint covers: eyeful's version; the environment variables a review reads (PATH,
HOME, XDG_CONFIG_HOME, every GIT_*, PRE_COMMIT* and EYEFUL_* variable, and those the
configuration's `env` names); what the run cache keys on (eyeful/environment.py: the PATH project
commands get, PYTHONPATH, the interpreters PATH resolves to and what is installed on them);
the repository's paths; the bytes of `pyproject.toml` and `.eyeful.toml`, of the confirmations
file and of the prompt overrides; the repository's git config (an extension libgit2 cannot read
stops the review); HEAD's commit and a pushed range's, whether they are here; the bytes of the
index; whether a merge is in progress; the shallow file and the grafts file (libgit2 reads both:
they change parents, so merge-bases). And every cache entry the review was served must still be
there with the same bytes.

Only what never blocks is remembered: a clean review (or nothing to review) with no findings, no
agent, and no run that was not served from the cache. A miss, or anything unexpected, simply
runs the review. The memory is one file under the cache; `git eyeful clean` removes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from eyeful import __version__
from eyeful.environment import EnvironmentKey
from eyeful.errors import EyefulError
from eyeful.gitutil import RepoPaths, current_directory, find_repo, index_path, is_commit_id
from eyeful.inputfiles import exists, read_regular
from eyeful.textsafe import first_hidden
from eyeful.userfiles import PROMPTS_DIR, config_home, prompt_overrides

if TYPE_CHECKING:
    from eyeful.cache import Served

FILE = "replay.json"
_CONFIG_FILES = ("pyproject.toml", ".eyeful.toml")  # what config.py reads (it imports pydantic)
_READ_NAMES = frozenset({"PATH", "HOME", "XDG_CONFIG_HOME"})
_READ_PREFIXES = ("GIT_", "PRE_COMMIT", "EYEFUL_")
_RANGE_VARS = (
    "PRE_COMMIT_FROM_REF",
    "PRE_COMMIT_TO_REF",
    "PRE_COMMIT_LOCAL_BRANCH",
    "PRE_COMMIT_REMOTE_BRANCH",
)


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


class _Unreadable(Exception):
    """A configuration file eyeful cannot read as TOML: the review says why; nothing is
    remembered."""


def _env_names(root: Path) -> set[str]:
    """The variables `[tool.eyeful] env` names in either configuration file."""
    import tomllib

    names: set[str] = set()
    for name in _CONFIG_FILES:
        if not exists(root / name):
            continue
        try:  # only a regular file: a FIFO or a device is the review's to refuse
            data = tomllib.loads(read_regular(root / name, name).decode("utf-8"))
        except (EyefulError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as err:
            raise _Unreadable(name) from err
        table = data.get("tool", {}) if name == "pyproject.toml" else data
        if name == "pyproject.toml":
            table = table.get("eyeful", {}) if isinstance(table, dict) else None
        env = table.get("env", []) if isinstance(table, dict) else []
        if not isinstance(env, list):
            raise _Unreadable(name)
        names.update(str(item) for item in env)
    return names


def _environment(names: set[str]) -> list[tuple[str, str]]:
    """The variables a review reads: eyeful's own, git's, pre-commit's, and the project's."""
    return sorted(
        (key, value)
        for key, value in os.environ.items()
        if key in _READ_NAMES or key.startswith(_READ_PREFIXES) or key in names
    )


def _commits(paths: RepoPaths, args: list[str]) -> str:
    """HEAD's commit, and those of a pushed range given by ids (pre-commit's variables, the plain
    hook's arguments): each as git finds it, or missing (a base pruned since makes the review
    stop rather than compare)."""
    revs = ["HEAD", *(os.environ.get(name) or "" for name in _RANGE_VARS[:2])]
    revs += [arg for arg in args if is_commit_id(arg)]
    proc = subprocess.run(
        ["git", "cat-file", "--batch-check"],
        input="".join(f"{rev}^{{commit}}\n" for rev in revs).encode(),
        cwd=paths.root,
        capture_output=True,
        check=False,
    )
    return proc.stdout.decode(errors="replace")


def _fixed_range() -> bool:
    """A pushed range given by commit ids (as pre-commit gives it) names fixed trees; a branch
    name (pre-commit's root-commit case) may move, so such a review is never remembered."""
    values = [os.environ.get(name) for name in _RANGE_VARS]
    if not any(values):
        return True
    named = [os.environ.get("PRE_COMMIT_FROM_REF"), os.environ.get("PRE_COMMIT_TO_REF")]
    return all(v is not None and is_commit_id(v) for v in named)


class Memory:
    """The remembered review of one repository: looked up before a review, recorded after."""

    def __init__(self, paths: RepoPaths, args: list[str]) -> None:
        self.paths = paths
        self.args = args
        self.cache_dir = paths.state_dir / "cache"
        self.file = self.cache_dir / FILE
        self.environment: EnvironmentKey | None = None
        """The interpreters as asked for the key: the review's runs use the same answer
        (eyeful/runs.py) and so does :meth:`record`'s second fingerprint, so that one review
        asks each interpreter once, and the remembered text and its key agree by construction."""
        self.key = self.fingerprint()

    @classmethod
    def here(cls, args: list[str]) -> Memory | None:
        """For the repository around the current directory and the command line ``args``; None
        when there is nothing to remember by (not a repository, a range by branch name): the
        review then says why."""
        if not _fixed_range():
            return None
        try:
            return cls(find_repo(current_directory()), args)
        except (EyefulError, OSError, ValueError, _Unreadable):  # the review reports it
            return None

    def fingerprint(self) -> str:
        root = self.paths.root
        names = _env_names(root)
        # The interpreters are asked first and read last: they answer while the rest is read.
        results = self.environment
        if results is None or not results.fits(names, root):
            results = self.environment = EnvironmentKey(names, root)
        parts = {
            "eyeful": __version__,
            "args": self.args,
            "environment": _environment(names),
            "paths": [str(root), str(self.paths.git_dir), str(self.paths.common_dir)],
            "config": {name: _digest(root / name) for name in _CONFIG_FILES},
            "confirmed": _digest(config_home() / "confirmed"),
            "prompts": prompt_overrides(root) if (root / PROMPTS_DIR).is_dir() else {},
            "git config": [
                _digest(self.paths.common_dir / "config"),
                _digest(self.paths.git_dir / "config.worktree"),
            ],
            "commits": _commits(self.paths, self.args),
            "index": _digest(index_path(self.paths)),
            "merging": (self.paths.git_dir / "MERGE_HEAD").exists(),
            "shallow": _digest(self.paths.common_dir / "shallow"),
            "grafts": _digest(self.paths.common_dir / "info" / "grafts"),
            # What the run cache keys on (the PATH project commands get, the interpreters it
            # resolves to and what is installed on them, PYTHONPATH): under pre-commit that PATH
            # is without eyeful's own virtualenv. Read as with `isolate = "none"`, which covers
            # more than `venv` does: a review that may have changed is never given again.
            "results": results.value(),
        }
        payload = json.dumps(parts, sort_keys=True, default=str)
        return hashlib.sha256(payload.encode("utf-8", "surrogateescape")).hexdigest()

    def _entry(self, relative: str) -> Path | None:
        path = self.cache_dir / relative
        parts = Path(relative).parts
        if Path(relative).is_absolute() or ".." in parts or not parts:
            return None
        return path

    def lookup(self) -> str | None:
        """The remembered report's text, when it was recorded for this very fingerprint and
        every cache entry it was served is unchanged."""
        try:
            memo = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(memo, dict) or memo.get("key") != self.key:
            return None
        served, text = memo.get("served"), memo.get("text")
        if not isinstance(served, dict) or not isinstance(text, str):
            return None
        if first_hidden(text.replace("\n", "")) is not None:
            return None  # eyeful's markdown shows nothing hidden (eyeful/textsafe.py)
        for relative, digest in served.items():
            entry = self._entry(relative)
            if entry is None or _digest(entry) != digest:
                return None
        return text

    def record(self, text: str, served: Served) -> None:
        """Remember ``text`` for this fingerprint, if the inputs did not change while the review
        ran, with the digests of the entries as they were read (one rewritten since then, by
        another eyeful, is not what the text came from); a failure to write only means the next
        review runs in full."""
        try:
            if self.fingerprint() != self.key:
                return
        except (EyefulError, OSError, ValueError, _Unreadable):
            return
        entries: dict[str, str] = {}
        for path, digest in served:
            if not path.is_relative_to(self.cache_dir):
                return
            relative = str(path.relative_to(self.cache_dir))
            if entries.setdefault(relative, digest) != digest:  # read twice, changed between
                return
        payload = {"key": self.key, "served": entries, "text": text}
        import tempfile

        try:
            fd, tmp = tempfile.mkstemp(dir=self.cache_dir, prefix=".tmp-replay-")
        except OSError:
            return
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(payload, handle)
            Path(tmp).replace(self.file)
        except OSError:
            Path(tmp).unlink(missing_ok=True)
