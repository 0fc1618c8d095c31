"""Code nobody confirmed runs in a sandbox (issue 21, point 1): a reproduction writes nothing
outside its worktree and private directories, reaches no network, sees none of eyeful's
processes and none of the user's environment; where no sandbox can be had, the review says so,
and `sandbox = "require"` makes that exit 3."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from eyeful import sandbox
from eyeful.agents.command import CommandProvider
from eyeful.config import AgentConfig
from tests.core import review
from tests.gitrepo import (
    PYTEST_INI,
    confirm,
    eyeful,
    eyeful_config,
    git,
    make_repo,
    report_json,
    stage,
    user_state,
)

needs_bwrap = pytest.mark.skipif(
    sandbox.unavailable() is not None,
    reason=f"no sandbox here: {sandbox.unavailable()} (.ci/run installs bubblewrap as root)",
)

CALC = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a - b\n"
ADD_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def _finding(code: str, fails: str) -> dict:
    return {
        "id": "f1", "expert": "correctness", "severity": "error", "evidence": "test",
        "path": "calc.py", "line": 2, "title": "add broke", "body": "add no longer sums.",
        "oracle": {"kind": "specified", "quote": "add returns the sum of its arguments",
                   "source": "README.md"},
        "repro": {"path": "tests/test_repro.py", "code": code, "fails": fails},
    }  # fmt: skip


def _repo(tmp_path: Path, extra: str = "") -> Path:
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(extra=extra),
            "pytest.ini": PYTEST_INI,
            "README.md": "add returns the sum of its arguments\n",
            "calc.py": CALC,
            "tests/test_other.py": "def test_nothing():\n    pass\n",
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": BROKEN})
    return repo


def _review(repo: Path, tmp_path: Path, code: str, fails: str, env: dict | None = None):
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps([_finding(code, fails)]), encoding="utf-8")
    if env is not None:  # a PATH without bwrap: the program starts afresh, and looks again
        proc = eyeful("--format", "json", "--findings", str(findings), cwd=repo, env=env)
        return proc.returncode, report_json(proc)
    done = review(repo, format="json", findings=findings)
    return done.exit_code, done.json


def _change_runs(report: dict) -> list[dict]:
    (finding,) = report["findings"]
    return [r for r in finding["runs"] if r["side"] == "change" and r["name"] == "test_one"]


@needs_bwrap
def test_a_reproduction_cannot_write_outside_its_worktree(tmp_path):
    repo = _repo(tmp_path)
    home = Path(os.environ["HOME"])
    code = f"""from pathlib import Path

from calc import add


def test_sum():
    Path({str(repo / "calc.py")!r}).write_text("pwned")
    Path({str(home / "planted")!r}).write_text("pwned")
    assert add(2, 3) == 5, "add no longer returns the sum"
"""
    before = user_state(repo)
    code_, report = _review(repo, tmp_path, code, "add no longer returns the sum")
    runs = _change_runs(report)
    assert runs and all(r["sandboxed"] for r in runs)
    assert all(r["status"] == "ERROR" and "sandbox stopped it" in r["reason"] for r in runs), runs
    (finding,) = report["findings"]
    assert finding["kind"] != "fail"  # the sandbox stopped it: no finding about the code
    assert user_state(repo) == before
    assert not (home / "planted").exists()
    assert code_ != 1


@needs_bwrap
def test_a_reproduction_sees_no_network_no_processes_and_no_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("EYEFUL_TEST_SECRET", "hunter2")
    repo = _repo(tmp_path)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    # A Unix-domain socket with a path (a daemon's: as root, one that runs what it is told as
    # root outside the sandbox, helper-58) is no more reachable than the network.
    daemon = socket.socket(socket.AF_UNIX)
    daemon.bind(str(tmp_path / "daemon.sock"))
    daemon.listen()
    daemon.setblocking(False)
    logger = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # a /dev/log, say
    logger.bind(str(tmp_path / "log.sock"))
    logger.setblocking(False)
    code = f"""import os
import socket
from pathlib import Path

from calc import add


def _reachable():
    try:
        socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    except OSError:
        return False
    return True


def _daemon():
    try:
        with socket.socket(socket.AF_UNIX) as there:
            there.connect({str(tmp_path / "daemon.sock")!r})
    except OSError:
        return False
    return True


def _logger():
    try:  # (one end of a datagram pair sends to any path: helper-59)
        ends = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        ends[0].sendto(b"out", {str(tmp_path / "log.sock")!r})
    except OSError:
        return False
    return True


