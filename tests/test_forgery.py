"""Records the judged code cannot write (issue 34, point 2).

The probe's record says how each test ended and which changed lines it ran; a reproduction (code
nobody confirmed) must not be able to write it. The probe takes its location out of the
environment before any test code runs, writes through a directory descriptor eyeful opened, and
in the sandbox that directory is read-only: a reproduction that appends a line to the record, by
the path the environment used to name or by looking for it, is refused. The reader also rejects
a record that disagrees with pytest's own exit status, or whose finish pytest's session end did
not follow. Real repositories, real runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eyeful import sandbox, testrun
from eyeful.config import Config
from eyeful.shell import project_env
from tests.core import review
from tests.gitrepo import PYTEST, PYTEST_INI, confirm, eyeful_config, make_repo, stage, user_state

needs_bwrap = pytest.mark.skipif(
    sandbox.unavailable() is not None,
    reason=f"no sandbox here: {sandbox.unavailable()} (.ci/run installs bubblewrap as root)",
)

CALC = "def add(a, b):\n    return a + b\n"
# A harmless change: the same sums, and a marker a reproduction can tell the trees apart by.
CHANGED = "def add(a, b):\n    return b + a\n\n\nVERSION = 2\n"

# How a reproduction finds the record: the variable that named it, else by looking: the probe
# directories beside its own TMPDIR (both live in eyeful's tmp/). It appends ``line`` to every
# record file of its own process it can, and says where it could.
FORGE = """
import json
import os
from pathlib import Path


def forge(line):
    places = [os.environ.get("EYEFUL_PROBE_DIR", "")]
    if not places[0]:
        places = [str(p) for p in Path(os.environ["TMPDIR"]).parent.parent.glob("probe-*")]
    forged = []
    for place in filter(None, places):
        path = Path(place, f"{os.getpid()}-main.jsonl")
        try:
            with path.open("a") as record:
                record.write(json.dumps(line) + "\\n")
            forged.append(str(path))
        except OSError:
            pass
    return forged
"""


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "README.md": "add returns the sum of its arguments\n",
            "calc.py": CALC,
            "tests/test_other.py": "def test_nothing():\n    pass\n",
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": CHANGED})
    return repo


def _finding(code: str, oracle: dict) -> dict:
    return {
        "id": "f1", "expert": "correctness", "severity": "error", "evidence": "test",
        "path": "calc.py", "line": 2, "title": "add divides by zero", "body": "add raises.",
        "oracle": oracle,
        "repro": {"path": "tests/test_repro.py", "code": code, "fails": "division by zero"},
    }  # fmt: skip


@needs_bwrap
def test_a_reproduction_cannot_append_a_failed_phase_to_its_record(tmp_path):
    repo = _repo(tmp_path)
    worktree_calc = "calc.py"
    code = f"""{FORGE}
import calc


def test_add():
    if getattr(calc, "VERSION", None) == 2:
        forge({{
            "t": "phase", "id": "tests/test_repro.py::test_add", "when": "call",
            "outcome": "failed", "dur": 0.01,
            "failure": {{
                "chain": [{{"type": "ZeroDivisionError", "message": "division by zero"}}],
                "crash_message": "ZeroDivisionError: division by zero",
                "raised_in": {{"file": calc.__file__, "line": 2}},
                "frames": [{{"file": calc.__file__, "line": 2, "function": "add"}}],
                "frames_total": 1,
            }},
        }})
    assert calc.add(2, 3) == 5
"""
    assert worktree_calc
    before = user_state(repo)
    done = review(repo, format="json", findings=[_finding(code, {"kind": "implicit"})])
    (finding,) = done.json["findings"]
    assert finding["kind"] != "fail", finding
    assert done.exit_code != 1
    change = [r for r in finding["runs"] if r["side"] == "change" and r["name"] == "test_one"]
    assert change
    for run in change:
        assert run["status"] != "FAILED" or "ZeroDivisionError" not in json.dumps(run), run
    assert user_state(repo) == before


@needs_bwrap
def test_a_reproduction_cannot_write_that_it_ran_the_changed_lines(tmp_path):
    repo = _repo(tmp_path)
    # It fails on the change by reading the new constant (an import-time line, no behaviour of
    # add's), and writes that it ran add's changed line.
    code = f"""{FORGE}
