"""The `git eyeful` / `eyeful` command line: a thin layer over the core, the only place that prints.

Exit codes: 0 nothing blocking, 1 blocking issues, 2 bad usage/config/input, 3 could not verify,
4 internal error (a bug: the traceback is saved to a file), 130 interrupted.
"""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Literal

import typer
from typer._click.exceptions import ClickException
from typer.exceptions import Abort
from typer.models import OptionInfo

from eyeful import __version__, reaper
from eyeful.cli.progress import RichProgress
from eyeful.cli.reviewcmd import (
    ReviewOptions,
    describe_commands,
    emit,
    fail,
    guarded,
    interactive,
    run_review,
    to_confirm,
)
from eyeful.cli.terminal import Stderr, ask_yes_no
from eyeful.errors import EXIT_INTERRUPTED, EXIT_USAGE, EyefulError
from eyeful.gitutil import current_directory, find_repo

EPILOG = (
    "Configuration: [tool.eyeful] in pyproject.toml (or .eyeful.toml): commands.test runs the "
    "suite, commands.test_one runs one test ({test} is its id), commands.setup prepares a "
    "worktree; `git eyeful init` proposes them from the repository's files, writes and "
    "confirms them; `git eyeful confirm` allows them for this repository.\n\n"
    "Findings: problems claimed by experts (an agent in [tool.eyeful.agent], or --findings "
    "FILE), each with a reproduction test; one blocks only when its test fails on the change "
    "and not on the base.\n\n"
    "Exit codes: 0 nothing blocking; 1 blocking issues; 2 bad usage, configuration or input; "
    "3 could not verify (commands unconfirmed, setup failed, tests could not run); "
    "4 internal error (a bug in eyeful; its traceback is saved to a file); "
    "130 interrupted.\n\n"
    "Install: `pip install ./eyeful` from a clone of eyeful's repository, or `pipx install "
    "git+URL` with its URL (eyeful is not on PyPI).\n\n"
    "More: the README in that repository and `man git-eyeful` (what `git eyeful --help` opens)."
)


def _arguments_show_their_metavar() -> None:
    """typer 0.2x prints an argument's type after its name, even with a metavar (`OUTDIR <path>`,
    `CASE... <list[Path]>`): an argument with a metavar shows the metavar alone, as options do."""
    from typer.core import TyperArgument

    shown = getattr(TyperArgument, "display_type_rich", None)
    if shown is None or getattr(shown, "eyeful", False):
        return

    def display_type_rich(self: TyperArgument, ctx: object) -> str | None:
        return None if self.metavar is not None else shown(self, ctx)

    display_type_rich.eyeful = True  # type: ignore[attr-defined]
    setattr(TyperArgument, "display_type_rich", display_type_rich)  # noqa: B010


_arguments_show_their_metavar()

app = typer.Typer(
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Check a change before you push: run the confirmed tests on the staged change and on "
    "HEAD in temporary worktrees, and report what the change breaks.",
    epilog=EPILOG,
)

stderr = Stderr()
_DEFAULT = ReviewOptions()


class Level(str, Enum):
    execution = "execution"
    read_only = "read_only"


_LEVELS: dict[Level, Literal["execution", "read_only"]] = {
    Level.execution: "execution",
    Level.read_only: "read_only",
}


class Format(str, Enum):
    markdown = "markdown"
    json = "json"


def _fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
    fail(stderr, message)
    return typer.Exit(code)


def _file_option(flag: str, help_text: str) -> OptionInfo:
    """An option naming a file (not a directory)."""
    option: OptionInfo = typer.Option(flag, metavar="FILE", help=help_text, dir_okay=False)
    return option


