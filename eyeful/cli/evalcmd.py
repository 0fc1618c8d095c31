"""`eyeful eval` and `eyeful eval mine`: the typer sub-app, a thin layer over eyeful.evaluate.

`eyeful eval CASES...` is the `run` command: the group sends anything that is not a subcommand
name to it.
"""

from __future__ import annotations

import signal
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from eyeful.cli.terminal import Stderr
from eyeful.errors import EXIT_BLOCKING, EXIT_INTERRUPTED, EXIT_USAGE, EyefulError

stderr = Stderr()


class _DefaultToRun(TyperGroup):
    """`eyeful eval CASES...` means `eyeful eval run CASES...`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # noqa: ANN401
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


eval_app = typer.Typer(
    cls=_DefaultToRun,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Measure a review setup on cases with ground truth: `eyeful eval CASES...` runs them, "
    "`eyeful eval mine OUTDIR` builds cases from this repository's history.",
)


class ConditionName(str, Enum):
    execution = "execution"
    read_only = "read_only"
    no_oracle_rule = "no_oracle_rule"
    selected = "selected"


class Format(str, Enum):
    markdown = "markdown"
    json = "json"


class CaseKind(str, Enum):
    bug = "bug"
    clean = "clean"


class JudgeKind(str, Enum):
    words = "words"
    agent = "agent"


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    stderr.say(f"eyeful: error: {message}")
    return typer.Exit(code)


def _sigterm(signum: int, frame: Any) -> None:  # noqa: ANN401 - signal handler signature
    raise KeyboardInterrupt


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _confirm_commands(clones: list[Any], yes: bool) -> None:
    """Print each distinct command set once, ask once (or --yes), confirm in the clones only."""
    from eyeful.evaluate.clone import confirm

    groups: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for clone in clones:
        config = clone.config
        items = config.commands.items() + (config.agent.digest_items() if config.agent else [])
        if items:
            groups.setdefault(tuple(items), []).append(clone.case.name)
    if groups:
        stderr.say("The cases run these commands, in throwaway clones only:")
        for items, names in groups.items():
            stderr.say(f"  {', '.join(names)}:")
            for name, command in items:
                stderr.say(f"    {name:14} {command}")
        if not yes:
            if not _interactive():
                raise EyefulError("not a terminal: pass --yes to run the cases' commands")
            from eyeful.cli.terminal import ask_yes_no

            if not ask_yes_no("Run these commands in the cases' throwaway clones?"):
                raise EyefulError("not confirmed; nothing ran")
    for clone in clones:
        confirm(clone)


@eval_app.command("run")
def run_command(
    cases: Annotated[
        list[Path],
        typer.Argument(metavar="CASE", help="Case directories, or directories of cases."),
    ],
    condition: Annotated[
        list[ConditionName] | None,
        typer.Option(
            "--condition",
            metavar="CONDITION",
            help="execution, read_only, no_oracle_rule, selected (repeatable).",
        ),
    ] = None,
    jobs: Annotated[
        int, typer.Option("-j", "--jobs", metavar="N", min=1, help="Cases run at once.")
    ] = 1,
    output_format: Annotated[
        Format, typer.Option("--format", metavar="FORMAT", help="What to print on stdout.")
    ] = Format.markdown,
    min_recall: Annotated[
        list[str] | None,
        typer.Option(
            "--min-recall",
            metavar="X",
            help="Exit 1 when recall is lower: X (reported recall), reported=X or reproduced=X "
            "(verified recall: shown by a test); repeatable.",
        ),
    ] = None,
    max_false_blocking: Annotated[
        float | None,
        typer.Option(
            "--max-false-blocking",
            metavar="X",
            min=0,
            max=1,
            help="Exit 1 when false-blocking is higher.",
        ),
    ] = None,
    judge_kind: Annotated[
        JudgeKind,
        typer.Option(
            "--judge",
            metavar="JUDGE",
            help="words (deterministic) or agent (also ask the agent).",
        ),
    ] = JudgeKind.words,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Run the cases' commands without asking.")
    ] = False,
) -> None:
    """Run cases, each in a throwaway clone, and judge eyeful's review by their ground truth."""
    from eyeful.evaluate.cases import load_cases
    from eyeful.evaluate.clone import make_clone
    from eyeful.evaluate.runner import (
        CONDITIONS,
        Live,
        Plan,
        Workspace,
        missed_thresholds,
        parse_min_recall,
        run_plan,
    )
    from eyeful.evaluate.table import to_json, to_markdown

    signal.signal(signal.SIGTERM, _sigterm)
    try:
        recall_thresholds = parse_min_recall(min_recall or [])
    except ValueError as err:
        raise _fail(str(err)) from None
    conditions = [c for c in CONDITIONS if c in {x.value for x in condition or []}] or ["execution"]
    workspace = Workspace()
    try:
        try:
            loaded, errors = load_cases(cases)
            if errors:
                for line in errors[:-1]:
                    stderr.say(f"eyeful: error: {line}")
                raise EyefulError(errors[-1])
            clones = workspace.make(loaded, make_clone)
            semantic = _semantic(clones, workspace.path) if judge_kind is JudgeKind.agent else None
            _confirm_commands(clones, yes)
        except EyefulError as err:
            raise _fail(str(err), err.exit_code) from None
        except KeyboardInterrupt:
            raise _fail("interrupted; nothing ran", EXIT_INTERRUPTED) from None
        with _EvalProgress(len(clones) * len(conditions)) as progress:
            plan = Plan(clones, list(conditions), jobs, semantic, progress.done)
            result = run_plan(plan, Live())
    finally:
        workspace.remove()
    print(to_json(result) if output_format is Format.json else to_markdown(result), end="")
    if result.interrupted:
        raise _fail("interrupted; the table holds the runs that finished", EXIT_INTERRUPTED)
    plain = bool(min_recall) and all("=" not in v for v in min_recall or [])
    recall: Any = recall_thresholds["reported"] if plain else recall_thresholds or None
    missed = missed_thresholds(result.totals, recall, max_false_blocking)
    for line in missed:
        stderr.say(f"eyeful: threshold missed: {line}")
    raise typer.Exit(EXIT_BLOCKING if missed else 0)


