"""Running the eval: each case in a throwaway clone, each condition as one `git eyeful --format
json` subprocess, judged; the results as rows and per-condition totals.

Conditions: ``execution`` (normal), ``read_only`` (no project command runs), ``no_oracle_rule``
(the ablation: every reproduced finding may block, whatever its oracle) and ``selected`` (`--select
affected` after a full review of the base recorded the map of what each test ran: a regression
the selection misses shows as a lower recall than ``execution``'s).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from eyeful.errors import EXIT_BLOCKING, EXIT_OK, EyefulError
from eyeful.evaluate.cases import LEVEL_RANK, Case
from eyeful.evaluate.clone import Clone, eyeful_env
from eyeful.evaluate.judges import (
    FindingView,
    ReportView,
    SemanticMatch,
    Verdict,
    judge,
    level_of,
    reaches,
    reported_level,
    required_met,
    unverifiable,
    verified_level,
)
from eyeful.shell import stop_group

Condition = Literal["execution", "read_only", "no_oracle_rule", "selected"]
RecallKind = Literal["reported", "reproduced"]
RECALL_KINDS: tuple[RecallKind, ...] = ("reported", "reproduced")
CONDITIONS: tuple[Condition, ...] = ("execution", "read_only", "no_oracle_rule", "selected")
REVIEW_JOBS = 2  # worktrees each eyeful run uses; cases run in parallel with the eval's -j


class CaseResult(BaseModel):
    """One case under one condition."""

    case: str
    condition: Condition
    status: Literal["pass", "fail", "unverifiable"]
    unverifiable: str | None = None
    judges: list[Verdict]
    exit_code: int | None
    blocking: int = 0
    questions: int = 0
    other: int = Field(default=0, description="findings reported below question")
    reproduced: int = Field(
        default=0, description="findings a test showed (their reproduction passed the gates)"
    )
    regressions: int = 0
    required_total: int = 0
    required_met: int = Field(
        default=0,
        description="required findings reported at the level the case asks (a `reproduced` "
        "one as a question)",
    )
    required_verified: int = Field(
        default=0,
        description="required findings reported at the level the case asks and shown by a test",
    )
    seconds: float = 0.0
    tokens: int = 0
    calls: int = 0
    stderr: str = Field(default="", description="the last line eyeful wrote to stderr")


class Totals(BaseModel):
    """One condition's totals; every rate says over how many cases it was computed."""

    condition: Condition
    cases: int
    passed: int
    failed: int
    unverifiable: int
    recall: float | None = Field(
        description="reported recall: required findings met at the level the case asks (a "
        "`reproduced` one counted as a question) / required findings"
    )
    verified_recall: float | None = Field(
        default=None,
        description="verified recall: required findings met and shown by a test (a reproduction "
        "that passed runs, not_flaky, fails_as_claimed and introduced) / required findings",
    )
    required_met: int
    required_verified: int = 0
    required_total: int
    recall_cases: int = Field(description="cases asserting required findings")
    false_blocking: float | None = Field(
        description="cases failing a forbidden-findings, forbidden-regressions or clean check, "
        "over the cases asserting one"
    )
    false_blocking_cases: int
    false_blocked: int
    question_rate: float | None = Field(description="questions / findings reported")
    questions: int
    findings: int
    seconds: float
    tokens: int
    calls: int


class EvalResult(BaseModel):
    results: list[CaseResult]
    totals: list[Totals]
    interrupted: bool = False


@dataclass
class EyefulRun:
    exit_code: int | None
    view: ReportView | None
    stderr: str
    seconds: float


@dataclass
class Live:
    """The running eyeful processes, so Ctrl-C can stop them all."""

    procs: set[subprocess.Popen[bytes]] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    cancelled: threading.Event = field(default_factory=threading.Event)

    def stop_all(self) -> None:
        self.cancelled.set()
        with self.lock:
            procs = list(self.procs)
        for proc in procs:
            stop_group(proc)


class Interrupted(Exception):
    pass