@app.callback(invoke_without_command=True)
def review_command(
    ctx: typer.Context,
    base: Annotated[
        str | None,
        typer.Option("--base", metavar="REV", help="Base revision (default: HEAD)."),
    ] = None,
    head: Annotated[
        str | None,
        typer.Option(
            "--head", metavar="REV", help="Review this commit instead of the staged change."
        ),
    ] = None,
    output_format: Annotated[
        Format,
        typer.Option("--format", metavar="FORMAT", help="What to print: markdown or json."),
    ] = Format.markdown,
    jobs: Annotated[
        int,
        typer.Option(
            "-j",
            "--jobs",
            min=1,
            metavar="N",
            show_default=False,
            help="Worktrees to run in parallel (default: the number of cores).",
        ),
    ] = _DEFAULT.jobs,
    findings: Annotated[
        list[Path] | None,
        _file_option("--findings", "Findings to verify: a JSON array or JSON lines (repeatable)."),
    ] = None,
    description_file: Annotated[
        Path | None, _file_option("--description", "File with the change's description.")
    ] = None,
    message: Annotated[
        str | None,
        typer.Option("-m", "--message", metavar="TEXT", help="The change's description, inline."),
    ] = None,
    level: Annotated[
        Level | None,
        typer.Option(
            "--level",
            metavar="LEVEL",
            help="execution (run the gates) or read_only (judge only).",
        ),
    ] = None,
    sarif: Annotated[
        Path | None,
        _file_option("--sarif", "Also write every finding as SARIF 2.1.0 to this file."),
    ] = None,
    all_tests: Annotated[
        bool,
        typer.Option(
            "--all-tests",
            help="JSON: keep every test's outcome (default: failing and flaky tests, and counts).",
        ),
    ] = False,
    hook: Annotated[
        bool,
        typer.Option(
            "--hook",
            help="Running as a pre-push hook: end with what happened to the push and how to skip "
            "eyeful once (automatic under pre-commit).",
        ),
    ] = False,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Run everything: use no cached result.")
    ] = False,
    select: Annotated[
        str | None,
        typer.Option(
            "--select",
            metavar="all|affected",
            help="affected: run only the tests the change can affect (the map of the last full "
            "run); all: the whole suite (default: the configuration's select).",
        ),
    ] = None,
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
) -> None:
    """Review the staged change against HEAD (or --base/--head commits)."""
    if ctx.invoked_subcommand is not None:
        return
    if version:
        print(f"eyeful {__version__}")
        raise typer.Exit(0)
    if select not in (None, "all", "affected"):
        stderr.say(f"eyeful: error: --select {select!r}: use all or affected")
        raise typer.Exit(2)
    options = ReviewOptions(
        select="affected" if select == "affected" else "all" if select else None,
        base=base, head=head, output_format=output_format.value, jobs=jobs,
        findings=tuple(findings or ()), description_file=description_file, message=message,
        level=None if level is None else _LEVELS[level], sarif=sarif, all_tests=all_tests,
        hook=hook, no_cache=no_cache,
    )  # fmt: skip
    raise typer.Exit(run_review(options, stderr))


@app.command()
def init(
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Write and confirm without asking.")
    ] = False,
    print_only: Annotated[
        bool, typer.Option("--print", help="Print the proposed table on stdout; write nothing.")
    ] = False,
) -> None:
    """Write the project's commands and confirm them.

    Proposed from the repository's files (pytest's configuration, conftest.py, test files,
    unittest test cases, go.mod), appended to pyproject.toml as [tool.eyeful] (or written to a
    new .eyeful.toml), shown, and on your word written and confirmed. Never over an existing
    configuration. Exit 0 written (or printed), 1 you said no, 2 nothing written (an existing
    configuration, no tests found, no terminal without --yes)."""
    from eyeful.cli.initcmd import run_init

    try:
        code = run_init(stderr, yes=yes, print_only=print_only)
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    raise typer.Exit(code)


@app.command()
def confirm(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm without asking.")] = False,
) -> None:
    """Show the project's commands and remember that you allow them for this repository."""
    from eyeful.config import load_config
    from eyeful.trust import TrustStore

    store = TrustStore()
    try:
        paths = find_repo(current_directory())
        config = load_config(paths.root)
        store.check_writable()
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    if not to_confirm(config):
        raise _fail(
            "no commands to confirm: run `git eyeful init`, or add [tool.eyeful.commands] to "
            "pyproject.toml (or .eyeful.toml); see the README's Configuration"
        )
    describe_commands(stderr, config, paths)
    if store.is_confirmed(paths.root, config):
        stderr.say("Already confirmed.")
        return
    if not yes:
        if not interactive():
            raise _fail("not a terminal: pass --yes to confirm these commands")
        if not ask_yes_no("Run these commands for this repository?"):
            stderr.say("Not confirmed.")
            raise typer.Exit(1)
    try:
        store.confirm(paths.root, config)
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    stderr.say(f"Confirmed (recorded in {store.path}).")


