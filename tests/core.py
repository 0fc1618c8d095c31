"""A review run in the test's own process: the verdict logic through the core, not the program.

`review(repo, format="json")` does what `git eyeful --format json` does in ``repo``, through the
review command's phases (eyeful/cli/reviewcmd.py: prepare, reviewed, render) and the core's
`review()`: real repositories, real git, real processes for the project's commands. What only
the program does (git's dispatch, parsing the command line, terminals, signals, hooks, the
crash handler, the exit sweep) is tested by starting it (tests/gitrepo.py: `eyeful`).

For the call, the process is given what `git eyeful` would have: the working directory, the
environment (``env`` replaces it, as for a subprocess), git's exec-path first on PATH and
GIT_EXEC_PATH, an empty stdin, its own stdout and stderr (file descriptors 1 and 2, so what a
command started with them writes is seen too), libgit2's configuration search paths read again
from HOME and XDG_CONFIG_HOME, the temporary directory from TMPDIR, and (Linux) the subreaper
mark, so that what a command leaves behind stays below this process. Everything is restored
afterwards, and what eyeful left is killed and reaped as the program's exit would: every process
carrying one of this process's tokens, and every process that became a descendant of this one
during the call. An unexpected exception propagates (the program would exit 4): the test fails
with its traceback.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import io
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from eyeful import reaper
from eyeful.cli.reviewcmd import ReviewOptions, fail, prepare, render, reviewed
from eyeful.cli.terminal import Stderr
from eyeful.errors import EyefulError
from eyeful.report import Report
from eyeful.runs import Silent

_PR_SET_CHILD_SUBREAPER = 36


@dataclasses.dataclass
class Reviewed:
    """What one review gave: what the program would have exited with and printed."""

    exit_code: int
    stdout: str
    stderr: str
    report: Report | None
    """The core's report; None when the review stopped before it (bad input: exit 2)."""
    markdown: str = ""
    """The markdown report, whatever the format asked for ("" without a report)."""
    json_text: str = ""
    """What `--format json` prints with the same options ("" without a report)."""

    @property
    def json(self) -> dict[str, Any]:
        """The JSON report (stderr shown when there is none)."""
        assert self.json_text, self.stderr
        result: dict[str, Any] = json.loads(self.json_text)
        return result

    def __str__(self) -> str:  # for assertion messages: everything printed
        return self.stdout + self.stderr


class _Collected(Stderr):
    """The review command's messages, one line each, as a pipe would get them."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    @functools.cached_property
    def rich(self) -> bool:
        return False

    def say(self, text: str) -> None:
        self.lines.append(text + "\n")


def review(
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    findings: Path | Sequence[Path] | Sequence[dict[str, Any]] | None = None,
    **options: Any,
) -> Reviewed:
    """`git eyeful` in ``cwd`` with ``options`` (ReviewOptions' fields; ``format`` for
    output_format), in this process. ``findings``: files, or the findings themselves (written
    to a JSON file outside the repository)."""
    if "format" in options:
        options["output_format"] = options.pop("format")
    with contextlib.ExitStack() as stack:
        if findings is not None:
            options["findings"] = _finding_files(findings, stack)
        asked = ReviewOptions(**options)
        return _in_process(asked, Path(cwd), env)


def record_map(repo: Path, note: str = "a project\n") -> Reviewed:
    """A full review of a new last commit (a README line): with `select = "affected"` and no
    map yet it runs the whole suite and records the map of that commit's tree."""
    from tests.gitrepo import confirm, git, stage

    stage(repo, {"README.md": note})
    git(repo, "commit", "-q", "-m", "readme")
    confirm(repo)
    done = review(repo, format="json", base="HEAD~1", head="HEAD")
    assert done.exit_code == 0, done
    return done


def _finding_files(
    findings: Path | Sequence[Path] | Sequence[dict[str, Any]], stack: contextlib.ExitStack
) -> tuple[Path, ...]:
    if isinstance(findings, (str, Path)):
        return (Path(findings),)
    if all(isinstance(item, (str, Path)) for item in findings):
        return tuple(Path(item) for item in findings)  # type: ignore[arg-type]
    where = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="eyeful-findings-")))
    path = where / "findings.json"
    path.write_text(json.dumps(list(findings)), encoding="utf-8")
    return (path,)


