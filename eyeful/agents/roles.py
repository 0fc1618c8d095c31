"""What each agent role is given and what is done with its answer.

experts → findings (checked against the change) · same_problem → a probability · repro → a new
test file · fix → a diff · judge → valid/invalid with a reason. Every function returns None (or
leaves things as they were) on a fault: :class:`eyeful.agents.agent.Agents` has recorded it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from importlib import resources

import pygit2

from eyeful.agents.agent import (
    AgentFault,
    Agents,
    ExpertReply,
    FixReply,
    JudgeReply,
    ReproReply,
    SameProblemReply,
)
from eyeful.findings import Finding, Fix, Repro
from eyeful.regressions import TestFailure
from eyeful.shell import parallel_map
from eyeful.snapshot import Snapshot, blob_at, tree_at

MAX_EXPERTS_AT_ONCE = 4
JUDGE_BATCH = 8
JUDGES_AT_ONCE = 8
_CONTEXT_LINES = 20
_TEST_GLOBS = ("test_*.py", "*_test.py", "*_test.go", "*.test.js", "*.test.ts", "*Test.java")


@dataclass
class ChangeContext:
    """What the agents read about the change, built once per review."""

    diff: str
    files: dict[str, str]
    line_counts: dict[str, int]
    example_test: tuple[str, str] | None
    description: str
    truncated: list[str] = field(default_factory=list)

    def excerpt(self, path: str, line: int, end_line: int | None = None) -> str:
        text = self.files.get(path, "")
        lines = text.splitlines()
        start = max(0, line - 1 - _CONTEXT_LINES)
        stop = min(len(lines), (end_line or line) + _CONTEXT_LINES)
        return "\n".join(f"{n + 1:5} {lines[n]}" for n in range(start, stop))


def _example_test(repo: pygit2.Repository, tree_id: str, limit: int) -> tuple[str, str] | None:
    stack: list[tuple[str, pygit2.Tree]] = [("", tree_at(repo, tree_id))]
    while stack:
        prefix, tree = stack.pop(0)
        for entry in tree:
            name = entry.name or ""
            path = f"{prefix}{name}"
            if entry.type_str == "tree":
                stack.append((f"{path}/", tree_at(repo, entry.id)))
            elif entry.type_str == "blob" and any(fnmatchcase(name, g) for g in _TEST_GLOBS):
                text = blob_at(repo, entry.id).data.decode("utf-8", errors="replace")
                return path, text[:limit]
    return None


def change_context(
    repo: pygit2.Repository, snap: Snapshot, description: str, max_file_chars: int
) -> ChangeContext:
    base, head = tree_at(repo, snap.base.tree), tree_at(repo, snap.head.tree)
    diff = base.diff_to_tree(head, context_lines=5)
    files: dict[str, str] = {}
    counts: dict[str, int] = {}
    truncated: list[str] = []
    budget = 4 * max_file_chars
    for delta in diff.deltas:
        path = delta.new_file.path
        if delta.status_char() == "D" or delta.new_file.mode == 0o160000:
            continue
        try:
            blob = blob_at(repo, head[path].id)
        except (KeyError, AssertionError):
            continue
        if blob.is_binary:
            continue
        text = blob.data.decode("utf-8", errors="replace")
        counts[path] = len(text.splitlines())
        if len(text) > max_file_chars or budget <= 0:
            truncated.append(path)
            text = text[: max(0, min(max_file_chars, budget))]
        budget -= len(text)
        files[path] = text
    patch = diff.patch or ""
    if len(patch) > 4 * max_file_chars:
        patch = patch[: 4 * max_file_chars] + "\n[diff truncated]\n"
    return ChangeContext(
        diff=patch,
        files=files,
        line_counts=counts,
        example_test=_example_test(repo, snap.head.tree, max_file_chars // 4),
        description=description,
        truncated=truncated,
    )


def _focus(expert: str) -> str:
    path = resources.files("eyeful.agents") / "prompts" / "experts" / f"{expert}.md"
    if path.is_file():
        return path.read_text(encoding="utf-8").strip()
    return f"problems of the kind a '{expert}' reviewer looks for."


def _check(finding: Finding, ctx: ChangeContext) -> str | None:
    if finding.path not in ctx.line_counts:
        return f"cites {finding.path}, which the change does not touch"
    last = ctx.line_counts[finding.path]
    if finding.line > last or (finding.end_line or 0) > last:
        return f"cites line {finding.end_line or finding.line} of {finding.path}, which has {last}"
    return None


def run_experts(
    agents: Agents, experts: tuple[str, ...], ctx: ChangeContext, regressions: list[TestFailure]
) -> tuple[list[Finding], list[str]]:
    """Every expert in parallel (at most four at once); findings that cite nothing real go."""
    notes: list[str] = []

    def one(expert: str) -> list[Finding]:
        task: dict[str, object] = {
            "expert": expert,
            "description": ctx.description,
            "diff": ctx.diff,
            "files": ctx.files,
            "truncated_files": ctx.truncated,
            "regressions": [{"test": r.test, "output": r.excerpt} for r in regressions],
        }
        try:
            reply = agents.ask("expert", expert, {**task, "focus": _focus(expert)}, ExpertReply)
        except AgentFault:
            return []
        out: list[Finding] = []
        for number, item in enumerate(reply.findings, 1):
            finding = Finding(id=f"{expert}-{number}", expert=expert, **item.model_dump())
            problem = _check(finding, ctx)
            if problem is not None:
                notes.append(f"dropped finding `{finding.id}` ({finding.title}): it {problem}")
                continue
            out.append(finding)
        return out

    batches = parallel_map(one, list(experts), MAX_EXPERTS_AT_ONCE)
    return [f for batch in batches for f in batch], notes


def same_problem(agents: Agents, a: Finding, b: Finding, ctx: ChangeContext) -> float:
    """The probability one fix resolves both; raises AgentFault when there is no answer."""
    task: dict[str, object] = {
        "first": a.model_dump(include={"path", "line", "end_line", "title", "body"}),
        "second": b.model_dump(include={"path", "line", "end_line", "title", "body"}),
        "code": ctx.excerpt(a.path, min(a.line, b.line), max(a.line, b.line)),
    }
    return agents.ask("same_problem", f"{a.id} and {b.id}", task, SameProblemReply).probability


def write_repro(
    agents: Agents,
    finding: Finding,
    ctx: ChangeContext,
    previous: dict[str, str] | None = None,
    attempt: Repro | None = None,
) -> Finding | None:
    """The finding with a reproduction (and the oracle that goes with it), or None on a fault.

    ``attempt`` is the test the finding's own expert attached: shown, never used as the proof.
    """
    task: dict[str, object] = {
        "finding": finding.model_dump(
            include={"path", "line", "end_line", "title", "body", "severity", "oracle"}
        ),
        "code": ctx.excerpt(finding.path, finding.line, finding.end_line),
        "description": ctx.description,
        "documentation_and_files": {p: t for p, t in ctx.files.items() if p != finding.path},
    }
    if ctx.example_test is not None:
        task["example_test"] = {"path": ctx.example_test[0], "code": ctx.example_test[1]}
    if previous is not None:
        task["previous_attempt"] = previous
    if attempt is not None:
        task["expert_attempt"] = attempt.model_dump(include={"path", "code", "fails", "test"})
    try:
        reply = agents.ask("repro", finding.id, task, ReproReply)
        repro = Repro(path=reply.path, code=reply.code, fails=reply.fails, test=reply.test)
    except AgentFault:
        return None
    except ValueError as err:
        agents.fault("repro", finding.id, f"unusable reproduction: {err}")
        return None
    return finding.model_copy(update={"repro": repro, "oracle": reply.oracle})


def write_fix(agents: Agents, finding: Finding, ctx: ChangeContext) -> Fix | None:
    """A diff from an agent that sees the finding and the test, not the expert's reasoning."""
    assert finding.repro is not None
    task: dict[str, object] = {
        "problem": finding.title,
        "path": finding.path,
        "line": finding.line,
        "test": finding.repro.model_dump(),
        "files": {finding.path: ctx.files.get(finding.path, "")},
    }
    try:
        return Fix(diff=agents.ask("fix", finding.id, task, FixReply).diff)
    except AgentFault:
        return None


