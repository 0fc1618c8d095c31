#!/usr/bin/env python3
"""How long eyeful takes to start, as a ratio to importing its four big dependencies.

Measured in one run, interleaved, as CPU time (user + system) of each child process, so that a
loaded machine slows all three alike:

  0. baseline: `python -c "import typer, pydantic, pygit2, rich"`;
  1. `git-eyeful` on a throwaway repository whose review is fully cached (nothing runs): the
     review is given again from eyeful/cli/replay.py;
  2. `git-eyeful --version`;
  3. for comparison, the same cached review with an option given (`--format markdown`): the
     command line is parsed by typer and the review is built again from the cached run;
  4. (1) again with this interpreter's directory first on PATH, so that the `python` and
     `python3` the run cache's key asks about (eyeful/environment.py: one process each) are this
     interpreter, not a version manager's shims: with pyenv's, each question costs about 150 ms
     of CPU, more than the rest of the rerun. Both figures are printed; (1) is the user's case.

Goals: (1) <= 1.3 x baseline, (2) <= 0.5 x baseline; (3) has none and is printed as a figure.
Prints the medians and the ratios; exits 0 unless the benchmark itself breaks (it is a
measurement, not a test). `--importtime` also prints the slowest imports of a cached rerun.

eyeful's own modules are compiled to bytecode first, as an install does (an editable install
with PYTHONDONTWRITEBYTECODE set would otherwise compile them on every start).

Never touches the real user's configuration: HOME and XDG_CONFIG_HOME point into the temp dir,
GIT_CONFIG_NOSYSTEM is set and inherited GIT_* variables are dropped.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 15] [--importtime]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
RERUN_GOAL = 1.3
VERSION_GOAL = 0.5
BASELINE = [sys.executable, "-c", "import typer, pydantic, pygit2, rich"]


def _cpu_of(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{argv} exited {proc.returncode}: {err.decode()[-500:]}")
    return usage.ru_utime + usage.ru_stime


def _git(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _project(root: Path, env: dict[str, str]) -> Path:
    repo = root / "repo"
    (repo / "tests").mkdir(parents=True)
    pytest = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    (repo / "pyproject.toml").write_text(
        f'[tool.eyeful.commands]\ntest = "{pytest}"\ntest_one = "{pytest} {{test}}"\n'
    )
    (repo / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-q", "-m", "base")
    (repo / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    _git(repo, env, "add", "-A")
    subprocess.run([str(BIN / "git-eyeful"), "confirm", "--yes"], cwd=repo, env=env, check=True,
                   capture_output=True)  # fmt: skip
    for _ in range(2):  # the tests run, then the review is served from the cache: remembered
        subprocess.run([str(BIN / "git-eyeful")], cwd=repo, env=env, check=True,
                       capture_output=True)  # fmt: skip
    return repo


def _importtime(repo: Path, env: dict[str, str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", str(BIN / "git-eyeful")],
        cwd=repo, env=env, capture_output=True, text=True,
    )  # fmt: skip
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[0].startswith("import time:") and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    print("slowest imports of a cached rerun (cumulative us, wall time):")
    for micros, name in sorted(rows, reverse=True)[:25]:
        print(f"  {micros:>9}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--importtime", action="store_true")
    args = parser.parse_args()
    # The bundled example projects are data (eyeful demo copies them): never compiled here.
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-x", "examples",
                    str(HERE.parent / "eyeful")], check=True)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="eyeful-bench-startup-") as tmp:
        root = Path(tmp)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PRE_COMMIT"))}
        env.update(HOME=str(root), XDG_CONFIG_HOME=str(root / ".config"), GIT_CONFIG_NOSYSTEM="1",
                   GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b.invalid", GIT_COMMITTER_NAME="b",
                   GIT_COMMITTER_EMAIL="b@b.invalid")  # fmt: skip
        repo = _project(root, env)
        direct_env = {**env, "PATH": os.pathsep.join([str(BIN), env.get("PATH", "")])}
        direct = _project(root / "direct", direct_env)
        eyeful = str(BIN / "git-eyeful")
        samples: dict[str, list[float]] = {"baseline": [], "rerun": [], "version": [], "full": [],
                                           "direct": []}  # fmt: skip
        for _ in range(args.repeat):
            samples["baseline"].append(_cpu_of(BASELINE, repo, env))
            samples["rerun"].append(_cpu_of([eyeful], repo, env))
            samples["direct"].append(_cpu_of([eyeful], direct, direct_env))
            samples["version"].append(_cpu_of([eyeful, "--version"], repo, env))
            samples["full"].append(_cpu_of([eyeful, "--format", "markdown"], repo, env))
        if args.importtime:
            _importtime(repo, env)
    median = {name: statistics.median(values) for name, values in samples.items()}
    base = median["baseline"]
    print(f"baseline  import typer, pydantic, pygit2, rich: {base * 1000:6.0f} ms CPU")
    for name, goal in (("rerun", RERUN_GOAL), ("version", VERSION_GOAL)):
        ratio = median[name] / base
        verdict = "meets" if ratio <= goal else "MISSES"
        label = "cached rerun" if name == "rerun" else "--version   "
        print(f"{label}  {median[name] * 1000:6.0f} ms CPU = {ratio:.2f} x baseline "
              f"({verdict} the goal <= {goal} x)")  # fmt: skip
    print(
        f"cached rerun, python on PATH this interpreter (no shims)  {median['direct'] * 1000:6.0f} "
        f"ms CPU = {median['direct'] / base:.2f} x baseline"
    )
    print(f"PATH's python, python3: {shutil.which('python')}, {shutil.which('python3')}")
    print(
        f"cached rerun with an option (typer, review rebuilt from the cache)  "
        f"{median['full'] * 1000:6.0f} ms CPU = {median['full'] / base:.2f} x baseline"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
