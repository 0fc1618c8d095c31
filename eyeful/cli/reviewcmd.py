"""The review command (`git eyeful`): part of the command line, so it prints; the core does not.

`git eyeful` with no arguments (what pre-commit's hook and a developer run before each push), and
the plain hook's own `--hook --base ID --head ID`, start here straight from eyeful/cli/launch.py
without importing typer (:func:`quick_options`); every other command line is parsed by
eyeful/cli/app.py into the same `ReviewOptions`. Either way the same function runs, and it
imports what a review needs when it needs it: findings, agents, SARIF and JSON only when asked.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from eyeful import interrupts, reaper
from eyeful.cli.precommit import confirm_hint
from eyeful.cli.progress import RichProgress
from eyeful.cli.terminal import Stderr, ask_yes_no
from eyeful.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EyefulError
from eyeful.gitutil import RepoPaths, current_directory, find_repo, is_commit_id
from eyeful.textsafe import visible

if TYPE_CHECKING:
    from eyeful.cache import Served
    from eyeful.cli.replay import Memory
    from eyeful.config import Config
    from eyeful.environment import EnvironmentKey
    from eyeful.findings import Finding
    from eyeful.report import Report
    from eyeful.review import ReviewRequest
    from eyeful.runs import Progress
    from eyeful.trust import TrustStore


@dataclass(frozen=True)
class ReviewOptions:
    """What the review command was asked; the defaults are `git eyeful` with no options."""

    base: str | None = None
    head: str | None = None
    output_format: Literal["markdown", "json"] = "markdown"
    jobs: int = field(default_factory=lambda: os.cpu_count() or 2)
    findings: tuple[Path, ...] = ()
    description_file: Path | None = None
    message: str | None = None
    level: Literal["execution", "read_only"] | None = None
    sarif: Path | None = None
    all_tests: bool = False
    hook: bool = False
    no_cache: bool = False
    select: Literal["all", "affected"] | None = None


def emit(text: str) -> None:
    """The report on stdout, whole: from here an interrupt (a slow reader, a late Ctrl-C) changes
    nothing, and a reader that went away (`git eyeful | head -1`) neither: the review's exit code
    stands."""
    interrupts.decided()
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # What is still buffered cannot be written either: point stdout at /dev/null so that
        # the interpreter's own flush at exit does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def fail(stderr: Stderr, message: str) -> None:
    """One line: whatever the message quotes (a key, a field, a path) is shown escaped."""
    stderr.say(f"eyeful: error: {visible(message)}")


def to_confirm(config: Config) -> list[tuple[str, str]]:
    """What a confirmation covers: the project commands and the agent eyeful would start."""
    return config.commands.items() + (config.agent.digest_items() if config.agent else [])


def describe_commands(stderr: Stderr, config: Config, paths: RepoPaths) -> None:
    """Everything the confirmation covers, escaped: no control character reaches the terminal."""
    from eyeful.trust import shown_settings

    stderr.say(f"Project commands for {visible(str(paths.root))} ({config.source}):")
    for name, value in shown_settings(config, paths.root):
        stderr.say(f"  {visible(name):14} {visible(value)}")
    for line in prompt_changes(paths.root):
        stderr.say(f"    {visible(line)}")


PROMPT_LINES = 400
"""At most this many lines of prompt changes are shown; the rest is counted."""


def prompt_changes(root: Path) -> list[str]:
    """What the prompt overrides confirmed with the commands say: for a prompt eyeful ships, a
    unified diff against it; for any other, its whole text. Not escaped: callers escape."""
    import difflib
    from importlib import resources

    from eyeful.inputfiles import read_regular
    from eyeful.userfiles import PROMPTS_DIR, prompt_overrides

    out: list[str] = []
    for name, digest in prompt_overrides(root).items():
        if digest.startswith(("not used", "unreadable")):
            continue
        try:
            text = read_regular(root / PROMPTS_DIR / name, name).decode("utf-8", "replace")
        except EyefulError:
            continue
        shipped = resources.files("eyeful.agents") / "prompts" / name
        ours = str(PROMPTS_DIR / name)
        if shipped.is_file():
            original = shipped.read_text(encoding="utf-8")
            diff = difflib.unified_diff(
                original.splitlines(), text.splitlines(), f"eyeful's {name}", ours, lineterm=""
            )
            out += list(diff) or [f"{ours}: the same as eyeful's {name}"]
        else:
            out += [f"{ours} (eyeful ships no {name}; its whole text):"]
            out += [f"| {line}" for line in text.splitlines()]
    if len(out) > PROMPT_LINES:
        rest = len(out) - PROMPT_LINES
        out = [*out[:PROMPT_LINES], f"... {rest} more lines: read them in {PROMPTS_DIR}"]
    return out


def interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _ensure_confirmed(stderr: Stderr, paths: RepoPaths, config: Config, store: TrustStore) -> bool:
    """Confirmed before, or confirmed now when someone is at the terminal to ask."""
    if not to_confirm(config) or store.is_confirmed(paths.root, config):
        return True
    if not interactive():
        stderr.say(
            "eyeful: the project's commands are not confirmed for this repository; "
            f"running none ({confirm_hint(paths.root)})"
        )
        return False
    describe_commands(stderr, config, paths)
    if ask_yes_no("Run these commands for this repository?"):
        store.confirm(paths.root, config)
        return True
    return False


def _pre_commit_range(root: Path) -> tuple[str | None, str | None]:
    """The pushed range pre-commit passes to a pre-push hook, if any.

    Where pre-commit sets no from/to refs (it runs with --all-files: a root commit, or a new
    branch pushed by URL or to a remote never fetched, whose remote-tracking refs it looks for
    by that name), the pushed branch is reviewed from what the remote lacks
    (:func:`_first_unpushed_parent`: helper-82, -84, -85), else against the empty tree rather
    than not at all.
    """
    base = os.environ.get("PRE_COMMIT_FROM_REF") or None
    head = os.environ.get("PRE_COMMIT_TO_REF") or None
    if base is None and head is None:
        local = os.environ.get("PRE_COMMIT_LOCAL_BRANCH")
        if local and os.environ.get("PRE_COMMIT_REMOTE_BRANCH"):
            return _first_unpushed_parent(root, local) or "0" * 40, local
    return base, head


def _first_unpushed_parent(root: Path, local: str) -> str | None:
    """The parent of the first commit of ``local`` the remote lacks, by its remote-tracking
    refs: the pushed remote's, those of every remote of the pushed URL (as git expands it,
    `file://`, a trailing slash and `.git` aside), else any remote's (a remote never fetched:
    helper-84; where that guess finds every commit on some remote, the whole branch), as the
    plain hook reads them; ``local`` itself where no commit is new (nothing to review)."""
    from eyeful.gitutil import git

    def said(*args: str) -> list[str]:
        done = git(*args, cwd=root, check=False)
        return done.stdout.decode(errors="replace").split() if done.returncode == 0 else []

    def refs(name: str) -> bool:
        return bool(said("for-each-ref", "--count=1", f"refs/remotes/{name}/"))

    remote = os.environ.get("PRE_COMMIT_REMOTE_NAME", "")
    url = _same_url(os.environ.get("PRE_COMMIT_REMOTE_URL", ""))
    names = [remote] if remote and refs(remote) else []
    if not names and url:
        for name in said("remote"):
            urls = said("remote", "get-url", "--all", name)
            urls += said("remote", "get-url", "--push", "--all", name)
            if any(_same_url(each) == url for each in urls) and refs(name):
                names.append(name)
    known = [f"--remotes={name}" for name in names] or ["--remotes"]
    first = said("rev-list", "--topo-order", "--reverse", local, "--not", *known)[:1]
    if not first and names:
        return local  # (every commit is on the remote already)
    if not first:  # (the guess: some remote has them all, which says nothing of this one)
        first = said("rev-list", "--topo-order", "--reverse", local)[:1]
    if not first:
        return None
    parent = git("rev-parse", "-q", "--verify", f"{first[0]}^", cwd=root, check=False)
    found = parent.stdout.decode(errors="replace").strip()
    return found if parent.returncode == 0 and found else None


def _same_url(url: str) -> str:
    """A remote's URL as it compares: without `file://`, a trailing slash, a trailing `.git`."""
    return url.removeprefix("file://").rstrip("/").removesuffix(".git")