import calc


def test_add():
    if getattr(calc, "VERSION", None) == 2:
        forge({{"t": "executed", "files": {{calc.__file__: [2]}}, "at_import": {{}}}})
    assert getattr(calc, "VERSION", 1) == 1, "add divides by zero"
"""
    spec = {"kind": "specified", "quote": "add returns the sum of its arguments",
            "source": "README.md"}  # fmt: skip
    finding = _finding(code, spec)
    finding["repro"]["fails"] = "add divides by zero"
    done = review(repo, format="json", findings=[finding])
    (graded,) = done.json["findings"]
    assert graded["kind"] != "fail", graded
    assert done.exit_code != 1
    runs = [r for r in graded["runs"] if r["side"] == "change" and r["name"] == "test_one"]
    assert runs
    assert all(2 not in (r.get("executed") or {}).get("calc.py", []) for r in runs), runs


def _record_run(tmp_path: Path, files: dict[str, str]) -> testrun.Said:
    """One real pytest run with the probe, outside any sandbox, read as eyeful reads it."""
    repo = make_repo(tmp_path / "run", {"pytest.ini": PYTEST_INI, **files})
    config = Config.model_validate({"commands": {"test": PYTEST}})
    attempt = testrun.attempt(PYTEST, repo, project_env(), tmp_path / "tmp", 600, sections=False)
    context = testrun.Context(
        command=PYTEST, side="change", name="test", config=config, worktree=repo, report=None
    )
    return testrun.read(attempt, context)


def test_the_probe_takes_its_location_out_of_the_environment(tmp_path):
    said = _record_run(
        tmp_path,
        {
            "tests/test_env.py": (
                "import os\n\n\ndef test_env():\n"
                "    seen = sorted(k for k in os.environ if k.startswith('EYEFUL_PROBE'))\n"
                "    assert seen == [], seen\n"
            )
        },
    )
    assert said.status == "PASSED", (said.status, said.reason, said.failures)
    assert said.tests_from == "probe"


# Outside the sandbox (the user's own code) the record can be found and written: through the
# descriptors the process holds. The reader's cross-checks still catch what does not add up.
APPEND = """import json
import os


def append(line):
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        name = os.path.basename(target)
        if name.endswith("-main.jsonl"):
            path = target
        elif name.startswith("probe-") and os.path.isdir(target):
            path = os.path.join(target, f"{os.getpid()}-main.jsonl")
        else:
            continue
        with open(path, "a") as record:
            record.write(json.dumps(line) + "\\n")
"""


def test_a_finish_written_before_pytest_ends_is_no_finish(tmp_path):
    # The change's conftest writes a finish line into the record and leaves at once: the run
    # never reached pytest's own session end.
    conftest = APPEND + (
        "\n\ndef pytest_collection_finish(session):\n"
        "    append({'t': 'finish', 'exitstatus': 0, 'counts': {'passed': 2},\n"
        "            'collected': 2, 'failed': 0})\n"
        "    os._exit(0)\n"
    )
    said = _record_run(
        tmp_path,
        {
            "conftest.py": conftest,
            "tests/test_a.py": "def test_a():\n    pass\n\n\ndef test_b():\n    assert 0\n",
        },
    )
    assert said.status == "ERROR", (said.status, said.reason, said.tests)
    assert not said.tests


def test_a_failure_recorded_where_pytest_exited_0_is_an_error(tmp_path):
    # A passing test appends a failed phase for another, passing test: pytest saw both pass and
    # exited 0; the record disagrees with pytest's exit status.
    forged = APPEND + (
        "\n\ndef test_a():\n"
        "    append({'t': 'phase', 'id': 'tests/test_a.py::test_b', 'when': 'call',\n"
        "            'outcome': 'failed', 'dur': 0.0})\n\n\n"
        "def test_b():\n    pass\n"
    )
    said = _record_run(tmp_path, {"tests/test_a.py": forged})
    assert said.status == "ERROR", (said.status, said.reason, said.tests)
    assert "exit status" in (said.reason or "")


@needs_bwrap
def test_a_sandboxed_reproduction_under_xdist_is_still_recorded(tmp_path):
    # With `-n 2` in the command, xdist's workers could not write to the read-only record
    # directory: in the sandbox the run stays in one process, and its record is whole.
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(f"{PYTEST} -p xdist.plugin -n 2"),
            "pytest.ini": PYTEST_INI,
            "README.md": "add returns the sum of its arguments\n",
            "calc.py": CALC,
            "tests/test_other.py": "def test_nothing():\n    pass\n",
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": "def add(a, b):\n    return a - b\n"})
    code = (
        "from calc import add\n\n\ndef test_sum():\n"
        "    assert add(2, 3) == 5, 'add no longer sums'\n"
    )
    spec = {"kind": "specified", "quote": "add returns the sum of its arguments",
            "source": "README.md"}  # fmt: skip
    finding = _finding(code, spec)
    finding["repro"]["fails"] = "add no longer sums"
    done = review(repo, format="json", findings=[finding])
    (graded,) = done.json["findings"]
    runs = [r for r in graded["runs"] if r["name"] == "test_one"]
    assert runs and all(r["sandboxed"] and r["tests_from"] == "probe" for r in runs), runs
    assert graded["kind"] == "fail", graded["gates"]


# The adversarial run's escape: a reproduction named conftest.py runs before the probe's own
# configure; every descriptor it inherited is tried as a directory to climb out of, to the user's
# .git (its hooks) and working tree. A record file's descriptor leads nowhere.
CLIMB = """import os

