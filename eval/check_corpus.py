"""CI: run the corpus in eval/cases/ with its findings files only (no LLM) and check the table.

    python eval/check_corpus.py

Every case must pass under `execution`; under the `no_oracle_rule` ablation the question case
must block (that is what oracle grading buys). Exits 1 with the differences otherwise.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# case -> (status under execution, status under no_oracle_rule)
EXPECTED = {
    "fix-breaks-test": ("pass", "pass"),
    "flaky": ("pass", "pass"),
    "mined-boundary-fix": ("pass", "pass"),
    "mined-clean-refactor": ("pass", "pass"),
    "pre-existing": ("pass", "pass"),
    "question": ("pass", "fail"),
    "real-bug-quoted": ("pass", "pass"),
    "regression": ("pass", "pass"),
    "wrong-fails-text": ("pass", "pass"),
}


def main() -> int:
    argv = [sys.executable, "-m", "eyeful", "eval", str(HERE / "cases"), "--yes", "-j", "2",
            "--format", "json", "--condition", "execution", "--condition", "no_oracle_rule",
            "--min-recall", "1"]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if not proc.stdout.startswith("{"):
        print(proc.stderr, file=sys.stderr)
        return 1
    result = json.loads(proc.stdout)
    got: dict[str, list[str]] = {}
    for row in result["results"]:
        got.setdefault(row["case"], ["", ""])[row["condition"] == "no_oracle_rule"] = row["status"]
    wrong = {
        k: (tuple(got.get(k, [])), v) for k, v in EXPECTED.items() if tuple(got.get(k, [])) != v
    }
    wrong |= {k: (tuple(v), None) for k, v in got.items() if k not in EXPECTED}
    for case, (actual, expected) in wrong.items():
        print(f"{case}: got {actual}, expected {expected}", file=sys.stderr)
    totals = {t["condition"]: t for t in result["totals"]}
    if totals["execution"]["false_blocking"] != 0 or totals["execution"]["recall"] != 1:
        print(f"execution totals: {totals['execution']}", file=sys.stderr)
        return 1
    return 1 if wrong or proc.returncode != 0 else 0


if __name__ == "__main__":
    raise SystemExit(main())
