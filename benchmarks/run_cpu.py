"""Where a warm review's CPU goes, by process: part of benchmarks/bench_run.py's profile.

Warm `git-eyeful --format json` reviews of new staged changes, started through a small wrapper
that reports the CPU of eyeful's own process (at its start: Python's start-up; after importing
what the first review imported; at its end) and of all its child processes. Then each part on
its own, interleaved, median of the repeats: those imports split (pydantic with a model built,
then pygit2, then the rest), the test command without and with eyeful's probe (in the pool's
worktree, so that only the probe differs), git's processes in the order a review runs them
(rev-parse in the repository; diff, checkout and clean in the worktree), and the interpreters
asked for the run cache's key. What no part accounts for is printed as the rest.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench_run import Bench

# `git-eyeful --format json` as its console script starts it, after importing the modules named
# in its arguments (none on the first review: that one says which to import on the others); then
# its CPU at the start (Python's start-up), after those imports, at the end, its children's
# (every process it waited for, the reaped orphans included) and the modules it holds.
WRAPPER = """
import time
started = time.process_time()
import json, resource, sys
for name in sys.argv[1:]:
    try:
        __import__(name)
    except Exception:
        pass
imported = time.process_time()
from eyeful.cli.launch import main
sys.argv = ["git-eyeful", "--format", "json"]
code = main()
sys.stdout.flush()
own = resource.getrusage(resource.RUSAGE_SELF)
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
held = sorted(name for name in sys.modules if "." not in name or name.startswith("eyeful."))
sys.stderr.write("eyeful-cpu " + json.dumps({"start": started, "imports": imported - started,
                 "self": own.ru_utime + own.ru_stime, "children": kids.ru_utime + kids.ru_stime,
                 "modules": held}) + "\\n")
sys.exit(code)
"""

# The imports split, in one process: pydantic (a model built, as eyeful's build at import) with
# the standard library it needs, then pygit2, then the rest of what the review imported.
SPLIT = """
import time
started = time.process_time()
import pydantic
class M(pydantic.BaseModel):
    x: int
M(x=1).model_dump_json()
after_pydantic = time.process_time()
import pygit2
after_pygit2 = time.process_time()
import sys
for name in sys.argv[1:]:
    try:
        __import__(name)
    except Exception:
        pass
done = time.process_time()
print(after_pydantic - started, after_pygit2 - after_pydantic, done - after_pygit2)
"""


def _cpu(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one process and the children it waited for."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv[:4]} exited {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime


def _warm_review(bench: Bench, modules: list[str]) -> dict[str, Any]:
    bench.stage_change()
    proc = bench.run([bench.python, "-c", WRAPPER, *modules], check=False)
    report = json.loads(proc.stdout)
    if proc.returncode != 0 or report["outcome"] != "clean" or report["runs"][0]["cached"]:
        raise RuntimeError(f"the profiled warm review: exit {proc.returncode}\n{proc.stderr}")
    line = [text for text in proc.stderr.splitlines() if text.startswith("eyeful-cpu ")][-1]
    said: dict[str, Any] = json.loads(line.removeprefix("eyeful-cpu "))
    return said


def _split(bench: Bench, modules: list[str]) -> list[float]:
    """CPU of importing pydantic (a model built), then pygit2, then the rest, in one process."""
    out = bench.run([bench.python, "-c", SPLIT, *modules]).stdout
    return [float(value) for value in out.split()]


def _interpreters_asked(bench: Bench) -> float:
    """CPU of the processes that make the run cache's environment key (eyeful/environment.py)."""
    code = (
        "import resource; from pathlib import Path\n"
        "from eyeful.environment import EnvironmentKey\n"
        "before = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "EnvironmentKey([], Path.cwd()).value()\n"
        "after = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)\n"
    )
    return float(bench.run([bench.python, "-c", code]).stdout)