def test_sum():
    seen = []
    if _reachable():
        seen.append("network")
    if _daemon():
        seen.append("a daemon's socket")
    if _logger():
        seen.append("a datagram socket")
    if Path("/proc/{os.getpid()}").exists():
        seen.append("processes")
    if "EYEFUL_TEST_SECRET" in os.environ:
        seen.append("secret")
    if not os.environ["TMPDIR"].startswith({str(repo / ".git" / "eyeful")!r}):
        seen.append("tmp")
    assert add(2, 3) == 5, f"add no longer returns the sum (saw: {{seen or 'nothing'}})"
"""
    try:
        _, report = _review(repo, tmp_path, code, "add no longer returns the sum")
    finally:
        listener.close()
    with pytest.raises(BlockingIOError):
        daemon.accept()  # nobody came
    with pytest.raises(BlockingIOError):
        logger.recv(16)  # nothing came
    daemon.close()
    logger.close()
    runs = _change_runs(report)
    assert runs and all(r["sandboxed"] for r in runs)
    # add is broken, so the assertion fails; had the test seen anything, it would say so. It
    # tried the network, so the run is the sandbox's doing, not a failure of the code.
    assert all("(saw: nothing)" in r["tail"] for r in runs), [r["tail"] for r in runs]
    assert all(
        r["status"] == "ERROR" and "the sandbox stopped it (socket." in r["reason"] for r in runs
    ), [(r["status"], r["reason"]) for r in runs]


def _path_without_bwrap(tmp_path: Path) -> str:
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("git", "sh", "env"):
        found = shutil.which(name)
        assert found is not None
        (tools / name).symlink_to(found)
    bin_dir = str(Path(shutil.which("git-eyeful") or "").parent)
    return os.pathsep.join([bin_dir, str(tools)])


@pytest.mark.parametrize("mode", ["auto", "require"])
def test_without_a_sandbox_the_review_says_so_and_require_exits_3(tmp_path, mode):
    repo = _repo(tmp_path, extra=f'sandbox = "{mode}"')
    env = {**os.environ, "PATH": _path_without_bwrap(tmp_path)}
    code = "from calc import add\n\n\ndef test_sum():\n"
    code += "    assert add(2, 3) == 5, 'add no longer returns the sum'\n"
    code_, report = _review(repo, tmp_path, code, "add no longer returns the sum", env)
    texts = [u["text"] for u in report["uncertainty"]]
    (finding,) = report["findings"]
    if mode == "auto":
        assert any("ran unsandboxed: bubblewrap (bwrap) is not installed" in t for t in texts)
        assert finding["kind"] == "fail", finding  # verified all the same
        assert code_ == 1
    else:
        assert any(
            "could not run (sandbox is required): bubblewrap (bwrap) is not installed" in t
            for t in texts
        )
        assert finding["kind"] != "fail"
        assert all(r["status"] == "ERROR" for r in _change_runs(report))
        assert code_ == 3


# As root (Docker, CI), bwrap keeps root's capabilities unless told otherwise: a reproduction
# could remount the read-only root writable and write into the user's repository (issue 34).
as_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="only root has capabilities to drop (CI runs as root)"
)

# What a reproduction or an agent with a shell tries as root: print its capabilities and uid,
# remount the root writable, then write into the user's tree, .git/hooks and .git/refs.
ESCAPE = """
import subprocess
from pathlib import Path


def escape(repo):
    status = Path("/proc/self/status").read_text().splitlines()
    caps = next(line.split()[1] for line in status if line.startswith("CapEff"))
    uid = next(line.split()[1] for line in status if line.startswith("Uid"))
    mount = subprocess.run(["mount", "-o", "remount,rw", "/"], capture_output=True).returncode
    wrote = []
    for path in ("PWNED.txt", ".git/hooks/pre-push", ".git/refs/heads/evil"):
        try:
            Path(repo, path).write_text("pwned")
            wrote.append(path)
        except OSError:
            pass
    return f"caps={caps} uid={uid} mount={mount} wrote={wrote}"
"""


@as_root
@needs_bwrap
def test_as_root_a_reproduction_has_no_capabilities_and_cannot_remount(tmp_path):
    repo = _repo(tmp_path)
    code = f"""{ESCAPE}
from calc import add


