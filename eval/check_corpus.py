"""CI: run the corpus in eval/cases/ with its findings files only (no LLM) and check the table.

    python eval/check_corpus.py

Every case must pass under `execution`; under the `no_oracle_rule` ablation the question case
must block (that is what oracle grading buys). Each case's required findings shown by a test (its
reproduction passed runs, not_flaky, fails_as_claimed and introduced) must be as many as
VERIFIED says, under both conditions: a change to a gate that stops a corpus reproduction from
passing fails CI instead of quietly emptying the eval's verified recall. Exits 1 with the
differences otherwise.
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

# case -> (required findings a test showed, required findings): every case of EXPECTED with
# required findings. pre-existing's finding fails `introduced` (the base has the bug): reported,
# never shown as the change's.
VERIFIED = {
    "fix-breaks-test": (1, 1),
    "mined-boundary-fix": (1, 1),
    "pre-existing": (0, 1),
    "question": (1, 1),
    "real-bug-quoted": (1, 1),
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
    shown = {
        (row["case"], row["condition"]): (row["required_verified"], row["required_total"])
        for row in result["results"]
        if row["required_total"]
    }
    dropped = [
        f"{case} ({condition}): a test showed {got[0]} of its {got[1]} required findings, "
        f"expected {VERIFIED.get(case, (0, got[1]))[0]}"
        for (case, condition), got in shown.items()
        if got != VERIFIED.get(case, (0, got[1])) or case not in VERIFIED
    ]
    dropped += [
        f"{case}: no row with required findings (expected {pair[0]} of {pair[1]} shown)"
        for case, pair in VERIFIED.items()
        if (case, "execution") not in shown
    ]
    for line in dropped:
        print(f"{line}: update VERIFIED only if the gates changed on purpose", file=sys.stderr)
    totals = {t["condition"]: t for t in result["totals"]}
    if totals["execution"]["false_blocking"] != 0 or totals["execution"]["recall"] != 1:
        print(f"execution totals: {totals['execution']}", file=sys.stderr)
        return 1
    return 1 if wrong or dropped or proc.returncode != 0 else 0


if __name__ == "__main__":
    raise SystemExit(main())