for fd in os.listdir("/proc/self/fd"):
    for up in ("..", "../..", "../../.."):
        try:
            top = os.open(up, os.O_RDONLY | os.O_DIRECTORY, dir_fd=int(fd))
        except OSError:
            continue
        for name in ("hooks/pre-commit", "../PWNED", "PWNED"):
            try:
                os.close(os.open(name, os.O_WRONLY | os.O_CREAT, 0o755, dir_fd=top))
            except OSError:
                pass
        os.close(top)


def test_sum():
    from calc import add

    assert add(2, 3) == 5, "add no longer sums"
"""


@needs_bwrap
def test_a_reproduction_cannot_climb_out_through_an_inherited_descriptor(tmp_path):
    repo = _repo(tmp_path)
    stage(repo, {"calc.py": "def add(a, b):\n    return a - b\n"})
    spec = {"kind": "specified", "quote": "add returns the sum of its arguments",
            "source": "README.md"}  # fmt: skip
    finding = _finding(CLIMB, spec)
    finding["repro"] = {"path": "conftest.py", "code": CLIMB, "fails": "add no longer sums"}
    before = user_state(repo)
    review(repo, format="json", findings=[finding])
    assert user_state(repo) == before
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert not (repo / "PWNED").exists()


@needs_bwrap
def test_a_reproduction_cannot_take_the_probes_name(tmp_path):
    # `python -m pytest` puts the worktree's root first on sys.path: a reproduction named
    # eyeful_probe.py would be loaded as the probe, and write the record it is judged by.
    repo = _repo(tmp_path)
    fake = (
        "import json, os\n"
        "fd = int(os.environ.get('EYEFUL_PROBE_FD', '0:0:0').split(':')[0])\n"
        "def test_sum():\n    assert False, 'division by zero'\n"
    )
    finding = _finding(fake, {"kind": "implicit"})
    finding["repro"] = {"path": "eyeful_probe.py", "code": fake, "fails": "division by zero"}
    done = review(repo, format="json", findings=[finding])
    (graded,) = done.json["findings"]
    assert graded["kind"] != "fail"
    assert "has the name of eyeful's probe" in json.dumps(graded), graded


def test_a_process_the_tests_start_does_not_inherit_the_record(tmp_path):
    # `os.system` hands a shell every inheritable descriptor: the record's is not one of them.
    test = (
        "import os\n\n\ndef test_a():\n"
        "    assert os.system('ls -l /proc/$$/fd | grep -c record-main > seen.txt') in (0, 256)\n"
        "    assert open('seen.txt').read().strip() == '0'\n"
    )
    said = _record_run(tmp_path, {"tests/test_a.py": test})
    assert said.status == "PASSED", (said.status, said.reason, said.failures)
