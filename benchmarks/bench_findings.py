"""Benchmark: 8 findings through the gates, in parallel worktrees (-j N) vs one at a time.

    python benchmarks/bench_findings.py [--repeat 2] [--jobs N]

Builds the demo's example repository (eyeful.cli.demo.make_demo_repo) with its breaking change
staged, writes 8 findings (the expiry-boundary reproduction under 8 names, half with a fix), and
times `git eyeful --findings` cold (verdict and run caches removed, worktrees kept)
with -j 1 and -j N.
Prints a table; it is a measurement, so it exits 0 unless something breaks.
"""

from __future__ import annotations

import argparse
import json
import os
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

from eyeful.cli.demo import make_demo_repo  # noqa: E402


def findings(count: int) -> list[dict]:
    demo = json.loads(
        (ROOT / "eyeful" / "examples" / "sessions-findings.json").read_text(encoding="utf-8")
    )
    boundary = next(f for f in demo if f["id"] == "boundary")
    out = []
    for i in range(count):
        f = json.loads(json.dumps(boundary))
        f["id"] = f"boundary-{i}"
        f["repro"]["path"] = f"tests/test_boundary_{i}.py"
        if i % 2:
            del f["fix"]
        out.append(f)
    return out


def run(repo: Path, env: dict[str, str], *args: str) -> tuple[float, dict]:
    started = time.perf_counter()
    proc = subprocess.run(
        ["git", "eyeful", "--format", "json", *args],
        cwd=repo, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"git eyeful failed ({proc.returncode}): {proc.stderr}")
    return elapsed, json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--findings", type=int, default=8)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="eyeful-bench-findings-"))
    try:
        home = work / "home"
        home.mkdir()
        (home / ".gitconfig").write_text(
            "[user]\n\tname = bench\n\temail = bench@eyeful.invalid\n", encoding="utf-8"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        repo = make_demo_repo(work)
        subprocess.run(["git", "eyeful", "confirm", "--yes"], cwd=repo, env=env,
                       check=True, capture_output=True)  # fmt: skip
        path = work / "findings.json"
        path.write_text(json.dumps(findings(args.findings)), encoding="utf-8")
        cache = repo / ".git" / "eyeful" / "cache"
        # Warm the worktrees once so both sides pay only for the gates.
        run(repo, env, "--findings", str(path), "-j", str(args.jobs))
        times: dict[int, list[float]] = {1: [], args.jobs: []}
        report: dict = {}
        for _ in range(args.repeat):
            for jobs in times:
                shutil.rmtree(cache, ignore_errors=True)
                elapsed, report = run(repo, env, "--findings", str(path), "-j", str(jobs))
                times[jobs].append(elapsed)
        runs = sum(len(f["runs"]) for f in report["findings"])
        blocking = sum(f["kind"] == "fail" for f in report["findings"])
        one, many = statistics.median(times[1]), statistics.median(times[args.jobs])
        print(f"{args.findings} findings, {runs} gate runs, {blocking} blocking; "
              f"{os.cpu_count()} CPUs; median of {args.repeat}")  # fmt: skip
        print(f"{'one at a time (-j 1)':32} {one:7.2f} s")
        print(f"{f'in parallel (-j {args.jobs})':32} {many:7.2f} s")
        print(f"{'speed-up':32} {one / many:7.2f} x")
        _, cached = run(repo, env, "--findings", str(path))
        print(f"{'unchanged rerun runs nothing':32} "
              f"{all(r['cached'] for f in cached['findings'] for r in f['runs'])}")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
