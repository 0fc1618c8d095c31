"""The `git eyeful` / `eyeful` command line: a thin layer over the core, the only place that prints.

Exit codes: 0 nothing blocking, 1 blocking issues, 2 bad usage/config/input, 3 could not verify,
4 internal error (a bug: the traceback is saved to a file), 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.console import Console
from typer._click.exceptions import ClickException
from typer.exceptions import Abort

from eyeful import __version__, reaper
from eyeful.config import Config, load_config
from eyeful.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, EyefulError
from eyeful.gitutil import RepoPaths, find_repo
from eyeful.precommit import confirm_command
from eyeful.terminal import RichProgress, ask_yes_no
from eyeful.textsafe import visible
from eyeful.trust import TrustStore, shown_settings

EPILOG = (
    "Configuration: [tool.eyeful] in pyproject.toml (or .eyeful.toml): commands.test runs the "
    "suite, commands.test_one runs one test ({test} is its id), commands.setup prepares a "
    "worktree; `git eyeful confirm` allows them for this repository.\n\n"
    "Findings: problems claimed by experts (an agent in [tool.eyeful.agent], or --findings "
    "FILE), each with a reproduction test; one blocks only when its test fails on the change "
    "and not on the base.\n\n"
    "Exit codes: 0 nothing blocking; 1 blocking issues; 2 bad usage, configuration or input; "
    "3 could not verify (commands unconfirmed, setup failed, tests could not run); "
    "4 internal error (a bug in eyeful; its traceback is saved to a file); "
    "130 interrupted.\n\n"
    "More: the README (https://pypi.org/project/eyeful/) and `man git-eyeful` "
    "(what `git eyeful --help` opens)."
)

app = typer.Typer(
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    help="Check a change before you push: run the confirmed tests on the staged change and on "
    "HEAD in temporary worktrees, and report what the change breaks.",
    epilog=EPILOG,
)

stderr = Console(stderr=True, highlight=False)


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
    stderr.print(f"eyeful: error: {message}", markup=False, soft_wrap=True)
    return typer.Exit(code)


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _to_confirm(config: Config) -> list[tuple[str, str]]:
    """What a confirmation covers: the project commands and the agent eyeful would start."""
    return config.commands.items() + (config.agent.digest_items() if config.agent else [])


def _describe_commands(config: Config, paths: RepoPaths) -> None:
    """Everything the confirmation covers, escaped: no control character reaches the terminal."""
    stderr.print(f"Project commands for {visible(str(paths.root))} ({config.source}):",
                 markup=False)  # fmt: skip
    for name, value in shown_settings(config, paths.root):
        stderr.print(f"  {visible(name):14} {visible(value)}", markup=False, soft_wrap=True)


def _ensure_confirmed(paths: RepoPaths, config: Config, store: TrustStore) -> bool:
    """Confirmed before, or confirmed now when someone is at the terminal to ask."""
    if not _to_confirm(config) or store.is_confirmed(paths.root, config):
        return True
    if not _interactive():
        stderr.print(
            "eyeful: the project's commands are not confirmed for this repository; "
            f"running none (run `{confirm_command()}`)",
            markup=False,
        )
        return False
    _describe_commands(config, paths)
    if ask_yes_no("Run these commands for this repository?"):
        store.confirm(paths.root, config)
        return True
    return False


def _pre_commit_range() -> tuple[str | None, str | None]:
    """The pushed range pre-commit passes to a pre-push hook, if any.

    For a root commit pre-commit sets no from/to refs (it runs with --all-files); the pushed
    branch is then reviewed against the empty tree rather than not at all.
    """
    base = os.environ.get("PRE_COMMIT_FROM_REF") or None
    head = os.environ.get("PRE_COMMIT_TO_REF") or None
    if base is None and head is None:
        local = os.environ.get("PRE_COMMIT_LOCAL_BRANCH")
        if local and os.environ.get("PRE_COMMIT_REMOTE_BRANCH"):
            return "0" * 40, local
    return base, head


def _hook_mode(flag: bool) -> Literal["pre-commit", "git"] | None:
    """pre-commit sets PRE_COMMIT=1 for every hook it runs; the plain hook passes --hook."""
    if os.environ.get("PRE_COMMIT") == "1":
        return "pre-commit"
    return "git" if flag else None


def _read_description(path: Path | None, message: str | None) -> str:
    if path is not None and message is not None:
        raise EyefulError("give the description with --description FILE or -m TEXT, not both")
    if path is None:
        return message or ""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise EyefulError(f"--description {path}: cannot read it: {err}") from None


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
    ] = os.cpu_count() or 2,
    findings: Annotated[
        list[Path] | None,
        typer.Option(
            "--findings",
            metavar="FILE",
            help="Findings to verify: a JSON array or JSON lines (repeatable).",
            dir_okay=False,
        ),
    ] = None,
    description_file: Annotated[
        Path | None,
        typer.Option(
            "--description",
            metavar="FILE",
            help="File with the change's description.",
            dir_okay=False,
        ),
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
        typer.Option(
            "--sarif",
            metavar="FILE",
            help="Also write every finding as SARIF 2.1.0 to this file.",
            dir_okay=False,
        ),
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
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
) -> None:
    """Review the staged change against HEAD (or --base/--head commits)."""
    if ctx.invoked_subcommand is not None:
        return
    if version:
        print(f"eyeful {__version__}")
        raise typer.Exit(0)
    from eyeful.findings import load_findings
    from eyeful.preflight import check_output_file, check_repro_paths, check_state_dir
    from eyeful.report import to_markdown
    from eyeful.review import ReviewRequest, review
    from eyeful.snapshot import open_repository, take_snapshot

    reaper.handle_interrupts()  # a second Ctrl-C cannot cut the cleanup short
    reaper.become_subreaper()
    try:
        if sarif is not None:
            check_output_file(sarif, "--sarif")
        paths = find_repo(Path.cwd())
        check_state_dir(paths)
        config = load_config(paths.root)
        if base is None and head is None:
            base, head = _pre_commit_range()
        given = load_findings(findings or [])
        description = _read_description(description_file, message)
        snapshot = take_snapshot(paths, base, head)
        check_repro_paths(open_repository(paths), snapshot, given)
        provider = None
        if config.agent is not None and not snapshot.empty:
            from eyeful.providers import make_provider

            provider = make_provider(config.agent)  # a bad agent setting stops here: exit 2
        confirmed = snapshot.empty or _ensure_confirmed(paths, config, TrustStore())
        request = ReviewRequest(
            paths, config, snapshot, confirmed, jobs=jobs, findings=given,
            description=description,
            level=None if level is None else _LEVELS[level],
            provider=provider, no_cache=no_cache,
        )  # fmt: skip
        with RichProgress(stderr) as progress:
            report = review(request, progress)
        if sarif is not None:
            from eyeful.sarif import write_sarif

            write_sarif(report, sarif, root=paths.root)
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    except KeyboardInterrupt:
        raise _fail("interrupted; nothing of yours was changed", EXIT_INTERRUPTED) from None
    if output_format is Format.json:
        from eyeful.report import compact

        print((report if all_tests else compact(report)).model_dump_json(indent=2))
    else:
        print(to_markdown(report, _hook_mode(hook)), end="")
    raise typer.Exit(report.exit_code)


@app.command()
def confirm(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm without asking.")] = False,
) -> None:
    """Show the project's commands and remember that you allow them for this repository."""
    store = TrustStore()
    try:
        paths = find_repo(Path.cwd())
        config = load_config(paths.root)
        store.check_writable()
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    if not _to_confirm(config):
        raise _fail(
            "no commands to confirm: add [tool.eyeful.commands] to pyproject.toml "
            "(or .eyeful.toml); see the README's Configuration"
        )
    _describe_commands(config, paths)
    if store.is_confirmed(paths.root, config):
        stderr.print("Already confirmed.")
        return
    if not yes:
        if not _interactive():
            raise _fail("not a terminal: pass --yes to confirm these commands")
        if not ask_yes_no("Run these commands for this repository?"):
            stderr.print("Not confirmed.")
            raise typer.Exit(1)
    try:
        store.confirm(paths.root, config)
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    stderr.print(f"Confirmed (recorded in {store.path}).", markup=False, soft_wrap=True)