def _hook_mode(flag: bool) -> Literal["pre-commit", "git"] | None:
    """pre-commit sets PRE_COMMIT=1 for every hook it runs; the plain hook passes --hook."""
    if os.environ.get("PRE_COMMIT") == "1":
        return "pre-commit"
    return "git" if flag else None


DESCRIPTION_LIMIT = 16 * 1024 * 1024


def _read_description(path: Path | None, message: str | None) -> str:
    if path is not None and message is not None:
        raise EyefulError("give the description with --description FILE or -m TEXT, not both")
    if path is None:
        return message or ""
    from eyeful.inputfiles import read_regular

    raw = read_regular(path, f"--description {path}", limit=DESCRIPTION_LIMIT)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise EyefulError(f"--description {path}: cannot read it: {err}") from None


def run_review(options: ReviewOptions, stderr: Stderr, memory: Memory | None = None) -> int:
    """One review, printed: the report on stdout, messages on stderr; returns the exit code.

    The phases, each usable on its own (the tests run them in-process, tests/core.py):
    :func:`prepare` the request, :func:`reviewed` by the core, :func:`render` the report. With
    ``memory``, a review that can be given again unchanged is remembered (eyeful/cli/replay.py).
    """
    reaper.handle_interrupts()  # a second Ctrl-C cannot cut the cleanup short
    reaper.become_subreaper()
    served: Served = []
    try:
        request = prepare(options, stderr, served if memory else None,
                          memory.environment if memory else None,
                          memory.paths if memory else None)  # fmt: skip
        with RichProgress(stderr) as progress:
            report = reviewed(request, options, progress)
    except EyefulError as err:
        fail(stderr, str(err))
        return err.exit_code
    except KeyboardInterrupt:
        fail(stderr, "interrupted; nothing of yours was changed")
        return EXIT_INTERRUPTED
    text = render(report, options)
    emit(text)
    replayable = options.output_format == "markdown" and _replayable(report, request.config)
    if memory is not None and replayable:
        memory.record(text, served)
    return report.exit_code


