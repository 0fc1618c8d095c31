"""The ``implicit`` oracle's rule: a failure from the runtime, raised outside the test's own files
(the reproduction, conftest.py, test modules, test directories), and not a crash the test caused
itself. Read from the failure eyeful recorded (eyeful/failures.py)."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import PurePosixPath

from eyeful.failures import Failure
from eyeful.gitutil import STATE_DIR, WORKTREE_PREFIX, WORKTREES_DIR

__all__ = ["not_runtime", "test_path", "through_changed_function"]

# A test's own files besides the reproduction: conftest.py, test modules, files in test dirs.
_TEST_DIRS = frozenset({"tests", "test", "testing", "__tests__"})
_TEST_NAME = re.compile(r"conftest\.py|tests?\.py|test_.*\.py|.*_tests?\.py|.*_test\.go")
# Calls that signal, abort or end the test's own process: a crash the test causes itself.
_SELF_SIGNAL = re.compile(
    r"\bos\.(?:kill|killpg|abort|_exit)\s*\(|\bsignal\.(?:raise_signal|pthread_kill|alarm"
    r"|setitimer)\s*\(|\bsys\.exit\s*\(|\bfaulthandler\._\w+\s*\("
    r"|\bfrom\s+os\s+import\b[^\n]*\b(?:kill|killpg|abort|_exit)\b"
)


def test_path(printed: str) -> bool:
    """Whether a frame's file (as a runner printed it) is one of the tests' own files in the
    repository: a ``conftest.py``, a test module (``test_*.py``, ``*_test.py``, ``*_test.go``)
    or any file in a ``tests``/``test``/``testing`` directory (helpers). A file outside the
    repository (the standard library's ``test`` package, an installed one) never is."""
    relative = _repo_relative(printed)
    if relative is None:
        return False
    parts = PurePosixPath(relative).parts
    return bool(parts) and (
        bool(_TEST_NAME.fullmatch(parts[-1])) or any(p in _TEST_DIRS for p in parts[:-1])
    )


def _repo_relative(printed: str) -> str | None:
    """A printed path as the repository names it: a relative one as it is, an absolute one
    only inside one of eyeful's checkouts (``.../eyeful/worktrees/wt-N/<file>``)."""
    if not printed or printed.startswith("<"):
        return None
    path = PurePosixPath(printed.replace("\\", "/"))
    parts = path.parts
    if any(part in ("site-packages", "dist-packages") for part in parts):
        return None
    if not path.is_absolute():
        return "/".join(p for p in parts if p not in ("/", ".."))
    for i in range(1, len(parts) - 2):
        if parts[i - 1 : i + 1] == (STATE_DIR, WORKTREES_DIR) and parts[i + 1].startswith(
            WORKTREE_PREFIX
        ):
            return "/".join(parts[i + 2 :])
    return None


def not_runtime(
    failure: Failure | None,
    repro_path: str,
    in_repo: Callable[[str], bool] | None = None,
    test_file: str | None = None,
) -> str | None:
    """Why ``failure`` is not a failure from the runtime (the implicit oracle), or None.

    A runtime failure is an exception raised outside the test's own files, a crash signal, a
    sanitizer or race report, or a timeout. The test's own files are the reproduction file,
    ``conftest.py``, test modules and helpers in the test directories (:func:`test_path`): an
    error raised there is the test's verdict, not the runtime's. A crash when the reproduction
    (``test_file``) signals, aborts or exits its own process (``os.kill(os.getpid(), ...)``,
    ``os._exit``, ``sys.exit``) is its own doing. With ``in_repo``, a traceback must also pass
    through the repository's own code (not only the tests and the standard library, nor code
    the test built with ``exec``): an error the test provokes in ``json.loads`` or in
    ``exec("{}['x']")`` is its own doing.
    """
    if failure is None:
        return "no failure of the test itself was recorded"
    if failure.kind == "collection":
        return f"the test could not be collected or imported ({failure.type or 'error'})"
    if failure.kind == "assertion":
        return "the test failed an assertion of its own"
    if failure.kind == "unknown":
        return "the failure is not a raised error, crash, sanitizer report or timeout"

    def own(printed: str) -> bool:
        return _same_file(printed, repro_path) or test_path(printed)

    if failure.raised_in is not None and own(failure.raised_in):
        return f"the test's own code raised {failure.type or 'the error'} ({failure.raised_in})"
    if failure.raised_in is None and failure.kind == "exception":
        return "the frame that raised the error is not known"
    if failure.kind in ("crash", "exception") and test_file and _SELF_SIGNAL.search(test_file):
        found = _SELF_SIGNAL.search(test_file)
        said = found[0].rstrip("( ") if found else "it"
        return f"the test signals or ends its own process ({said}): the crash is its own doing"
    if in_repo is not None and failure.frames:
        others = [f for f in failure.frames if not own(f)]
        if not any(_in_repo(f, in_repo) for f in others):
            return "the traceback does not pass through the repository's code, only the tests'"
    return None


def _in_repo(printed: str, in_repo: Callable[[str], bool]) -> bool:
    """Whether a printed frame path is a file of the repository.

    A relative path (from the runner's rootdir, which may be a subdirectory) counts when some
    tail of it names a repository file. An absolute path counts only inside one of eyeful's
    checkouts (``.../eyeful/worktrees/wt-N/<file>``): the standard library's ``email/utils.py``
    is not the repository's ``utils.py``. Installed packages never count.
    """
    relative = _repo_relative(printed)
    if relative is None:
        return False
    if PurePosixPath(printed).is_absolute():
        return in_repo(relative)
    parts = PurePosixPath(relative).parts
    return any(in_repo("/".join(parts[start:])) for start in range(len(parts)))


def _same_file(printed: str, repro_path: str) -> bool:
    """Whether a printed path (absolute, relative to rootdir, or a bare name) is the file."""
    printed_parts = PurePosixPath(printed.replace("\\", "/")).parts
    repro_parts = PurePosixPath(repro_path).parts
    n = min(len(printed_parts), len(repro_parts))
    return n > 0 and printed_parts[-n:] == repro_parts[-n:]


def through_changed_function(
    failure: Failure | None,
    changed: dict[str, frozenset[int]],
    read: Callable[[str], str | None],
) -> bool | None:
    """Whether ``failure``'s traceback passes through a function the change touched: an entry
    (``file:line``) inside a function of the change's version of the file (``read``) that holds
    a changed line. A runtime error raised in code the change did not touch, on an input the
    change's code only chose, shows nothing wrong with what the change wrote. None when the
    traceback has no Python entry to tell by (Go's, or none recorded)."""
    if failure is None:
        return None
    entries = [e.rpartition(":") for e in failure.stack]
    python = [(path, int(line)) for path, _, line in entries if path.endswith(".py") and line]
    if not python:
        return None
    for printed, line in python:
        path = _changed_path(printed, changed)
        if path is None:
            continue
        span = _function_at(read(path), line)
        if span is not None and any(span[0] <= n <= span[1] for n in changed[path]):
            return True
    return False


def _changed_path(printed: str, changed: dict[str, frozenset[int]]) -> str | None:
    """The changed file a printed frame path names (from the checkout, or relative to a rootdir
    below the repository), or None."""
    relative = _repo_relative(printed)
    if relative is None:
        return None
    if relative in changed:
        return relative
    tails = [p for p in changed if p.endswith("/" + relative)]
    return tails[0] if len(tails) == 1 else None


def _function_at(text: str | None, line: int) -> tuple[int, int] | None:
    """The lines (first, last, decorators included) of the innermost function around ``line``."""
    if text is None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    best: tuple[int, int] | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            last = node.end_lineno or node.lineno
            if first <= line <= last and (best is None or first >= best[0]):
                best = (first, last)
    return best
