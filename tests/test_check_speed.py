"""CI's speed check (benchmarks/check_speed.py) catches the regression it is there for: a real
run of it, on a copy of eyeful whose replay path imports pydantic, fails and says so.

Not timed: the check's figures are CPU ratios (they vary with load); what this test reads is the
check's own look at the replay's `sys.modules`, which does not.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_speed_check_fails_when_the_replay_imports_pydantic(tmp_path: Path) -> None:
    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "eyeful", copy / "eyeful", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "benchmarks", copy / "benchmarks",
                    ignore=shutil.ignore_patterns("__pycache__", "*.md"))  # fmt: skip
    replay = copy / "eyeful" / "cli" / "replay.py"
    replay.write_text(replay.read_text() + "\nimport pydantic  # noqa: E402, F401\n")
    proc = subprocess.run(
        [sys.executable, str(copy / "benchmarks" / "check_speed.py"), "--only", "rerun",
         "--repeat", "1"],
        capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the replay path imported pydantic" in proc.stdout, proc.stdout + proc.stderr
    assert "cached rerun:" in proc.stdout and "x the import floor" in proc.stdout