def render(report: Report, options: ReviewOptions) -> str:
    """The report as the review command prints it: markdown, or JSON (`--format json`)."""
    if options.output_format == "json":
        from eyeful.report import compact
        from eyeful.textsafe import json_text

        shown = report if options.all_tests else compact(report)
        return json_text(shown.model_dump_json(indent=2)) + "\n"
    from eyeful.report import to_markdown

    return to_markdown(report, _hook_mode(options.hook))


def _replayable(report: Report, config: Config) -> bool:
    """Only what never blocks, and only when nothing ran: every run was served from the cache,
    so the same review later would print the same text."""
    return (
        report.outcome in ("clean", "nothing_to_review")
        and report.exit_code == 0
        and config.agent is None
        and not report.findings
        and not report.agents
        and all(run.cached for run in report.runs)
    )


def prepare(
    options: ReviewOptions,
    stderr: Stderr,
    served: Served | None,
    environment: EnvironmentKey | None = None,
    paths: RepoPaths | None = None,
) -> ReviewRequest:
    """What the core is asked: the inputs checked, the snapshot taken, the commands confirmed
    (asked on the terminal when someone is there). Bad input raises EyefulError (exit 2).
    ``paths``: the repository as the replay's lookup just found it (git is not asked twice)."""
    from eyeful.cli.preflight import check_output_file, check_state_dir
    from eyeful.config import load_config
    from eyeful.review import ReviewRequest
    from eyeful.snapshot import take_snapshot
    from eyeful.trust import TrustStore

    if options.sarif is not None:
        check_output_file(options.sarif, "--sarif")
    paths = paths or find_repo(current_directory())
    check_state_dir(paths)
    config = load_config(paths.root)
    base, head = options.base, options.head
    if base is None and head is None:
        base, head = _pre_commit_range(paths.root)
    given = _given_findings(options.findings)
    description = _read_description(options.description_file, options.message)
    snapshot = take_snapshot(paths, base, head)
    if given:
        from eyeful.cli.preflight import check_repro_paths
        from eyeful.snapshot import open_repository

        check_repro_paths(open_repository(paths), snapshot, given)
    provider = None
    if config.agent is not None and not snapshot.empty:
        from eyeful.agents.transport import make_provider

        provider = make_provider(
            config.agent, config.sandbox
        )  # a bad agent setting stops here: exit 2
    confirmed = snapshot.empty or _ensure_confirmed(stderr, paths, config, TrustStore())
    return ReviewRequest(
        paths, config, snapshot, confirmed, jobs=options.jobs, findings=given,
        description=description, level=options.level, provider=provider,
        select=options.select,
        no_cache=options.no_cache, served=served, confirm_hint=confirm_hint(paths.root),
        environment=environment,
    )  # fmt: skip


