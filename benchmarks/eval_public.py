"""Mine eval cases from small public Python projects and evaluate eyeful on them.

    python benchmarks/eval_public.py --source cachetools=/path/to/cachetools.git \
        --source toolz=/path/to/toolz.git --source itsdangerous=/path/to/itsdangerous.git \
        [--commits 120] [--limit 6] [--out /tmp/eval-public]

Each source is a local git repository (a clone or a snapshot; nothing fetched is stored here).
The script clones it to a temporary directory, writes an `.eyeful.toml` (pytest through the
running Python, `src/` and the root on PYTHONPATH), confirms it in a temporary XDG directory,
runs `eyeful eval mine` over the newest --commits commits, stores each bug case's findings
(the fix's own test as the reproduction; benchmarks/eval_public/findings/), points the cases at
them, and runs `eyeful eval` on all cases. It prints the mining reports and the eval table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FINDINGS = HERE / "eval_public" / "findings"
PYTEST = "PYTHONPATH=src:. python -m pytest -q -p no:cacheprovider -x -o addopts=''"
CONFIG = f'timeout = 300\n\n[commands]\ntest = "{PYTEST}"\ntest_one = "{PYTEST} {{test}}"\n'


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, text=True, capture_output=True, check=False)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", action="append", required=True, help="name=path")
    parser.add_argument("--commits", type=int, default=120)
    parser.add_argument("--limit", type=int, default=6)
    parser.add_argument("--out", type=Path, default=Path("/tmp/eyeful-eval-public"))
    args = parser.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["XDG_CONFIG_HOME"] = str(args.out / "xdg")
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    cases = args.out / "cases"
    for source in args.source:
        name, path = source.split("=", 1)
        repo = args.out / "repos" / name
        proc = run(["git", "clone", "-q", path, str(repo)], args.out, env)
        if proc.returncode != 0:
            print(f"{name}: cannot clone: {proc.stderr}", file=sys.stderr)
            return 2
        (repo / ".eyeful.toml").write_text(CONFIG)
        if (repo / "pyproject.toml").is_file() and "[tool.eyeful" in (repo / "pyproject.toml").read_text():
            print(f"{name}: configures eyeful itself; skipped", file=sys.stderr)
            continue
        argv = [sys.executable, "-m", "eyeful", "eval", "mine", "--yes", "--limit",
                str(args.limit), "--rev-range", f"HEAD~{args.commits}..HEAD", str(cases / name)]
        proc = run(argv, repo, env)
        print(f"## {name}\n\n{proc.stdout}{proc.stderr if proc.returncode else ''}")
        for case in sorted((cases / name).glob("*")):
            reference = case / "reference-findings.json"
            if not reference.is_file() or not json.loads(reference.read_text()):
                continue
            FINDINGS.mkdir(parents=True, exist_ok=True)
            stored = FINDINGS / f"{name}-{case.name}.json"
            shutil.copy(reference, stored)
            text = (case / "case.toml").read_text()
            line = f"findings = [{json.dumps(str(stored))}]\n"
            (case / "case.toml").write_text(text.replace("\nbase = ", f"\n{line}base = ", 1))
    found = [c for c in cases.glob("*/*") if (c / "case.toml").is_file()]
    for case in found:  # flat: case names are unique (kind-commit)
        case.rename(cases / f"{case.parent.name}-{case.name}")
    argv = [sys.executable, "-m", "eyeful", "eval", str(cases), "--yes", "-j", "2",
            "--condition", "execution", "--condition", "no_oracle_rule"]
    proc = run(argv, args.out, env)
    print(proc.stdout)
    print(proc.stderr[-3000:], file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    raise SystemExit(main())
