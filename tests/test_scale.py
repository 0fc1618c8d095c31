"""Scale of input: grouping and ordering many findings grows near-linearly (issue 8, point 13).

The end-to-end figures (1,000 to 10,000 findings through `git eyeful`) are in
benchmarks/bench_many_findings.py; here the rules themselves are checked against the pairwise
definition and timed in CPU seconds, which a busy machine does not inflate.
"""

from __future__ import annotations

import random
import time

from eyeful.agents.merge import near_pairs
from eyeful.findings import Corroboration, Finding, verification_order

EXPERTS = ("correctness", "skeptic", "security")


def _findings(count: int, files: int, lines: int, seed: int = 3) -> list[Finding]:
    rng = random.Random(seed)
    return [
        Finding.model_construct(  # valid by construction; 10,000 validations cost seconds here
            **{
                "id": f"f{i}",
                "expert": EXPERTS[rng.randrange(3)],
                "severity": ("error", "warning", "note")[rng.randrange(3)],
                "evidence": "inspection",
                "path": f"pkg/mod_{rng.randrange(files)}.py",
                "line": rng.randrange(1, lines),
                "title": f"problem {i}",
                "body": "",
                "oracle": {"kind": "human"},
            }
        )
        for i in range(count)
    ]


def _pairwise_corroboration(finding: Finding, findings: list[Finding]) -> list[str]:
    return sorted(
        {
            o.expert
            for o in findings
            if o.expert != finding.expert
            and o.path == finding.path
            and abs(o.line - finding.line) <= 2
        }
    )


def _pairwise_near_pairs(findings: list[Finding]) -> list[tuple[str, str]]:
    return [
        (a.id, b.id)
        for i, a in enumerate(findings)
        for b in findings[i + 1 :]
        if a.path == b.path and abs(a.line - b.line) <= 2
    ]


def test_the_index_gives_what_comparing_every_pair_gives():
    findings = _findings(600, files=4, lines=60)  # dense: most findings have neighbours
    index = Corroboration(findings)
    assert [index.of(f) for f in findings] == [
        _pairwise_corroboration(f, findings) for f in findings
    ]
    assert sum(bool(index.of(f)) for f in findings) > 300
    assert [(a.id, b.id) for a, b in near_pairs(findings)] == _pairwise_near_pairs(findings)


def test_ten_thousand_findings_are_ordered_and_corroborated_in_well_under_a_second():
    findings = _findings(10_000, files=40, lines=400)
    started = time.process_time()
    ordered = verification_order(findings)
    index = Corroboration(findings)
    corroborated = [index.of(f) for f in ordered]
    elapsed = time.process_time() - started
    assert len(ordered) == 10_000 and sum(map(bool, corroborated)) > 1000
    # Comparing every pair took minutes here (228 s end to end for 10,000 findings).
    assert elapsed < 2.0, f"{elapsed:.2f} s of CPU"