def reviewed(request: ReviewRequest, options: ReviewOptions, progress: Progress) -> Report:
    """The core's review of ``request``; the SARIF file too when asked (`--sarif`)."""
    from eyeful.review import review

    report = review(request, progress)
    if options.sarif is not None:
        from eyeful.sarif import write_sarif

        write_sarif(report, options.sarif, root=request.paths.root)
    return report


def _given_findings(files: tuple[Path, ...]) -> list[Finding]:
    if not files:
        return []
    from eyeful.findings import load_findings

    return load_findings(list(files))


def internal_error(stderr: Stderr, err: BaseException) -> int:
    """A bug in eyeful: one line naming the saved traceback, exit 4 (never a verdict)."""
    from eyeful.cli.crash import one_line, save_traceback

    saved = save_traceback(err)
    where = f"the traceback is in {saved}" if saved else "the traceback could not be saved"
    stderr.say(f"eyeful: internal error (a bug in eyeful, not a verdict): {one_line(err)}; {where}")
    return EXIT_INTERNAL


def guarded(body: Callable[[], int], stderr: Stderr) -> int:
    """Every ending an exit code from the README's table; nothing eyeful started outlives it."""
    try:
        return body()
    except KeyboardInterrupt:
        fail(stderr, "interrupted")
        return EXIT_INTERRUPTED
    except Exception as err:
        return internal_error(stderr, err)
    finally:
        reaper.sweep_all()


def quick_options(args: list[str]) -> ReviewOptions | None:
    """The command lines a review takes without typer: none at all (pre-commit's hook, a
    developer's `git eyeful`), `--format json` alone (scripts, CI, benchmarks/bench_run.py), and
    the plain pre-push hook's own `--hook --base ID --head ID` with full commit ids
    (hooks/pre-push). Any other command line is the CLI's to parse."""
    if not args:
        return ReviewOptions()
    if args in (["--format", "json"], ["--format=json"]):
        return ReviewOptions(output_format="json")
    if (
        len(args) == 5
        and (args[0], args[1], args[3]) == ("--hook", "--base", "--head")
        and is_commit_id(args[2])
        and is_commit_id(args[4])
    ):
        return ReviewOptions(base=args[2], head=args[4], hook=True)
    return None


def main_quick(options: ReviewOptions, args: list[str]) -> int:
    """A review from :func:`quick_options`, or the remembered one when nothing it depended on
    changed (eyeful/cli/replay.py)."""
    stderr = Stderr()

    def body() -> int:
        from eyeful.cli.replay import Memory

        # Only markdown is remembered (`run_review`): another format never replays.
        memory = Memory.here(args) if options.output_format == "markdown" else None
        text = None if memory is None else memory.lookup()
        if text is not None:
            emit(text)
            return 0
        return run_review(options, stderr, memory)

    return guarded(body, stderr)