def profile_cpu(bench: Bench, repeat: int) -> None:
    from eyeful.pytest_records import plugin_env

    print("\nWhere a warm review's CPU goes, by process (median of", repeat, "iterations; each")
    print("part measured on its own, interleaved)")
    print("-" * 72)
    modules: list[str] = _warm_review(bench, [])["modules"]
    reviews = [_warm_review(bench, modules) for _ in range(repeat)]
    worktrees = sorted((bench.repo / ".git" / "eyeful" / "worktrees").iterdir())
    where = worktrees[0]
    head = bench.git("rev-parse", "HEAD").strip()
    env = bench.env
    records = Path(tempfile.mkdtemp(prefix="eyeful-bench-records-"))
    probed = {**env, **plugin_env(records, env)}
    test = ["/bin/sh", "-c", bench.test_cmd]
    git = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"]
    splits: list[list[float]] = []
    parts: dict[str, Callable[[], float]] = {
        "test": lambda: _cpu(test, where, env),
        "test+probe": lambda: _cpu(test, where, probed),
        "git": lambda: sum(
            _cpu(argv, cwd, env)
            for argv, cwd in (
                (["git", "rev-parse", "--absolute-git-dir", "--show-toplevel"], bench.repo),
                ([*git, "diff", "--name-only", "-z", "HEAD"], where),
                ([*git, "checkout", "--quiet", "--force", "--detach", head], where),
                ([*git, "clean", "-ffdq"], where),
            )
        ),
        "interpreters": lambda: _interpreters_asked(bench),
    }
    times: dict[str, list[float]] = {name: [] for name in parts}
    for turn in range(repeat):
        order = list(parts.items())
        for name, measure in order if turn % 2 else reversed(order):
            times[name].append(measure())
        splits.append(_split(bench, modules))
    for stale in records.glob("*"):
        stale.unlink()
    records.rmdir()
    mid = {name: statistics.median(values) for name, values in times.items()}
    said = {key: statistics.median(float(r[key]) for r in reviews)
            for key in ("start", "imports", "self", "children")}  # fmt: skip
    own, kids, start, imports = said["self"], said["children"], said["start"], said["imports"]
    pydantic, pygit2, rest = (statistics.median(split[i] for split in splits) for i in range(3))
    probe = mid["test+probe"] - mid["test"]
    rows = [
        ("the warm review, all its processes", own + kids, ""),
        ("  eyeful's own process", own, ""),
        ("    Python's start-up", start, ""),
        ("    importing what the review imports", imports, f"{len(modules)} modules"),
        ("      pydantic, a model built (and the stdlib it needs)", pydantic, "imported apart:"),
        ("      then pygit2", pygit2, "first pydantic,"),
        ("      then eyeful and the rest of the standard library", rest, "then pygit2"),
        ("    the review's own work", own - start - imports, ""),
        ("  its child processes", kids, ""),
        ("    the test command alone (in the worktree)", mid["test"], ""),
        ("    eyeful's probe in it (with - without)", probe, ""),
        ("    git: rev-parse, diff, checkout, clean", mid["git"], ""),
        ("    the interpreters asked (run cache's key)", mid["interpreters"], ""),
        ("    the rest (sh, git's dispatch, other)",
         kids - mid["test"] - probe - mid["git"] - mid["interpreters"], ""),
    ]  # fmt: skip
    for label, seconds, note in rows:
        print(f"  {label:<56} {seconds * 1000:8.1f} ms  {note}")
    over = own + kids - mid["test"]
    print(f"  {'what eyeful adds to the test command':<56} {over * 1000:8.1f} ms  "
          f"({(own + kids) / mid['test']:.2f}x)")  # fmt: skip
    # What any review must run besides the test command, without an eyeful process at all:
    # the worktree's checkout and clean, and the probe. No import or work of eyeful's gets
    # a warm review below this ratio.
    floor = mid["test+probe"] + mid["git"]
    print(f"  {'the floor: git and the probe, no eyeful process':<56} "
          f"{(floor - mid['test']) * 1000:8.1f} ms  ({floor / mid['test']:.2f}x)")  # fmt: skip
    # The review's child processes alone, as if eyeful's own process cost nothing: no import,
    # no work of eyeful's gets a warm review below this ratio on this machine.
    print(f"  {'its child processes alone (eyeful at zero CPU)':<56} "
          f"{(kids - mid['test']) * 1000:8.1f} ms  ({kids / mid['test']:.2f}x)")  # fmt: skip
    sys.stdout.flush()
