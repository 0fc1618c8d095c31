"""Benchmark: many findings (evidence "inspection": judged, not run) end to end, to show that
grouping and ordering them grows near-linearly.

    python benchmarks/bench_many_findings.py [--sizes 1000 2000 4000 10000] [--repeat 1]

Makes a small repository with a staged change and a `test` command that passes, confirms it,
warms the run cache, then times `git eyeful --findings F --format json` for each size. The
findings come from three experts over 40 files, so many of them corroborate each other. Prints
wall-clock and CPU seconds (user + system, of eyeful and the git it runs) per size and per 1,000
findings; exits 1 when 10,000 findings take 5 s or more of wall-clock time. On a machine shared
with other work the CPU seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
if Path(sys.prefix).resolve() != (ROOT / ".venv").resolve() and VENV_PYTHON.exists():
    os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), *sys.argv])

LIMIT_10K = 5.0
EXPERTS = ("correctness", "skeptic", "security")


def findings(count: int, seed: int = 8) -> list[dict]:
    rng = random.Random(seed)
    return [
        {
            "id": f"f{i}",
            "expert": EXPERTS[i % len(EXPERTS)],
            "severity": ("error", "warning", "note")[rng.randrange(3)],
            "evidence": "inspection",
            "path": f"pkg/mod_{rng.randrange(40)}.py",
            "line": rng.randrange(1, 400),
            "title": f"problem {i}",
            "body": "something looks off here",
            "oracle": {"kind": "human"},
        }
        for i in range(count)
    ]


def git(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def eyeful(repo: Path, env: dict[str, str], *args: str) -> tuple[float, float, dict]:
    cpu = _cpu()
    started = time.perf_counter()
    proc = subprocess.run(
        ["git", "eyeful", "--format", "json", *args],
        cwd=repo, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(f"git eyeful failed ({proc.returncode}): {proc.stderr}")
    return elapsed, _cpu() - cpu, json.loads(proc.stdout)


def make_repo(work: Path, env: dict[str, str]) -> Path:
    repo = work / "repo"
    (repo / "pkg").mkdir(parents=True)
    git(repo, env, "init", "-q")
    (repo / "pyproject.toml").write_text('[tool.eyeful.commands]\ntest = "true"\n')
    for n in range(40):
        (repo / "pkg" / f"mod_{n}.py").write_text("x = 1\n" * 400)
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-q", "-m", "base")
    (repo / "pkg" / "mod_0.py").write_text("x = 2\n" * 400)
    git(repo, env, "add", "-A")
    git(repo, env, "eyeful", "confirm", "--yes")
    return repo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 10000])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eyeful-bench-many-"))
    try:
        home = work / "home"
        home.mkdir()
        (home / ".gitconfig").write_text(
            "[user]\n\tname = bench\n\temail = bench@eyeful.invalid\n", encoding="utf-8"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        repo = make_repo(work, env)
        eyeful(repo, env)  # the worktree and the cached test run: only findings are timed
        runs = [eyeful(repo, env) for _ in range(max(1, args.repeat))]
        head = f"{'findings':>9} {'wall s':>7} {'cpu s':>6} "
        print(head + f"{'cpu s/1,000':>12} {'corroborated':>13}")
        print(f"{0:>9} {statistics.median(r[0] for r in runs):7.2f} "
              f"{statistics.median(r[1] for r in runs):6.2f}")  # fmt: skip
        slowest_10k = 0.0
        for size in args.sizes:
            path = work / f"findings-{size}.json"
            path.write_text(json.dumps(findings(size)), encoding="utf-8")
            runs = [eyeful(repo, env, "--findings", str(path)) for _ in range(max(1, args.repeat))]
            report = runs[-1][2]
            assert len(report["findings"]) == size, "every finding is in the report"
            corroborated = sum(bool(f.get("corroborated_by")) for f in report["findings"])
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            if size == 10000:
                slowest_10k = wall
            print(f"{size:>9} {wall:7.2f} {cpu:6.2f} {cpu / size * 1000:12.3f} {corroborated:>13}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if slowest_10k >= LIMIT_10K:
        print(f"10,000 findings took {slowest_10k:.2f} s: the limit is {LIMIT_10K} s")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