def _semantic(clones: list[Any], where: Path) -> Any:  # noqa: ANN401 - a factory over clones
    from eyeful.evaluate.judges import FindingView
    from eyeful.evaluate.semantic import agent_matcher

    matchers: dict[str, Any] = {}
    for clone in clones:
        agent = clone.config.agent
        if agent is None:

            def none(finding: FindingView, claim: str) -> tuple[bool, str]:
                return False, "no agent is configured for the case, so no agent judge"

            matchers[clone.case.name] = none
        else:
            matchers[clone.case.name] = agent_matcher(agent, where)
    return lambda clone: matchers[clone.case.name]


class _EvalProgress:
    """A progress bar on stderr at a terminal; a line per finished run otherwise."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.count = 0
        self._bar: Any = None
        if stderr.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self._bar = Progress(
                "eval",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=stderr.console,
                transient=True,
            )
            self._task = self._bar.add_task("eval", total=total)

    def __enter__(self) -> _EvalProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def done(self, result: Any) -> None:  # noqa: ANN401 - a CaseResult
        self.count += 1
        line = f"[{self.count}/{self.total}] {result.case} ({result.condition}): {result.status}"
        if self._bar is not None:
            self._bar.advance(self._task)
            self._bar.console.print(line, markup=False, highlight=False)
        else:
            stderr.say(line)


@eval_app.command("mine")
def mine_command(
    outdir: Annotated[
        Path, typer.Argument(metavar="OUTDIR", help="Where to write the cases (created).")
    ],
    rev_range: Annotated[
        str | None,
        typer.Option(
            "--rev-range", metavar="A..B", help="Commits to try, as A..B (default: HEAD)."
        ),
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", metavar="N", min=1, help="Stop after writing N cases.")
    ] = None,
    only: Annotated[
        CaseKind | None,
        typer.Option("--only", metavar="KIND", help="Write only bug or only clean cases."),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Confirm the project's commands without asking.")
    ] = False,
    include_features: Annotated[
        bool,
        typer.Option(
            "--include-features",
            help="Also write feature cases: commits whose test fails on the reverted source only "
            "for a name it uses missing (an import, an attribute, a keyword); skipped otherwise.",
        ),
    ] = False,
) -> None:
    """Build cases from this repository's history (fix commits whose tests catch the bug)."""
    from eyeful.cli.progress import RichProgress
    from eyeful.config import load_config
    from eyeful.evaluate.mine import mine, to_markdown
    from eyeful.gitutil import current_directory, find_repo
    from eyeful.trust import TrustStore

    signal.signal(signal.SIGTERM, _sigterm)
    try:
        paths = find_repo(current_directory())
        config = load_config(paths.root)
        store = TrustStore()
        if not store.is_confirmed(paths.root, config):
            _confirm_for_mining(paths.root, config, store, yes)
        with RichProgress(stderr) as progress:
            report = mine(
                paths,
                config,
                outdir,
                rev_range=rev_range,
                limit=limit,
                progress=progress,
                only=None if only is None else only.value,
                include_features=include_features,
            )
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    except KeyboardInterrupt:
        raise _fail("interrupted; the cases written so far stay", EXIT_INTERRUPTED) from None
    print(to_markdown(report), end="")


def _confirm_for_mining(root: Path, config: Any, store: Any, yes: bool) -> None:  # noqa: ANN401
    from eyeful import focus
    from eyeful.textsafe import visible
    from eyeful.trust import shown_settings

    if not config.commands.test or focus.of(config.commands.test, config.commands.test_one) is None:
        raise EyefulError(
            "mining runs the project's `test` command and each test alone: configure "
            "commands.test, and commands.test_one unless eyeful derives it from a plain pytest, "
            "python -m unittest or go test command"
        )
    stderr.say(f"Project commands for {root} ({config.source}):")
    for name, command in shown_settings(config, root):
        stderr.say(f"  {visible(name):14} {visible(command)}")
    if not yes:
        if not _interactive():
            raise EyefulError(
                "the project's commands are not confirmed for this repository: "
                "run `git eyeful confirm` (or pass --yes)"
            )
        from eyeful.cli.terminal import ask_yes_no

        if not ask_yes_no("Run these commands for this repository?"):
            raise EyefulError("not confirmed; nothing ran")
    store.confirm(root, config)