@app.command()
def clean() -> None:
    """Remove eyeful's worktrees and cache from this repository (they come back on the next run)."""
    from eyeful.snapshot import open_repository
    from eyeful.worktrees import WorktreePool

    try:
        paths = find_repo(Path.cwd())
        removed = WorktreePool(paths, open_repository(paths)).remove_all()
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    stderr.print(
        f"Removed {removed} worktree(s) and eyeful's cache from {paths.state_dir}.",
        markup=False,
        soft_wrap=True,
    )


@app.command("install-hook")
def install_hook_command() -> None:
    """Install eyeful's plain git pre-push hook (for repositories that do not use pre-commit)."""
    from eyeful.hookinstall import install_hook

    try:
        target = install_hook(find_repo(Path.cwd()))
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    stderr.print(f"Installed the pre-push hook at {target}.", markup=False, soft_wrap=True)


@app.command()
def demo(
    keep: Annotated[
        bool, typer.Option("--keep", help="Keep the throwaway repository and print its path.")
    ] = False,
) -> None:
    """Review a broken change in a throwaway copy of the bundled example project."""
    from eyeful.demo import run_demo

    reaper.handle_interrupts()  # a second Ctrl-C cannot cut the cleanup short
    reaper.become_subreaper()
    try:
        with RichProgress(stderr) as progress:
            text, code, where = run_demo(progress, keep=keep)
    except EyefulError as err:
        raise _fail(str(err), err.exit_code) from None
    except KeyboardInterrupt:
        raise _fail("interrupted", EXIT_INTERRUPTED) from None
    print(text, end="")
    stderr.print(
        f"(On a real change `git eyeful` would exit {code} here; the demo itself succeeded.)",
        markup=False,
    )
    if keep:
        stderr.print(f"The demo repository is at {where}.", markup=False, soft_wrap=True)


