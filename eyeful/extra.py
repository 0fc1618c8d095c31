"""What eyeful puts on a checkout that nobody confirmed: a finding's reproduction (files written
over the tree) and its fix (a patch applied), refused where git ignores a path, where it leaves
the worktree, or where it takes the probe's name."""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from eyeful.confine import Refused, inside
from eyeful.gitutil import git

__all__ = ["Extra"]


def _ignored(worktree: Path, paths: list[str]) -> list[str]:
    if not paths:
        return []
    listing = b"\0".join(p.encode() for p in paths) + b"\0"
    proc = git("check-ignore", "--no-index", "-z", "--stdin", cwd=worktree, stdin=listing,
               check=False)  # fmt: skip
    return [p.decode() for p in proc.stdout.split(b"\0") if p]


@dataclass(frozen=True)
class Extra:
    """Files written over a checkout (a reproduction test) and a patch applied to it (a fix)."""

    files: dict[str, str] = field(default_factory=dict)
    patch: str | None = None

    def key(self) -> str:
        digest = hashlib.sha256()
        for path in sorted(self.files):
            digest.update(path.encode() + b"\0" + self.files[path].encode() + b"\0")
        digest.update((self.patch or "").encode())
        return digest.hexdigest()

    def patch_paths(self) -> list[str]:
        """The paths the patch touches, as git reads them (reading the patch alone)."""
        if self.patch is None:
            return []
        with tempfile.TemporaryDirectory(prefix="eyeful-patch-") as scratch:
            proc = git("apply", "--numstat", "-z", "-", cwd=Path(scratch),
                       stdin=self.patch.encode(), check=False)  # fmt: skip
        if proc.returncode != 0:
            raise Refused(f"the fix is not a diff git can read: {_last_line(proc.stderr)}")
        # Each file: "ADDED\tDELETED\tPATH" (a path may hold tabs), or for a rename the counts
        # and an empty path, then the old path and the new one, each its own record.
        records = [r.decode(errors="surrogateescape") for r in proc.stdout.split(b"\0")]
        paths: list[str] = []
        at = 0
        while at < len(records):
            fields = records[at].split("\t", 2)
            at += 1
            if len(fields) < 3:
                continue  # (the empty record after the last NUL)
            if fields[2]:
                paths.append(fields[2])
            else:
                paths += [p for p in records[at : at + 2] if p]
                at += 2
        return paths

    def apply(self, worktree: Path) -> list[str]:
        """Put the files and the patch on ``worktree``; returns the paths touched."""
        touched = [*self.files, *self.patch_paths()]
        for rel in touched:
            inside(worktree, rel)
            if any(part.startswith("eyeful_probe") for part in PurePosixPath(rel).parts):
                # A module of that name found first on sys.path (the worktree's root under
                # `python -m pytest`, a command's own PYTHONPATH) would be the probe: the record
                # the finding is judged by, written by the finding.
                raise Refused(f"{rel!r} has the name of eyeful's probe; eyeful does not write it")
        ignored = _ignored(worktree, touched)
        if ignored:
            raise Refused(f"{ignored[0]!r} is a path git ignores; eyeful does not write there")
        for rel, content in self.files.items():
            target = inside(worktree, rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        if self.patch is not None:
            proc = git("apply", "--whitespace=nowarn", "-", cwd=worktree,
                       stdin=self.patch.encode(), check=False)  # fmt: skip
            if proc.returncode != 0:
                raise Refused(f"the fix does not apply: {_last_line(proc.stderr)}")
        return touched


def _last_line(data: bytes) -> str:
    lines = data.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else "no message"
