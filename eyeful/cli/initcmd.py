"""`git eyeful init`: propose a configuration from what the repository has, show it, and on the
user's word write it and confirm it.

Phases: the repository and where the table goes → what the ``python`` on PATH has → the proposal
(eyeful/projectscan.py) → the write, checked (eyeful/configwrite.py) → shown → asked (``--yes``:
not asked; no terminal and no ``--yes``: nothing written, exit 2, as `git eyeful confirm` does)
→ written and confirmed. ``--print`` prints the table on stdout and writes nothing.
"""

from __future__ import annotations

import shutil

from eyeful.cli.reviewcmd import interactive
from eyeful.cli.terminal import Stderr, ask_yes_no
from eyeful.config import load_config, parse_config
from eyeful.configwrite import apply, in_pyproject, plan
from eyeful.errors import EXIT_BLOCKING, EyefulError
from eyeful.gitutil import RepoPaths, current_directory, find_repo
from eyeful.projectscan import (
    NothingFound,
    Proposal,
    environment_facts,
    repository_files,
    scan,
)
from eyeful.textsafe import visible
from eyeful.trust import TrustStore, shown_settings


def propose(paths: RepoPaths) -> Proposal:
    """What the repository and the ``python`` on PATH suggest."""
    which = {name: shutil.which(name) for name in ("python", "python3")}
    facts = environment_facts(paths.root, which)
    try:
        return scan(paths.root, repository_files(paths.root), facts)
    except NothingFound as err:
        raise EyefulError(str(err)) from None


def _explain(stderr: Stderr, proposal: Proposal) -> None:
    stderr.say("eyeful init found:")
    for reason in proposal.reasons:
        stderr.say(f"  - {visible(reason)}")
    for note in proposal.notes:
        stderr.say(f"  ! {visible(note)}")


def run_init(stderr: Stderr, *, yes: bool, print_only: bool) -> int:
    """The command's body: the exit code (errors raise :class:`EyefulError`)."""
    paths = find_repo(current_directory())
    proposal = propose(paths)
    text = proposal.toml(in_pyproject=in_pyproject(paths.root))
    if print_only:
        parse_config(proposal.table(), "the proposal")  # what is printed configures eyeful
        _explain(stderr, proposal)
        print(text, end="")
        return 0
    store = TrustStore()
    write = plan(paths.root, text)
    store.check_writable()
    _explain(stderr, proposal)
    where = "a new file" if write.new else "the end of the file; nothing else in it changes"
    stderr.say(f"To write into {write.name} ({where}):")
    for line in text.splitlines():
        stderr.say(f"  {visible(line)}")
    stderr.say(f"Project commands for {visible(str(paths.root))}:")
    for name, value in shown_settings(write.config, paths.root):
        stderr.say(f"  {visible(name):14} {visible(value)}")
    if not yes:
        if not interactive():
            raise EyefulError(
                "not a terminal: pass --yes to write and confirm this configuration "
                "(or --print to see it only); nothing written"
            )
        if not ask_yes_no(f"Write this to {write.name} and run these commands here?"):
            stderr.say("Nothing written.")
            return EXIT_BLOCKING
    apply(write)
    store.confirm(paths.root, load_config(paths.root))
    stderr.say(
        f"Wrote {write.name} and confirmed its commands (recorded in {store.path}). "
        f"Next: stage a change (with {write.name}, to commit it) and run `git eyeful`."
    )
    return 0