@app.command()
def clean() -> None:
    """Remove eyeful's worktrees and cache from this repository (they come back on the next run)."""
    from eyeful.snapshot import open_repository
    from eyeful.worktrees import WorktreePool

    try:
        paths = find_repo(current_directory())
        removed = WorktreePool(paths, open_repository(paths)).remove_all()
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    stderr.say(f"Removed {removed} worktree(s) and eyeful's cache from {paths.state_dir}.")


@app.command("install-hook")
def install_hook_command() -> None:
    """Install eyeful's plain git pre-push hook (for repositories that do not use pre-commit)."""
    from eyeful.cli.hookinstall import install_hook

    try:
        target = install_hook(find_repo(current_directory()))
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    stderr.say(f"Installed the pre-push hook at {target}.")


@app.command()
def demo(
    keep: Annotated[
        bool,
        typer.Option(
            "--keep",
            help="Keep the throwaway repository (and report.json beside it), print its path.",
        ),
    ] = False,
) -> None:
    """Review a broken change in a throwaway copy of the bundled example project."""
    from eyeful.cli.demo import run_demo

    reaper.handle_interrupts()  # a second Ctrl-C cannot cut the cleanup short
    reaper.become_subreaper()
    try:
        with RichProgress(stderr) as progress:
            text, code, where = run_demo(progress, keep=keep)
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    except KeyboardInterrupt:
        raise _fail("interrupted", EXIT_INTERRUPTED) from None
    emit(text)
    stderr.say(
        f"(On a real change `git eyeful` would exit {code} here; the demo itself succeeded.)"
    )
    if keep:
        from eyeful.cli.demo import REPORT

        stderr.say(f"The demo repository is at {where}; its JSON report, {where.parent / REPORT}.")


_eval_added = False


def with_eval() -> typer.Typer:
    """The app with its `eval` sub-app: added only for a command line that may need it (typer
    reads every command's signature on each start, and `eval` has most of them)."""
    global _eval_added
    if not _eval_added:
        from eyeful.cli.evalcmd import eval_app

        app.add_typer(eval_app, name="eval")
        _eval_added = True
    return app


def _needs_eval(args: list[str]) -> bool:
    return any(arg in ("eval", "-h", "--help") for arg in args)


def _usage_line(err: ClickException) -> str:
    """click's usage error as one line (click prints usage, a hint and the error on three)."""
    return " ".join(err.format_message().replace("Value error, ", "").split())


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point for both `eyeful` and `git-eyeful`.

    Every ending is an exit code from the README's table: usage errors are one line and exit 2
    like every other bad input, and an unexpected error is one line and exit 4 (never 0 or 1, so
    a hook cannot take a crash for a verdict).
    """
    prog = Path(sys.argv[0]).name
    name = "git eyeful" if prog.startswith("git-") else "eyeful"
    return guarded(lambda: _invoke(argv, name), stderr)


def _invoke(argv: list[str] | None, name: str) -> int:
    """typer's run as an exit code: a usage error is one line and exit 2."""
    said = Stderr.errors_said
    try:
        args = sys.argv[1:] if argv is None else argv
        command = with_eval() if _needs_eval(args) else app
        result = command(args=args, prog_name=name, standalone_mode=False)
    except ClickException as err:
        fail(stderr, _usage_line(err))
        return err.exit_code if err.exit_code != 1 else EXIT_USAGE
    except Abort:
        fail(stderr, "interrupted")
        return EXIT_INTERRUPTED
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    if result == EXIT_INTERRUPTED and Stderr.errors_said == said:
        # typer turns an interrupt while it parses or starts the command into a silent 130.
        fail(stderr, "interrupted")
    return result if isinstance(result, int) else 0