def judge(
    agents: Agents, findings: list[Finding], ctx: ChangeContext
) -> dict[str, tuple[bool, str]]:
    """Verdicts by finding id; a batch that faults gets none (its findings stay as they were)."""
    batches = [findings[i : i + JUDGE_BATCH] for i in range(0, len(findings), JUDGE_BATCH)]

    def one(batch: list[Finding]) -> dict[str, tuple[bool, str]]:
        # The judge sees numbered items, and its verdicts are mapped back by those numbers: an
        # id it echoes that is not one of the numbers (a finding's own id, another batch's) is
        # ignored, and findings that share an id stay apart.
        ids = {f.id for f in batch}
        ours = {str(n): f.id for n, f in enumerate(batch, 1)}
        task: dict[str, object] = {
            "findings": [
                {**f.model_dump(include={"path", "line", "end_line", "title", "body"}), "id": n}
                for n, f in zip(ours, batch, strict=True)
            ],
            "diff": ctx.diff,
            "files": {p: ctx.files[p] for p in {f.path for f in batch} if p in ctx.files},
            "description": ctx.description,
        }
        subject = ", ".join(sorted(ids))
        try:
            reply = agents.ask("judge", subject, task, JudgeReply)
        except AgentFault:
            return {}
        return {ours[v.id]: (v.valid, v.reason) for v in reply.verdicts if v.id in ours}

    out: dict[str, tuple[bool, str]] = {}
    if not batches:
        return out
    for result in parallel_map(one, batches, JUDGES_AT_ONCE):
        out.update(result)
    return out
