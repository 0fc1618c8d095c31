"""Every test runs in a sealed environment: its own HOME, git config and XDG config directory.

Repositories are real, made with real git in temporary directories, and the project commands a
review runs are real processes. A review's verdict is tested through the core, in the test's own
process (tests/core.py: the review command's phases, given what `git eyeful` would have); eyeful
is started as a user starts it where the test is about the program itself (git's dispatch, the
console scripts, the command line, hooks, terminals, signals, the crash handler, start-up).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import PYTHON

# Seconds each module's tests take (the sum of their wall times in a run of the README's command,
# `-n 3`, 2026-12-07). With `-n`, xdist gives each worker a whole module at a time (`--dist
# loadfile`), in the order collected: the longest modules go first and the short ones fill in at
# the end, so the workers finish together. Ordering only: no test depends on it, and a module
# missing here runs last.
MODULE_SECONDS = {
    "test_change_side": 101, "test_clean_claims": 74, "test_representation": 68, "test_unseen": 46,
    "test_hooks": 44, "test_fit": 40, "test_verify": 37, "test_safety": 34, "test_regress": 34,
    "test_agents": 27, "test_environments": 23, "test_replay": 21, "test_hardening": 19,
    "test_cli": 19, "test_structured_failures": 18, "test_providers": 18, "test_affected_ways": 18,
    "test_injection": 17, "test_focused_ids": 16, "test_awkward": 15, "test_affected_maps": 15,
    "test_affected": 15, "test_evidence": 14, "test_sandbox": 13, "test_adversarial": 13,
    "test_review": 11, "test_contexts": 11, "test_safety_inputs": 9, "test_failures": 9,
    "test_eval_verified": 9, "test_probe": 8, "test_eval_mine": 7, "test_bounded_report": 7,
    "test_map_marks": 6, "test_forgery": 6, "test_init": 5, "test_report": 4, "test_first_run": 4,
    "test_wording": 3, "test_runs_change": 3, "test_eval_run": 3, "test_claims": 3,
    "test_check_speed": 3, "test_agent_jail": 3, "test_sarif": 1, "test_results": 1,
    "test_help": 1,
}  # fmt: skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: -MODULE_SECONDS.get(item.path.stem, 0))


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    return seal(tmp_path_factory, monkeypatch)


def seal(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sealed environment; also for module-scoped fixtures (with a MonkeyPatch.context())."""
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith(("GIT_", "PRE_COMMIT")) or name in ("NO_COLOR", "VIRTUAL_ENV"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_EDITOR", "false")  # fail rather than wait for an editor
    (home / ".gitconfig").write_text(
        "[user]\n\tname = eyeful tests\n\temail = tests@eyeful.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        '[protocol "file"]\n\tallow = always\n'
        # No `git maintenance run --auto` after each of the fixtures' commits: a process each.
        "[maintenance]\n\tauto = false\n",
        encoding="utf-8",
    )
    bin_dir = str(Path(PYTHON).parent)
    path = os.environ.get("PATH", "")
    if not path.startswith(bin_dir + os.pathsep):  # sealing twice leaves the same PATH
        monkeypatch.setenv("PATH", bin_dir + os.pathsep + path)
    # pytest inside project commands must not inherit this run's plugins or options.
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    # The projects' own pytest runs load no third-party plugin (xdist, timeout, ...): they need
    # none, and loading them costs most of a short pytest run's start-up. A test about plugins
    # turns this off in its own command (`env -u PYTEST_DISABLE_PLUGIN_AUTOLOAD ...`).
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    # The processes a test starts write their bytecode (in its temporary directories) whatever
    # the shell that started the suite says: where PYTHONDONTWRITEBYTECODE is set, each of the
    # projects' pytest runs compiled and rewrote its test modules anew, some 16 s of CPU a run.
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    # What pip and virtualenv download and unpack (eyeful's dependencies for pre-commit's hook
    # environments, build backends) is kept once per session, for all workers, instead of in
    # each test's HOME: content-addressed caches that change no result, only the downloading.
    shared = tmp_path_factory.getbasetemp()
    if shared.name.startswith("popen-gw"):  # an xdist worker's; its parent is the session's
        shared = shared.parent
    monkeypatch.setenv("PIP_CACHE_DIR", str(shared / "pip-cache"))
    monkeypatch.setenv("VIRTUALENV_OVERRIDE_APP_DATA", str(shared / "virtualenv-app-data"))
    # The temporary directory of what a test starts is this worker's own: a project's pytest
    # run that asks for `tmp_path` makes its `pytest-of-USER` there, and so cleans up (keeps its
    # last three) only its neighbours' in this suite, never another suite's leftovers in /tmp
    # (a run that did so spent some 100 s of the suite's wall time deleting them).
    scratch = tmp_path_factory.getbasetemp() / "tmp"
    scratch.mkdir(exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr("tempfile.tempdir", None)
    return home


def pytest_configure(config: pytest.Config) -> None:
    _interruptible()
    _compile_eyeful()


def _interruptible() -> None:
    """SIGINT as a terminal gives it, whoever started the suite: a shell starts a background job
    (`cmd &` without job control) with SIGINT ignored, every process inherits that, and the
    tests that interrupt eyeful (which keeps an ignored SIGINT ignored, as it keeps a nohup's
    SIGHUP) would see it go on. A handler is reset to the default at exec; SIG_IGN is not."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _compile_eyeful() -> None:
    """eyeful's bytecode, written once: the suite starts eyeful some 200 times (hooks, the
    command line, terminals, signals, the eval), and where PYTHONDONTWRITEBYTECODE is set (CI,
    many shells) an editable install would compile every module afresh at each start (about
    0.1 s of CPU each). An install compiles them the same way; compileall skips what is up to
    date. The bundled example project is left alone."""
    import compileall
    import re

    import eyeful

    examples = re.compile(r"[/\\]examples[/\\]")
    compileall.compile_dir(Path(eyeful.__file__).parent, quiet=1, rx=examples)


@pytest.fixture
def python() -> str:
    return sys.executable


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """With EYEFUL_SUITE_PROFILE=FILE, one JSON line per test: the CPU it cost this process and
    every process it started and waited for (eyeful, the projects' pytest runs, git, pip), with
    module fixtures counted in the first test that uses them. `--durations` gives wall time
    only; see benchmarks/suite_profile.py."""
    path = os.environ.get("EYEFUL_SUITE_PROFILE")
    if not path:
        yield
        return
    before = os.times()
    yield
    after = os.times()
    row = {
        "test": item.nodeid,
        "worker": getattr(item.config, "workerinput", {}).get("workerid", "main"),
        "self": after.user + after.system - before.user - before.system,
        "children": after.children_user
        + after.children_system
        - before.children_user
        - before.children_system,
        "wall": after.elapsed - before.elapsed,
        "end": after.elapsed,
    }
    with open(path, "a", encoding="utf-8") as out:  # one short append per test: whole lines
        out.write(json.dumps(row) + "\n")


@pytest.fixture
def go_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """`go` run by a review: one build cache for the session's tests, no network, no toolchain
    download."""
    monkeypatch.setenv("GOCACHE", str(Path.home().parent / "go-build"))
    monkeypatch.setenv("GOTOOLCHAIN", "local")
    monkeypatch.setenv("GOFLAGS", "-mod=mod")
    monkeypatch.setenv("GOPROXY", "off")