def _in_process(options: ReviewOptions, cwd: Path, env: dict[str, str] | None) -> Reviewed:
    """The review command's run_review (eyeful/cli/reviewcmd.py), without the program around it."""
    stderr = _Collected()
    report: Report | None = None
    with _as_git_eyeful(cwd, env) as printed:
        try:
            request = prepare(options, stderr, None)
            report = reviewed(request, options, Silent())
        except EyefulError as err:
            fail(stderr, str(err))
            code = err.exit_code
        else:
            code = report.exit_code
    text = markdown = json_text = ""
    if report is not None:
        text = render(report, options)
        markdown = render(report, dataclasses.replace(options, output_format="markdown"))
        json_text = render(report, dataclasses.replace(options, output_format="json"))
    out, messages = printed
    return Reviewed(code, out + text, messages + "".join(stderr.lines), report, markdown, json_text)


_exec_path: str | None = None


def _git_exec_path() -> str:
    global _exec_path
    if _exec_path is None:
        _exec_path = subprocess.run(
            ["git", "--exec-path"], capture_output=True, text=True, check=True
        ).stdout.strip()
    return _exec_path


@contextlib.contextmanager
def _as_git_eyeful(cwd: Path, env: dict[str, str] | None) -> Iterator[list[str]]:
    """This process as `git eyeful` started in ``cwd`` with ``env``; the list it gives holds,
    after the block, what was written to file descriptors 1 and 2 meanwhile."""
    run_env = dict(os.environ if env is None else env)
    exec_path = _git_exec_path()
    run_env["GIT_EXEC_PATH"] = exec_path
    run_env["PATH"] = exec_path + os.pathsep + run_env.get("PATH", "")
    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    printed: list[str] = []
    before = reaper._descendants(os.getpid(), reaper._parents())
    subreaper = _set_subreaper(True)
    try:
        with _fd_captured(1) as out, _fd_captured(2) as err:
            os.environ.clear()
            os.environ.update(run_env)
            _read_git_config_paths_again()
            tempfile.tempdir = None  # TMPDIR as the run's environment sets it
            os.chdir(cwd)
            sys.stdin = io.StringIO("")
            try:
                yield printed
            finally:
                sys.stdin = saved_stdin
                os.chdir(saved_cwd)
                os.environ.clear()
                os.environ.update(saved_env)
                _read_git_config_paths_again()
                tempfile.tempdir = None
        printed += [out.decode("utf-8", "replace"), err.decode("utf-8", "replace")]
    finally:
        _sweep_leftovers(before)
        if subreaper:
            _set_subreaper(False)


@contextlib.contextmanager
def _fd_captured(fd: int) -> Iterator[bytearray]:
    """What is written to ``fd`` (by this process or a child that inherited it) in the block:
    in the bytearray it gives, after the block."""
    stream = sys.stdout if fd == 1 else sys.stderr
    with contextlib.suppress(Exception):
        stream.flush()
    saved = os.dup(fd)
    data = bytearray()
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), fd)
        try:
            yield data
        finally:
            with contextlib.suppress(Exception):
                stream.flush()
            os.dup2(saved, fd)
            os.close(saved)
            sink.seek(0)
            data += sink.read()


def _read_git_config_paths_again() -> None:
    """libgit2 read where git's configuration is from HOME and XDG_CONFIG_HOME when pygit2 was
    imported; unset, its search paths are guessed again from the environment as it is now."""
    import pygit2
    from pygit2.enums import ConfigLevel

    for level in (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM):
        pygit2.settings.search_path[level] = None  # type: ignore[assignment]
    with contextlib.suppress(AttributeError):
        pygit2.settings.homedir = None  # type: ignore[assignment]


def _set_subreaper(on: bool) -> bool:
    """Orphans of what this process starts become its children (Linux); False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _sweep_leftovers(before: set[int]) -> None:
    """What the program's exit sweeps (eyeful/reaper.py: sweep_all): every process carrying one
    of this process's tokens, and every descendant of this process that was not one before."""
    me = os.getpid()
    token = (reaper._own_prefix() + "-").encode()
    for _ in range(reaper._ROUNDS):
        parents = reaper._parents()
        victims = reaper._descendants(me, parents) - before
        victims |= {
            pid for pid in parents if pid != me and reaper._carries(pid, token, prefix=True)
        }
        if not victims:
            return
        reaper._kill_and_reap(victims, parents)
