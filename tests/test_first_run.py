"""The first ten minutes (issue 22): a minimal configuration blocks a real break, because the
single-test command is derived from a plain pytest or unittest `test` command."""

from __future__ import annotations

from pathlib import Path

from eyeful.config import load_config
from eyeful.trust import shown_settings
from tests.core import review
from tests.gitrepo import (
    PYTEST,
    PYTEST_INI,
    PYTHON,
    confirm,
    make_repo,
    stage,
)

CALC = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
UNITTESTS = (
    "import unittest\n\nfrom calc import add\n\n\nclass TestCalc(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)


def _minimal(tmp_path: Path, test: str, files: dict[str, str]) -> Path:
    config = f"[tool.eyeful.commands]\ntest = {test!r}\n"
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": config, "calc.py": CALC, **files})
    confirm(repo)
    return repo


def test_only_a_plain_pytest_command_blocks_a_break(tmp_path):
    repo = _minimal(
        tmp_path, f"{PYTEST} tests", {"pytest.ini": PYTEST_INI, "tests/test_calc.py": TESTS}
    )
    shown = dict(shown_settings(load_config(repo), repo))
    assert shown["test_one"] == f"{PYTEST} {{test}}  (derived from test)"  # `tests` left out
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    done = review(repo, format="json")
    report = done.json
    assert [(r["test"], r["kind"]) for r in report["regressions"]] == [
        ("tests/test_calc.py::test_add", "regression")
    ], report
    assert report["regressions"][0]["rerun"] == f"{PYTEST} tests/test_calc.py::test_add"
    assert done.exit_code == 1


def test_only_a_plain_unittest_command_blocks_a_break(tmp_path):
    repo = _minimal(
        tmp_path,
        f"{PYTHON} -m unittest discover -s tests -t .",
        {"tests/__init__.py": "", "tests/test_calc.py": UNITTESTS},
    )
    stage(repo, {"calc.py": CALC.replace("a + b", "a - b")})
    done = review(repo, format="json")
    report = done.json
    assert [(r["test"], r["kind"]) for r in report["regressions"]] == [
        ("tests.test_calc.TestCalc.test_add", "regression")
    ], report
    assert done.exit_code == 1


def test_a_command_whose_options_eyeful_cannot_read_derives_nothing(tmp_path):
    repo = _minimal(tmp_path, f"{PYTEST} --myplugin-opt tests", {"tests/test_calc.py": TESTS})
    assert "test_one" not in dict(shown_settings(load_config(repo), repo))


def test_help_and_the_hook_say_how_to_install_from_the_repository(tmp_path):
    import shutil
    import subprocess

    from tests.gitrepo import run

    script = shutil.which("git-eyeful")
    assert script is not None
    help_text = " ".join(run(script, "-h", cwd=tmp_path).stdout.split())  # as wrapped
    assert "pypi.org" not in help_text and "pip install eyeful" not in help_text
    assert "pipx install git+URL" in help_text and "pip install ./eyeful" in help_text
    hook = Path(__file__).resolve().parents[1] / "hooks" / "pre-push"
    proc = subprocess.run(
        ["/bin/sh", str(hook), "origin", "url"], env={"PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "pip install eyeful)" not in proc.stderr
    assert "pipx install git+URL" in proc.stderr