def test_sum():
    seen = escape({str(repo)!r})
    assert add(2, 3) == 5, f"add no longer returns the sum ({{seen}})"
"""
    before = user_state(repo)
    _, report = _review(repo, tmp_path, code, "add no longer returns the sum")
    runs = _change_runs(report)
    assert runs and all(r["sandboxed"] for r in runs)
    for run in runs:
        assert "caps=0000000000000000" in run["tail"], run["tail"]
        assert "uid=0" not in run["tail"] and "mount=0" not in run["tail"], run["tail"]
        assert "wrote=[]" in run["tail"], run["tail"]
    assert user_state(repo) == before
    assert not (repo / "PWNED.txt").exists()


@as_root
@needs_bwrap
def test_as_root_a_command_agent_has_no_capabilities_and_cannot_remount(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    monkeypatch.chdir(repo)
    before = user_state(repo)
    script = tmp_path / "agent.py"
    script.write_text(f"{ESCAPE}\nimport sys\nsys.stdin.read()\nprint(escape({str(repo)!r}))\n")
    export = tmp_path / "export"
    export.mkdir()
    provider = CommandProvider(AgentConfig(command=f"{sys.executable} {script}", timeout=60))
    seen = provider.complete("review this", cwd=export).text
    assert "caps=0000000000000000" in seen, seen
    assert "uid=0" not in seen and "mount=0" not in seen and "wrote=[]" in seen, seen
    assert user_state(repo) == before


# tinydb's shape (issue 34, point 4): a test of the project writes to a path that exists nowhere
# and expects the error. That write fails the same way outside the sandbox: it is the test's
# own, not the sandbox's doing, and a correct fix is verified with that test in the suite, also
# when another test of the suite fails there as it did before the fix.
SUITE = """import pytest

from calc import add


def test_add():
    assert add(2, 3) == 5


def test_always_failing():
    assert False, "fails on every tree"


def test_a_write_here():
    with open(WHERE, "w") as out:
        out.write("x")
