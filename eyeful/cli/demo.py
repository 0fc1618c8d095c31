"""`eyeful demo`: a throwaway copy of the bundled example, a staged change that breaks it, a review.

The review also verifies the bundled findings (examples/sessions-findings.json): a boundary bug
with a quoted specification and a fix, the same test with no quote, a pre-existing bug, a flaky
test and a fix that breaks another test.

The commands are confirmed for that throwaway repository only, in a trust file that lives and dies
with it; nothing is written to the user's own confirmations.
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from eyeful.config import load_config
from eyeful.errors import EyefulError
from eyeful.findings import parse_findings
from eyeful.gitutil import clean_env, find_repo, git
from eyeful.report import to_markdown
from eyeful.review import ReviewRequest, review
from eyeful.runs import Progress
from eyeful.snapshot import take_snapshot
from eyeful.trust import TrustStore

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

_IDENTITY = ("-c", "user.name=eyeful demo", "-c", "user.email=demo@eyeful.invalid",
             "-c", "commit.gpgsign=false")  # fmt: skip


def _copy(source: Traversable, target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for item in source.iterdir():
        if item.name == "__pycache__":
            continue
        if item.is_dir():
            _copy(item, target / item.name)
        else:
            (target / item.name).write_bytes(item.read_bytes())


def make_demo_repo(where: Path) -> Path:
    """The example committed on `main`, with the breaking change staged on top."""
    examples = resources.files("eyeful") / "examples"
    repo = where / "sessions"
    _copy(examples / "sessions", repo)
    pyproject = repo / "pyproject.toml"
    python = shlex.quote(sys.executable)
    pyproject.write_text(pyproject.read_text().replace("@PYTHON@", python), encoding="utf-8")
    git("init", "-q", str(repo), cwd=where)
    git("checkout", "-q", "-b", "main", cwd=repo)
    git("add", "-A", cwd=repo)
    git(*_IDENTITY, "commit", "-q", "-m", "sessions: expiry and remaining time", cwd=repo)
    _copy(examples / "sessions-change", repo)
    git("add", "-A", cwd=repo)
    return repo


REPORT = "report.json"
"""With ``--keep``: the review's JSON report (as ``git eyeful --format json`` prints it), beside
the kept repository."""


def run_demo(progress: Progress, *, keep: bool = False) -> tuple[str, int, Path]:
    """Run the review on the demo repository; return the feedback, its exit code and the path.
    Kept, the repository's directory holds the review's JSON report too (``REPORT``)."""
    if importlib.util.find_spec("pytest") is None:
        raise EyefulError(
            "the demo runs the example's tests with pytest, which this Python lacks: "
            f"{sys.executable} -m pip install pytest"
        )
    where = Path(tempfile.mkdtemp(prefix="eyeful-demo-"))
    try:
        repo = make_demo_repo(where)
        paths = find_repo(repo, env=clean_env())
        config = load_config(paths.root)
        store = TrustStore(where / "confirmed")
        store.confirm(paths.root, config)
        snapshot = take_snapshot(paths)
        findings_text = (
            resources.files("eyeful") / "examples" / "sessions-findings.json"
        ).read_text(encoding="utf-8")
        findings = parse_findings(findings_text, "sessions-findings.json")
        request = ReviewRequest(paths, config, snapshot, confirmed=True, findings=findings)
        report = review(request, progress)
        if keep:
            from eyeful.report import compact
            from eyeful.textsafe import json_text

            shown = json_text(compact(report).model_dump_json(indent=2)) + "\n"
            (where / REPORT).write_text(shown, encoding="utf-8")
        return to_markdown(report), report.exit_code, repo
    finally:
        if not keep:
            shutil.rmtree(where, ignore_errors=True)
