"""One problem: findings in the same file within two lines that one fix would resolve.

Each such pair is put to the agent as a probability; pairs at 0.5 or more are joined (and joins
chain). A joined group is verified once, through the reproduction of its most severe finding,
and shown as one comment that other experts corroborate. If any request fails, nothing is merged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from eyeful.findings import SEVERITY_RANK, Finding

NEAR = 2
JOIN_AT = 0.5


@dataclass
class Merged:
    findings: list[Finding]
    groups: dict[str, list[str]] = field(default_factory=dict)
    """representative id -> the ids folded into it"""
    failed: str | None = None


def near_pairs(findings: list[Finding]) -> list[tuple[Finding, Finding]]:
    """Every pair in the same file within NEAR lines, in input order (a, then b after it).

    Indexed by (path, line) rather than comparing every pair, so it grows with the pairs found.
    """
    at: dict[tuple[str, int], list[int]] = {}
    for i, finding in enumerate(findings):
        at.setdefault((finding.path, finding.line), []).append(i)
    pairs: list[tuple[Finding, Finding]] = []
    for i, a in enumerate(findings):
        later: list[int] = []
        for line in range(a.line - NEAR, a.line + NEAR + 1):
            later += [j for j in at.get((a.path, line), []) if j > i]
        pairs += [(a, findings[j]) for j in sorted(later)]
    return pairs


def merge(findings: list[Finding], probability: Callable[[Finding, Finding], float]) -> Merged:
    """Join near findings one fix would resolve; ``probability`` raises on a failed request."""
    pairs = near_pairs(findings)
    parent = {f.id: f.id for f in findings}

    def root(fid: str) -> str:
        while parent[fid] != fid:
            parent[fid] = parent[parent[fid]]
            fid = parent[fid]
        return fid

    joins: list[tuple[str, str]] = []
    for a, b in pairs:
        try:
            p = probability(a, b)
        except Exception as err:
            return Merged(findings=list(findings), failed=f"{a.id} and {b.id}: {err}")
        if p >= JOIN_AT:
            joins.append((a.id, b.id))
    for a_id, b_id in joins:
        parent[root(a_id)] = root(b_id)
    order = {f.id: i for i, f in enumerate(findings)}
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(root(finding.id), []).append(finding)
    out: list[Finding] = []
    folded: dict[str, list[str]] = {}
    for members in groups.values():
        lead = min(members, key=lambda f: (SEVERITY_RANK[f.severity], order[f.id]))
        out.append(lead)
        others = [f.id for f in members if f.id != lead.id]
        if others:
            folded[lead.id] = others
    out.sort(key=lambda f: order[f.id])
    return Merged(findings=out, groups=folded)