"""
NOWHERE = "/this/is/an/invalid/path/db.json"
FIX = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
       "-    return a - b\n+    return a + b\n")  # fmt: skip


def _fix_suite_runs(tmp_path: Path, test_a_write_here: str) -> tuple[dict, list[dict]]:
    suite = SUITE.replace(SUITE[SUITE.index("def test_a_write_here") :], test_a_write_here)
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(),
            "pytest.ini": PYTEST_INI,
            "README.md": "add returns the sum of its arguments\n",
            "calc.py": CALC,
            "tests/test_calc.py": suite,
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": BROKEN})
    finding = _finding(ADD_TEST.replace("== 5", "== 5, 'add no longer sums'"), "add no longer sums")
    finding["fix"] = {"diff": FIX}
    done = review(repo, format="json", findings=[finding])
    (graded,) = done.json["findings"]
    runs = [r for r in graded["runs"] if r["side"] == "fix" and r["name"] == "test"]
    assert runs and all(r["sandboxed"] for r in runs), graded["runs"]
    return graded, runs


@needs_bwrap
def test_a_write_to_a_path_that_exists_nowhere_is_the_tests_own(tmp_path):
    code = (
        "def test_an_invalid_path_is_refused():\n    with pytest.raises(OSError):\n"
        f"        open({NOWHERE!r}, 'w')\n"
    )
    graded, runs = _fix_suite_runs(tmp_path, code)
    assert graded["kind"] == "fail", graded["gates"]
    assert all("sandbox stopped it" not in (r["reason"] or "") for r in runs), runs
    assert all(r["status"] == "FAILED" for r in runs), runs  # test_always_failing, as before
    assert graded["fix_verified"] is True, (graded["fix_note"], runs)


@needs_bwrap
def test_a_write_into_a_directory_that_exists_outside_is_the_sandboxs(tmp_path):
    # The same write into a directory that exists (read-only in the sandbox) would succeed
    # outside: the sandbox stopped it, and the run says nothing of the fix.
    code = f"def test_a_write_here():\n    open({str(tmp_path / 'db.json')!r}, 'w').write('x')\n"
    graded, runs = _fix_suite_runs(tmp_path, code)
    assert all("sandbox stopped it" in (r["reason"] or "") for r in runs), runs
    assert graded["fix_verified"] is not True


# Found by an adversarial helper: the confirmed setup ran, unsandboxed, on a worktree that
# already held the finding's files, so a reproduction named GNUmakefile (make prefers it to the
# Makefile) or a fix rewriting the Makefile's recipe ran as the user. Setup now runs on the tree
# it was confirmed for, and the finding's files go on after it.
MAKEFILE = "setup:\n\t@true\n"


@needs_bwrap
@pytest.mark.skipif(shutil.which("make") is None, reason="no make here")
@pytest.mark.parametrize("route", ["reproduction", "fix"])
def test_setup_never_runs_what_a_finding_brought(tmp_path, route):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(setup="make -s setup", extra='isolate = "none"\n'),
            "Makefile": MAKEFILE,
            "pytest.ini": PYTEST_INI,
            "README.md": "add returns the sum of its arguments\n",
            "calc.py": CALC,
            "tests/test_other.py": "def test_nothing():\n    pass\n",
        },
    )
    confirm(repo)
    stage(repo, {"calc.py": BROKEN})
    planted = tmp_path / "planted"
    recipe = f"setup:\n\t@touch {planted}  # add no longer sums\n"  # the fails text is here
    finding = _finding(ADD_TEST.replace("== 5", "== 5, 'add no longer sums'"), "add no longer sums")
    if route == "reproduction":
        finding["repro"] = {"path": "GNUmakefile", "code": recipe, "fails": "add no longer sums"}
    else:
        finding["fix"] = {
            "diff": "--- a/Makefile\n+++ b/Makefile\n@@ -1,2 +1,2 @@\n setup:\n-\t@true\n"
            f"+\t@touch {planted}\n"
        }
    before = user_state(repo)
    review(repo, format="json", findings=[finding])
    assert not planted.exists()
    assert user_state(repo) == before


# helper-58: under `sandbox = "all"` the suite's runs ran in the sandbox but left the worktree
# unmarked, so the next checkout kept the ignored files they wrote: a test could plant what a
# later review imports (here the local overrides the code reads; a forged bytecode file, a
# module the unsandboxed setup runs), and that review said clean on a change that breaks a test.
LOCAL_OVERRIDES = (
    "def add(a, b):\n    return a + b\n\n\ntry:\n"
    "    from local_settings import *  # noqa: F403 (a developer's own, ignored)\n"
    "except ImportError:\n    pass\n"
)
PLANTING = (
    "from pathlib import Path\n\n\ndef test_plants():\n"
    "    Path('local_settings.py').write_text('def add(a, b):\\n    return a + b\\n')\n"
)


@needs_bwrap
def test_what_a_sandboxed_run_leaves_among_ignored_files_is_gone_before_the_next(tmp_path):
    repo = make_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": eyeful_config(extra='sandbox = "all"\n'),
            ".gitignore": "local_settings.py\n",
            "pytest.ini": PYTEST_INI,
            "calc.py": LOCAL_OVERRIDES,
            "tests/test_calc.py": ADD_TEST,
        },
    )
    confirm(repo)
    stage(repo, {"tests/test_plant.py": PLANTING})
    first = review(repo, format="json")
    assert first.exit_code == 0 and all(r["sandboxed"] for r in first.json["runs"]), first.json
    (repo / "tests" / "test_plant.py").unlink()
    stage(repo, {"calc.py": LOCAL_OVERRIDES.replace("a + b", "a - b", 1)})
    second = review(repo, format="json")
    assert second.exit_code == 1, second.markdown


HIDDEN_PLANTS = """import os

PLANT = "open({marker!r}, 'a').write('ran unsandboxed\\\\n')\\n"


def test_plants():
    os.makedirs('tests/.git', exist_ok=True)
    for where in ('vendor/lib/conftest.py', 'tests/.git/conftest.py', 'stripper.py'):
        with open(where, 'w') as out:
            out.write(PLANT + ('import sys\\nsys.stdout.write(sys.stdin.read())\\n'
                               if where == 'stripper.py' else ''))
    with open('.gitattributes', 'w') as out:
        out.write('* filter=stripper\\n')
    with open('calc.py', 'a') as out:
        out.write('\\n')  # a tracked file that looks changed: git's clean filter reads it
    assert False, 'planted'