def eyeful_argv(clone: Clone, condition: Condition, jobs: int = REVIEW_JOBS) -> list[str]:
    level = "read_only" if condition == "read_only" else "execution"
    argv = [
        sys.executable,
        "-m",
        "eyeful",
        "--format",
        "json",
        "--base",
        clone.base,
        "--head",
        clone.change,
        "--level",
        level,
        "-j",
        str(jobs),
    ]
    for path in clone.case.findings:
        argv += ["--findings", str(path)]
    if clone.case.spec.description:
        argv += ["-m", clone.case.spec.description]
    if condition == "selected":
        argv += ["--select", "affected"]
    return argv


def _record_map(clone: Clone) -> None:
    """The ``selected`` condition's map: a review of the base commit that selects by the map
    finds none before it, so it runs the whole suite, and that run records it."""
    argv = [sys.executable, "-m", "eyeful", "--format", "json", "--head", clone.base,
            "--select", "affected"]  # fmt: skip
    subprocess.run(argv, cwd=clone.root, env=eyeful_env(clone), stdin=subprocess.DEVNULL,
                   capture_output=True, check=False)  # fmt: skip


def run_eyeful(clone: Clone, condition: Condition, live: Live) -> EyefulRun:
    """One review of the clone's change, as a subprocess in its own process group."""
    if live.cancelled.is_set():
        raise Interrupted
    if condition == "selected":
        _record_map(clone)
    out_path = clone.root.parent / f"report-{condition}.json"
    err_path = clone.root.parent / f"stderr-{condition}.txt"
    started = time.monotonic()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        proc = subprocess.Popen(
            eyeful_argv(clone, condition),
            cwd=clone.root,
            env=eyeful_env(clone),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        with live.lock:
            live.procs.add(proc)
        try:
            code = proc.wait()
        finally:
            with live.lock:
                live.procs.discard(proc)
    seconds = time.monotonic() - started
    if live.cancelled.is_set():
        raise Interrupted
    lines = err_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    view = None
    try:
        view = ReportView.model_validate(json.loads(out_path.read_text(encoding="utf-8")))
    except (ValueError, ValidationError):
        view = None
    if condition == "no_oracle_rule" and view is not None:
        view = ablate_oracle_rule(view)
        if code == EXIT_OK and view.exit_code == EXIT_BLOCKING:
            code = EXIT_BLOCKING
    return EyefulRun(code, view, lines[-1] if lines else "", seconds)


def ablate_oracle_rule(view: ReportView) -> ReportView:
    """The ``no_oracle_rule`` ablation, applied by the eval to the review's report: every finding
    that reproduced and was verified (``baseline_state`` new) but left a question because its
    oracle cannot block is counted as blocking, which shows what oracle grading buys. The review
    itself never does this: no setting or environment variable of a `git eyeful` reaches it."""
    findings = []
    for finding in view.findings:
        if (
            finding.kind == "review"
            and finding.label == "question"
            and finding.baseline_state == "new"
            and finding.unverified is None
        ):
            finding = finding.model_copy(update={"kind": "fail", "label": "issue (blocking)"})
        findings.append(finding)
    added = sum(f.kind == "fail" for f in findings) - sum(f.kind == "fail" for f in view.findings)
    update: dict[str, object] = {"findings": findings}
    if added:
        update |= {
            "blocking": view.blocking + added,
            "questions": max(0, view.questions - added),
            "outcome": "blocking" if view.outcome in ("clean", "blocking") else view.outcome,
            "exit_code": (
                EXIT_BLOCKING if view.exit_code in (EXIT_OK, EXIT_BLOCKING) else view.exit_code
            ),
        }
    return view.model_copy(update=update)


def judge_run(
    clone: Clone, condition: Condition, run: EyefulRun, semantic: SemanticMatch | None
) -> CaseResult:
    spec = clone.case.spec
    why = unverifiable(
        run.exit_code,
        run.view,
        agent=clone.config.agent is not None,
        executed=condition != "read_only",
    )
    if why is not None and run.view is None and run.stderr:
        why += f": {run.stderr}"
    semantic = _remembered(semantic)
    verdicts = judge(spec, run.view, why, semantic)
    failed = any(v.status == "fail" for v in verdicts)
    view = run.view
    findings = view.findings if view is not None else []
    met = verified = 0
    if view is not None and why is None:
        for entry in spec.required_findings:
            met += required_met(entry, findings, semantic, reported_level(entry.at_least))[0]
            verified += required_met(entry, findings, semantic, verified_level(entry.at_least))[0]
    return CaseResult(
        case=clone.case.name,
        condition=condition,
        status="unverifiable" if why is not None else ("fail" if failed else "pass"),
        unverifiable=why,
        judges=verdicts,
        exit_code=run.exit_code,
        blocking=sum(level_of(f) == LEVEL_RANK["blocking"] for f in findings),
        questions=sum(level_of(f) == LEVEL_RANK["question"] for f in findings),
        other=sum(level_of(f) == LEVEL_RANK["reported"] for f in findings),
        reproduced=sum(reaches(f, "reproduced") for f in findings),
        regressions=len(view.regressions) if view is not None else 0,
        required_total=len(spec.required_findings),
        required_met=met,
        required_verified=verified,
        seconds=round(run.seconds, 2),
        tokens=sum(u.tokens for u in view.agents.values()) if view is not None else 0,
        calls=sum(u.calls for u in view.agents.values()) if view is not None else 0,
        stderr=run.stderr,
    )


def _remembered(semantic: SemanticMatch | None) -> SemanticMatch | None:
    """The semantic judge asked once per finding and claim (each recall asks it again)."""
    if semantic is None:
        return None
    answers: dict[tuple[str, str, int, str, str], tuple[bool, str]] = {}

    def ask(finding: FindingView, claim: str) -> tuple[bool, str]:
        key = (finding.id, finding.path, finding.line, finding.title, claim)
        if key not in answers:
            answers[key] = semantic(finding, claim)
        return answers[key]

    return ask


def _rate(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else round(numerator / denominator, 3)


_PRECISION = ("forbidden_findings", "forbidden_regressions", "clean")


def totals(results: list[CaseResult], conditions: Iterable[Condition]) -> list[Totals]:
    out = []
    for condition in conditions:
        rows = [r for r in results if r.condition == condition]
        recall_rows = [r for r in rows if r.required_total]
        fb_rows = [
            r
            for r in rows
            if any(v.judge in _PRECISION and v.status != "skipped" for v in r.judges)
        ]
        fb_failed = [
            r
            for r in fb_rows
            if any(v.judge in _PRECISION and v.status == "fail" for v in r.judges)
        ]
        met = sum(r.required_met for r in recall_rows)
        verified = sum(r.required_verified for r in recall_rows)
        total = sum(r.required_total for r in recall_rows)
        findings = sum(r.blocking + r.questions + r.other for r in rows)
        questions = sum(r.questions for r in rows)
        out.append(
            Totals(
                condition=condition,
                cases=len(rows),
                passed=sum(r.status == "pass" for r in rows),
                failed=sum(r.status == "fail" for r in rows),
                unverifiable=sum(r.status == "unverifiable" for r in rows),
                recall=_rate(met, total),
                verified_recall=_rate(verified, total),
                required_met=met,
                required_verified=verified,
                required_total=total,
                recall_cases=len(recall_rows),
                false_blocking=_rate(len(fb_failed), len(fb_rows)),
                false_blocking_cases=len(fb_rows),
                false_blocked=len(fb_failed),
                question_rate=_rate(questions, findings),
                questions=questions,
                findings=findings,
                seconds=round(sum(r.seconds for r in rows), 2),
                tokens=sum(r.tokens for r in rows),
                calls=sum(r.calls for r in rows),
            )
        )
    return out


def parse_min_recall(values: Iterable[str]) -> dict[RecallKind, float]:
    """``--min-recall`` values: ``X`` (reported recall, as before), ``reported=X`` or
    ``reproduced=X`` (verified recall), each X in [0, 1]. ValueError names a bad one."""
    out: dict[RecallKind, float] = {}
    for value in values:
        name, _, number = value.rpartition("=")
        kind = next((k for k in RECALL_KINDS if k == name.strip()), None)
        if name and kind is None:
            raise ValueError(
                f"--min-recall {value!r}: give X, reported=X or reproduced=X (not {name.strip()!r})"
            )
        try:
            threshold = float(number)
        except ValueError:
            raise ValueError(f"--min-recall {value!r}: {number!r} is not a number") from None
        if not 0 <= threshold <= 1:
            raise ValueError(f"--min-recall {value!r}: {threshold:g} is not in [0, 1]")
        out[kind or "reported"] = threshold
    return out


def missed_thresholds(
    summary: list[Totals],
    min_recall: float | Mapping[RecallKind, float] | None,
    max_false_blocking: float | None,
) -> list[str]:
    """One line per threshold a condition missed; a rate no case measured misses it too.
    ``min_recall``: a number is the reported recall's threshold; a mapping gives ``reported``
    and ``reproduced`` (verified recall) their own."""
    if min_recall is None:
        wanted: dict[str, tuple[float, str]] = {}
    elif isinstance(min_recall, int | float):
        wanted = {"reported": (float(min_recall), f"{min_recall:g}")}
    else:
        wanted = {kind: (value, f"{kind}={value:g}") for kind, value in min_recall.items()}
    missed = []
    for total in summary:
        for kind, (threshold, spelled) in wanted.items():
            rate = total.recall if kind == "reported" else total.verified_recall
            name = "verified recall" if kind == "reproduced" else "recall"
            if rate is None or rate < threshold:
                shown = "not measured" if rate is None else f"{rate:.3f}"
                missed.append(f"{total.condition}: {name} {shown} < --min-recall {spelled}")
        if max_false_blocking is not None and (
            total.false_blocking is None or total.false_blocking > max_false_blocking
        ):
            shown = (
                "not measured" if total.false_blocking is None else f"{total.false_blocking:.3f}"
            )
            missed.append(
                f"{total.condition}: false-blocking {shown} > --max-false-blocking "
                f"{max_false_blocking:g}"
            )
    return missed


@dataclass
class Plan:
    clones: list[Clone]
    conditions: list[Condition]
    jobs: int
    semantic: Callable[[Clone], SemanticMatch | None] | None = None
    on_done: Callable[[CaseResult], None] | None = None


def run_plan(plan: Plan, live: Live) -> EvalResult:
    """Every clone under every condition, ``plan.jobs`` cases at a time. Ctrl-C stops every
    running eyeful and returns what finished (``interrupted``)."""
    results: list[CaseResult] = []
    lock = threading.Lock()

    def one_case(clone: Clone) -> None:
        semantic = plan.semantic(clone) if plan.semantic is not None else None
        for condition in plan.conditions:
            result = judge_run(clone, condition, run_eyeful(clone, condition, live), semantic)
            with lock:
                results.append(result)
            if plan.on_done is not None:
                plan.on_done(result)

    interrupted = False
    pool = ThreadPoolExecutor(max_workers=max(1, min(plan.jobs, len(plan.clones) or 1)))
    futures: list[Future[None]] = [pool.submit(one_case, c) for c in plan.clones]
    try:
        for future in futures:
            try:
                future.result()
            except Interrupted:
                interrupted = True
    except KeyboardInterrupt:
        interrupted = True
        live.stop_all()
        for future in futures:
            future.cancel()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    order = {c.case.name: i for i, c in enumerate(plan.clones)}
    cond = {c: i for i, c in enumerate(plan.conditions)}
    results.sort(key=lambda r: (order[r.case], cond[r.condition]))
    return EvalResult(
        results=results, totals=totals(results, plan.conditions), interrupted=interrupted
    )


class Workspace:
    """The temporary directory holding every clone of one eval; removed at the end."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="eyeful-eval-"))

    def make(self, cases: list[Case], make_clone: Callable[[Case, Path], Clone]) -> list[Clone]:
        clones = []
        for case in cases:
            where = self.path / case.name
            where.mkdir()
            clones.append(make_clone(case, where))
        return clones

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


__all__ = ["CONDITIONS", "CaseResult", "EvalResult", "EyefulError", "Live", "Plan", "Totals"]