def _add_eval() -> None:
    from eyeful.evalcli import eval_app

    app.add_typer(eval_app, name="eval")


_add_eval()


def _usage_line(err: ClickException) -> str:
    """click's usage error as one line (click prints usage, a hint and the error on three)."""
    return " ".join(err.format_message().replace("Value error, ", "").split())


def _internal_error(err: BaseException) -> int:
    from eyeful.crash import one_line, save_traceback

    saved = save_traceback(err)
    where = f"the traceback is in {saved}" if saved else "the traceback could not be saved"
    stderr.print(
        f"eyeful: internal error (a bug in eyeful, not a verdict): {one_line(err)}; {where}",
        markup=False,
        soft_wrap=True,
    )
    return EXIT_INTERNAL


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point for both `eyeful` and `git-eyeful`.

    Every ending is an exit code from the README's table: usage errors are one line and exit 2
    like every other bad input, and an unexpected error is one line and exit 4 (never 0 or 1, so
    a hook cannot take a crash for a verdict).
    """
    prog = Path(sys.argv[0]).name
    name = "git eyeful" if prog.startswith("git-") else "eyeful"
    try:
        result = app(args=argv, prog_name=name, standalone_mode=False)
    except ClickException as err:
        stderr.print(f"eyeful: error: {_usage_line(err)}", markup=False, soft_wrap=True)
        return err.exit_code if err.exit_code != 1 else EXIT_USAGE
    except (Abort, KeyboardInterrupt):
        stderr.print("eyeful: error: interrupted", markup=False)
        return EXIT_INTERRUPTED
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except Exception as err:
        return _internal_error(err)
    finally:
        reaper.sweep_all()  # nothing eyeful started outlives it
    return result if isinstance(result, int) else 0