"""


@needs_bwrap
def test_what_a_reproduction_hides_where_git_does_not_look_never_runs_unsandboxed(tmp_path):
    """helper-63: a reproduction wrote a conftest.py into a submodule's directory (eyeful never
    fills it) and into a directory named `.git`, which `git clean` never sees, and a later
    review's own test run loaded it unsandboxed; and a `.gitattributes` naming your clean
    filter (`python -m stripper`, run in the worktree) with a `stripper.py` beside it, which
    eyeful's next `git diff` there ran with your rights."""
    marker = tmp_path / "ESCAPED"
    lib = make_repo(tmp_path / "lib", {"README.md": "a library\n"})
    repo = _repo(tmp_path, extra="")
    git(repo, "submodule", "-q", "add", str(lib), "vendor/lib")
    git(repo, "commit", "-qm", "vendor")  # (with the broken add _repo staged)
    git(repo, "config", "filter.stripper.clean", f"{sys.executable} -m stripper")
    confirm(repo)
    stage(repo, {"calc.py": CALC})
    _, first = _review(repo, tmp_path, HIDDEN_PLANTS.format(marker=str(marker)), "planted")
    gates = {g["name"]: g["status"] for g in first["findings"][0]["gates"]}
    assert gates["fails_as_claimed"] == "pass", first["findings"][0]  # it planted them all
    stage(repo, {"calc.py": CALC + "\n# tidy\n"})  # a review with no finding: the suite runs
    second = review(repo, format="json")
    assert second.exit_code == 0, second.markdown
    assert not marker.exists(), marker.read_text()
    # (A worktree the second review did not take keeps its taint mark: its next checkout sweeps.)


@pytest.mark.parametrize("removes", [False, True], ids=["leaves-it", "removes-it"])
def test_an_empty_directory_setup_made_outlives_a_reproduction(tmp_path, removes):
    """helper-64: setup makes an empty ignored `instance/`; after a reproduction ran there, the
    sweep took the directory (no file of it was listed) and setup, its files whole, did not run
    again: the test writing into it failed on both sides ever after, and a real break of it was
    pre-existing. helper-65: nor a directory in it (`instance/uploads`); and where the
    reproduction removed it, setup runs again."""
    code = (
        "import os\n\n\ndef save(name, text):\n"
        "    with open(os.path.join('instance', 'uploads', name), 'w') as out:\n"
        "        out.write(text)\n    return text\n"
    )
    test = (
        "import os\n\nfrom store import save\n\n\ndef test_save():\n"
        "    assert save('x.txt', 'hi') == 'hi'\n"
        "    os.remove(os.path.join('instance', 'uploads', 'x.txt'))\n"
    )
    config = eyeful_config(extra='isolate = "none"', setup="mkdir -p instance/uploads")
    files = {"pyproject.toml": config, "pytest.ini": PYTEST_INI, ".gitignore": "instance/\n",
             "README.md": "a store\n", "store.py": code, "tests/test_store.py": test}  # fmt: skip
    repo = make_repo(tmp_path / "repo", files)
    confirm(repo)
    stage(repo, {"store.py": code + "\n# saved\n"})
    repro = "import shutil\n\n\ndef test_r():\n"
    repro += "    shutil.rmtree('instance', ignore_errors=True)\n" if removes else ""
    finding = _finding(repro + "    assert 1 == 2, 'one is not two'\n", "one is not two")
    finding["path"], finding["line"] = "store.py", 1
    review(repo, format="json", findings=[finding])
    stage(repo, {"store.py": code.replace("return text", "return text.upper()")})
    done = review(repo, format="json")
    assert done.exit_code == 1, done.markdown
    assert [r["test"] for r in done.json["regressions"]] == ["tests/test_store.py::test_save"]


def test_a_reproduction_leaving_a_very_deep_tree_breaks_no_later_review(tmp_path):
    """helper-64: Python's rmtree recurses; a directory some 1,200 deep that a reproduction left
    made the sweep raise RecursionError (exit 4) in that review and every later one."""
    repo = _repo(tmp_path)
    deep = (
        "import os\n\n\ndef test_deep():\n    here = os.getcwd()\n    os.mkdir('deep')\n"
        "    os.chdir('deep')\n    for _ in range(1200):\n        os.mkdir('d')\n"
        "        os.chdir('d')\n    os.chdir(here)\n    assert False, 'deep enough'\n"
    )
    try:
        first, _ = _review(repo, tmp_path, deep, "deep enough")
        assert first in (0, 1, 3), first
        stage(repo, {"calc.py": CALC})
        done = review(repo, format="json")
        assert done.exit_code == 0, done.markdown
    finally:  # (pytest's own removal of tmp_path recurses too: the worktrees it did not reuse)
        subprocess.run(["rm", "-rf", str(repo / ".git" / "eyeful")], check=False)
