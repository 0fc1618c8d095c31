"""The confirmed commands as eyeful runs them: for the runner's record, and one test at a time.

What eyeful adds to a confirmed command changes what the runner *says*, never what it runs:

- a plain ``python -m unittest ...`` gets ``-v`` (its lines name each test as unittest takes it
  back: eyeful/unittest_records.py);
- a plain ``go test ...`` gets ``-json`` (Go's record: eyeful/go_records.py).

One test on its own (:func:`of`) is ``test_one`` where it is configured. Where it is not and
``test`` is a plain ``go test``, it is derived: ``go test -json FLAGS -run '^TestX$/^sub$' PKG``
for each package-qualified id (Go's own names; a bare ``-run TestX ./...`` would also run a test of
that name in every other package). A plain ``python -m unittest`` gives ``python -m unittest
{test}``. A plain pytest command gives the same command with the ids in place of the words pytest
took as paths: which words those are, among options of pytest's, of its plugins and of the
project's own ``pytest_addoption``, only pytest's parser knows, so the probe records its parse
of the test command's run (``records.Invocation``) and the command is derived from that record
(a command with no option at all needs none). A derived command is a function of the confirmed
``test`` command (and pytest's reading of it) alone, so confirming ``test`` confirms it; the
confirmation shows it, or that it comes from pytest's parse at the first run, or why there is
none (:func:`why_not`).

A configured Go ``test_one`` (``go test ... -run {test} ...``) gets in ``{test}`` what ``-run``
matches: the test's own name anchored per level (``^TestX$/^sub$``), never the package-qualified
id eyeful shows and stores (which matches nothing). Where it is a plain ``go test [flags] -run
{test} [packages]`` it runs like the derived one, with its flags, in the test's package (with
``-json``: Go's record); any other is run as written, the pattern in ``{test}``.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from eyeful import results
from eyeful.confine import Refused
from eyeful.go_records import (
    bare_name,
    check_go_id,
    go_package,
    go_test_args,
    run_pattern,
    split_go_id,
)
from eyeful.records import Invocation
from eyeful.testids import IdCommand, check_test_id, id_path, with_ids

__all__ = ["AT_FIRST_RUN", "Alone", "Focus", "for_record", "of", "passable", "why_not"]

AT_FIRST_RUN = (
    "the test command, the words pytest takes as paths replaced by the ids  (derived from "
    "pytest's parse of the test command at its first run)"
)
"""What the confirmation shows of a ``test_one`` that pytest's parse of ``test`` decides."""

_SHELL = re.compile(r"[;&|<>`$(){}\\\n\r#'\"*?\[\]~]")
_UNITTEST = re.compile(r"^(\S*python[\d.]*) -m unittest(?= |$)")
_UNITTEST_WORDS = re.compile(r"[;&|<>`$(){}]|-v\b|--verbose\b|-q\b|--quiet\b")
_GO_TEST = re.compile(r"^go test(?= |$)")
# go test's flags that take no value; any other flag is kept only as -name=value.
_GO_BOOL_FLAGS = frozenset(
    ("-v", "-race", "-short", "-failfast", "-cover", "-trimpath", "-json", "-msan", "-asan")
)
_GO_VALUE = re.compile(r"-{1,2}[a-z][\w.]*=\S*")
_GO_PACKAGE = re.compile(r"[\w.][\w./@+~-]*|\.")
_GO_TEST_ANYWHERE = re.compile(r"(?:^|[\s;&|(])go test(?= |$)")
_GO_RUN_TEST = re.compile(r"(?:^|\s)--?run(?:=|\s+)\{test\}(?=\s|$)")


def for_record(command: str) -> str:
    """``command`` with what makes its runner keep a record of each test (see the module's
    docstring); anything not plain is run as written."""
    match = _UNITTEST.match(command)
    if match is not None:
        if _UNITTEST_WORDS.search(command[match.end() :].replace('"$@"', "")):
            return command
        return f"{command} -v"  # last: `-v discover ...` would not parse
    flags = _go_flags(command)
    if flags is not None and "-json" not in flags:
        return "go test -json" + command[len("go test") :]
    return command


def _go_flags(command: str) -> list[str] | None:
    """The flags of a plain ``go test [flags] [packages]``: flags without a value, or given as
    ``-name=value``; None for anything else (a flag whose value is a separate word cannot be
    told from a package without knowing go's flags: such a command is run as written)."""
    if not _GO_TEST.match(command) or _SHELL.search(command):
        return None
    flags = []
    for word in command.split()[2:]:
        if word.startswith("-"):
            if word not in _GO_BOOL_FLAGS and not _GO_VALUE.fullmatch(word):
                return None
            if word.split("=", 1)[0].lstrip("-") == "run":
                return None  # the command picks its own tests: not plain
            flags.append(word)
        elif not _GO_PACKAGE.fullmatch(word):
            return None
    return flags


def _go_one_flags(template: str) -> tuple[str, ...] | None:
    """The flags of a plain Go ``test_one``, ``go test [flags] -run {test} [packages]`` (or
    ``-run={test}``), ``-json`` aside; None for any other (run as written)."""
    words = template.split()
    for at, word in enumerate(words):
        if word in ("-run={test}", "--run={test}"):
            rest = words[:at] + words[at + 1 :]
            break
        if word in ("-run", "--run") and words[at + 1 : at + 2] == ["{test}"]:
            rest = words[:at] + words[at + 2 :]
            break
    else:
        return None
    flags = _go_flags(" ".join(rest))
    return None if flags is None else tuple(f for f in flags if f != "-json")


def passable(test: str) -> bool:
    """Whether an id can be given to a focused command (safe data: eyeful/testids.py; a Go id:
    eyeful/go_records.py, whose subtest names may hold ``#``)."""
    for check in (check_test_id, check_go_id):
        try:
            check(test)
        except ValueError:
            continue
        return True
    return False


@dataclass(frozen=True)
class Focus:
    """How one test runs on its own: a ``test_one`` template, or Go's derived command."""

    template: str | None = None
    """``test_one`` as configured (``{test}`` is the id, or a Go test's ``-run`` pattern)."""
    go_flags: tuple[str, ...] | None = None
    """Set when derived from a plain ``go test``, or for a plain Go ``test_one``: the flags it
    keeps."""
    from_test: bool = False
    """``template`` was derived from a plain pytest or ``python -m unittest`` ``test``."""
    go_run: bool = False
    """``template`` is a Go ``test_one``: ``{test}`` is a ``-run`` pattern."""
    at_first_run: bool = False
    """Derived from a plain pytest ``test`` with options, before pytest's parse of it is known:
    no ``template`` yet (it comes from the record of the test command's run)."""

    @property
    def derived(self) -> bool:
        return (self.go_flags is not None and self.template is None) or self.from_test

    @property
    def ready(self) -> bool:
        """Whether tests can run with it now (not waiting for pytest's parse of ``test``)."""
        return not self.at_first_run

    @property
    def shown(self) -> str:
        """The command as the confirmation and the README show it."""
        if self.at_first_run:
            return AT_FIRST_RUN
        if self.template is None:
            assert self.go_flags is not None
            return shlex.join(["go", "test", "-json", *self.go_flags, "-run", "^NAME$", "PACKAGE"])
        return self.template

    def commands(
        self, tests: Sequence[str], *, each: bool = False, grouped: bool = False
    ) -> list[IdCommand]:
        """The commands for ``tests``: one for them all where the runner takes several ids
        (pytest) unless ``each``, else one per id; ``grouped``, Go's top-level tests one command
        per package (for a caller that reads each run for the ids it names). The ids travel as
        arguments, never as shell text; raises :class:`Refused` for an id that is not safe
        data."""
        assert self.ready, "callers run tests alone only once pytest's parse is known"
        try:
            go = self.go_flags is not None or self.go_run
            for test in tests:
                (check_go_id if go else check_test_id)(test, "the test id")
            if self.go_flags is not None:
                return self._go_grouped(tests) if grouped else [self._go(t) for t in tests]
            assert self.template is not None
            if self.go_run:
                return [self._go_as_written(test) for test in tests]
            if len(tests) > 1 and self.several and not each:
                return [with_ids(self.template, tests)]
            return [with_ids(self.template, [test]) for test in tests]
        except ValueError as err:
            raise Refused(str(err)) from None

    @property
    def several(self) -> bool:
        """Whether one command runs several ids (a plain pytest ``test_one``)."""
        if self.template is None or self.go_run:
            return False
        return results.is_pytest_command(self.template.replace("{test}", "ids"))

    def rerun(self, test: str) -> str:
        """The command to paste into a shell that runs ``test`` alone."""
        return self.commands([test])[0].shown

    def _go(self, test: str) -> IdCommand:
        package, _, pattern = go_test_args(test)
        return self._go_pattern(package, pattern)

    def _go_grouped(self, tests: Sequence[str]) -> list[IdCommand]:
        """One command per package for its top-level tests (``-run '^(TestA|TestB)$'``), one
        per subtest or package of its own: a Go project's forty skipped tests asked of the base
        are four `go test` runs, not forty."""
        by_package: dict[str, list[str]] = {}
        out: list[IdCommand] = []
        for test in tests:
            package, _, pattern = go_test_args(test)
            name = pattern[1:-1] if pattern.startswith("^") and pattern.endswith("$") else None
            if name is None or "/" in pattern or "$" in name or package == "./...":
                out.append(self._go(test))
            else:
                by_package.setdefault(package, []).append(name)
        for package, names in by_package.items():
            if len(names) == 1:
                out.append(self._go_pattern(package, f"^{names[0]}$"))
            else:
                out.append(self._go_pattern(package, f"^({'|'.join(names)})$"))
        return out

    def _go_pattern(self, package: str, pattern: str) -> IdCommand:
        assert self.go_flags is not None
        words = ["go", "test", "-json", *self.go_flags]
        return IdCommand(
            script=shlex.join(words) + ' -run "$1" "$2"',
            args=(pattern, package),
            shown=shlex.join([*words, "-run", pattern, package]),
        )

    def _go_as_written(self, test: str) -> IdCommand:
        """A Go ``test_one`` that is not plain: as written, ``{test}`` the test's pattern (of its
        own name; an id read from text has no package)."""
        assert self.template is not None
        if go_package(test):  # a package that did not build: its tests
            return with_ids(self.template, ["^"])
        try:
            name = split_go_id(test)[1]
        except ValueError:
            name = test
        return with_ids(self.template, [run_pattern(name)])


def of(test: str | None, test_one: str | None, parsed: Invocation | None = None) -> Focus | None:
    """How one test runs on its own: ``test_one``, else one derived from ``test`` (``parsed``:
    pytest's parse of it, from the record of its run); None when there is neither (why:
    :func:`why_not`). A plain pytest ``test`` with options and no ``parsed`` gives a Focus that
    is not ``ready``."""
    if test_one:
        if _GO_TEST_ANYWHERE.search(test_one) and _GO_RUN_TEST.search(test_one):
            return Focus(template=test_one, go_flags=_go_one_flags(test_one), go_run=True)
        return Focus(template=test_one)
    if not test:
        return None
    flags = _go_flags(test)
    if flags is not None:
        return Focus(go_flags=tuple(f for f in flags if f != "-json"))
    split = _pytest_words(test)
    if split is not None:
        return _pytest_one(*split, parsed)
    template = _unittest_one(test)
    return Focus(template=template, from_test=True) if template else None


_PYTHON = re.compile(r"(?:\S*/)?python[\d.]*")


def plain_pytest(command: str) -> bool:
    """Whether ``command`` is a plain ``pytest ...`` or ``python -m pytest ...``: one that loads
    eyeful's probe whenever pytest gets as far as its plugins from the environment."""
    return _pytest_words(command) is not None


def _pytest_words(test: str) -> tuple[list[str], list[str]] | None:
    """A plain ``pytest ...`` or ``python -m pytest ...`` (behind ``VAR=value`` or ``env
    VAR=value``): the words before pytest's own, and pytest's; None for anything else."""
    if _SHELL.search(test.replace("'", "").replace('"', "")) or not results.is_pytest_command(test):
        return None
    words = shlex.split(test)
    env = _env_prefix(words)
    words = words[len(env) :]
    if not words or (env and not any(_ASSIGNMENT.fullmatch(word) for word in env)):
        return None  # nothing after it, or a bare `env` (which sets nothing): as written
    if words[:1] == ["pytest"] or words[0].endswith("/pytest"):
        start = 1
    elif _PYTHON.fullmatch(words[0]) and words[1:3] == ["-m", "pytest"]:
        start = 3
    else:
        return None  # behind uv run, tox: run as written, with test_one configured
    return env + words[:start], words[start:]


def _pytest_one(head: list[str], args: list[str], parsed: Invocation | None) -> Focus | None:
    """The pytest command with the ids in place of the words pytest took as paths, as its parse
    of them (``parsed``) says; every word is a path where none is an option (or an ``@file``).
    The ids go where the first path was, with none first: never after an option that takes a
    value when one follows (``--cov``), which the ids would be."""
    before, after = head, []
    if parsed is not None:
        if parsed.args != args or any(
            not 0 <= at < len(args) or args[at].startswith("-") for at in parsed.paths
        ):
            return None  # not this command's parse, or not pytest's (an option is no path)
        first = min(parsed.paths, default=0)
        kept = [word for at, word in enumerate(args) if at not in parsed.paths]
        before, after = head + kept[:first], kept[first:]
    elif any(word.startswith(("-", "@")) for word in args):
        return Focus(from_test=True, at_first_run=True)
    rest = f" {shlex.join(after)}" if after else ""
    return Focus(template=f"{shlex.join(before)} {{test}}{rest}", from_test=True)


def why_not(test: str | None, test_one: str | None, parsed: Invocation | None = None) -> str | None:
    """Why no test can run on its own, as a clause about the test command (for the
    confirmation and the report); None when one can, or will once pytest's parse is known."""
    if test_one:
        return None
    if not test:
        return "no test command is configured"
    if of(test, None, parsed) is not None:
        return None
    if _pytest_words(test) is not None:
        return (
            "the pytest the test command started was given other words than the command's own, "
            "or the record of its parse took an option for a path"
        )
    if _SHELL.search(test.replace("'", "").replace('"', "")):
        return (
            "the test command is a shell command line (`&&`, `;`, `|`, `$`...), not one plain "
            "pytest, python -m unittest or go test command"
        )
    if _GO_TEST.match(test):
        return (
            "the test command's `go test` has a flag whose value is a separate word (write it "
            "-name=value) or a -run of its own"
        )
    if _UNITTEST.match(test):
        return (
            "the test command's `python -m unittest` names tests relative to its start directory "
            "(-s without -t)"
        )
    return (
        "the test command is not a plain pytest, python -m pytest, python -m unittest or go test "
        "command (a wrapper such as make, tox or uv run)"
    )


class Ids(Protocol):
    """A run's record of test ids (runs.Run): where they start, and what names them."""

    rootdir: str | None
    collected: list[str] | None
    tests: dict[str, Any] | None
    failures: dict[str, Any] | None
    skips: dict[str, str] | None
    kinds: dict[str, str] | None
    ran: dict[str, Any] | None


def as_asked(run: Ids, asked: Sequence[str]) -> None:
    """A run of ``asked`` with each id as asked: `python -m unittest tests.test_b` names the
    module it could not import by its last name (``test_b``, unittest's ``_FailedTest``), where
    discovery, the suite's run, names it ``tests.test_b``."""
    outcomes = run.tests or {}
    for test in asked:
        if test not in outcomes and bare_name(test):
            # A Go name read from text (no package): the record names it with its package.
            found = [t for t in outcomes if t.endswith("." + test)]
            if len(found) == 1:
                _rename(run, found[0], test)
            continue
        last = test.rpartition(".")[2]
        if test in outcomes or last == test or "/" in test or "::" in test:
            continue
        if outcomes.get(last) != "error":
            continue
        if _no_such_attribute(run, last):
            # The module imported, and has no such class or method here (a test the code's
            # data makes, named otherwise on this tree): no outcome of the asked test at all.
            _forget(run, last)
            continue
        _rename(run, last, test)


def _no_such_attribute(run: Ids, last: str) -> bool:
    """Whether the loader's error for ``last`` says the imported module or class has no such
    attribute (``AttributeError: type object 'TestOps' has no attribute 'test_minus'``)."""
    failure = (run.failures or {}).get(last)
    said = f"{getattr(failure, 'message', '')}\n{getattr(failure, 'text', '')}"
    return f"has no attribute '{last}'" in said and "AttributeError" in said


def _forget(run: Ids, old: str) -> None:
    """``run`` without its id ``old``: it names no outcome of it."""
    run.collected = None if run.collected is None else [t for t in run.collected if t != old]
    for name in ("tests", "failures", "skips", "kinds", "ran"):
        found = getattr(run, name)
        if found is not None and old in found:
            setattr(run, name, {t: v for t, v in found.items() if t != old})


def _rename(run: Ids, old: str, new: str) -> None:
    """``run``'s id ``old`` as ``new``, everywhere it names it."""
    run.collected = None if run.collected is None else [
        new if t == old else t for t in run.collected
    ]  # fmt: skip
    for name in ("tests", "failures", "skips", "kinds", "ran"):
        found = getattr(run, name)
        if found is not None and old in found:
            setattr(run, name, {new if t == old else t: v for t, v in found.items()})


class Alone:
    """How tests run on their own in one review: ``test_one``, or one derived from ``test``,
    with pytest's parse of it once the record of a run of it brought one (:meth:`learn`)."""

    def __init__(self, test: str | None, test_one: str | None) -> None:
        self.test, self.test_one = test, test_one
        self.parsed: Invocation | None = None
        self._unparsed: str | None = None
        self.rootdir = ""
        """pytest's rootdir as a repository path (``sub`` for ``sub/pytest.ini``), once a full
        run of ``test`` said it: where the ids of its records start."""
        self._rootdir_known = False

    def from_root(
        self, tests: list[str], in_tree: Callable[[str], bool], written: Collection[str] = ()
    ) -> list[str]:
        """pytest ids as a ``test_one`` derived from ``test`` (started at the worktree's root)
        takes them: a record's id is relative to pytest's rootdir, which may be below the root,
        so it is taken from there wherever the tree has its file there (a file of the same path
        from the root is another test, outside the suite). Any other (a finding's new test, a
        repository path, a file of ``written``) stays as it is."""
        if not self.rootdir:
            return list(tests)
        given = []
        for test in tests:
            rebased = f"{self.rootdir}/{test}"
            own = id_path(test) not in written and in_tree(id_path(rebased))
            given.append(rebased if own else test)
        return given

    def learn(self, parsed: Invocation | None, why_none: str, rootdir: str | None) -> None:
        """A full run of ``test``: its parse and its rootdir (a repository path; the first run
        that said each counts), or why it brought no parse. Only ``test``'s runs teach: the
        rootdir of a run of one test (a finding's, with files of its own) is its own."""
        if not self._rootdir_known and rootdir is not None:
            self.rootdir, self._rootdir_known = rootdir, True
        if self.parsed is None and parsed is not None:
            self.parsed = parsed
        elif self.parsed is None and self._unparsed is None:
            self._unparsed = why_none

    def reframed(self, rootdir: str | None, test: str) -> str:
        """An id of a run whose rootdir was ``rootdir`` (a repository path) as the test
        command's records name it, from their rootdir (a change that adds `sub/pytest.ini`
        moves it for the change's runs only); as it is where either is unknown, or outside."""
        if rootdir is None or not self._rootdir_known or rootdir == self.rootdir:
            return test
        path, sep, rest = test.partition("::")
        full = posixpath.normpath(posixpath.join(rootdir, path))
        if self.rootdir:
            if not full.startswith(f"{self.rootdir}/"):
                return test
            full = full[len(self.rootdir) + 1 :]
        return f"{full}{sep}{rest}"

    def reframe(self, run: Ids) -> None:
        """A run of one test's ids as the test command's records name them (:meth:`reframed`)."""
        id_of = functools.partial(self.reframed, run.rootdir)
        run.collected = None if run.collected is None else [id_of(t) for t in run.collected]
        for name in ("tests", "failures", "skips", "kinds", "ran"):
            found = getattr(run, name)
            if found is not None:
                setattr(run, name, {id_of(test): value for test, value in found.items()})

    def how(self) -> Focus | None:
        """How one test runs on its own now; None when none can (yet)."""
        how = of(self.test, self.test_one, self.parsed)
        return how if how is not None and how.ready else None

    def why_none(self) -> str:
        """One line for the report: why no test runs on its own, and what to do."""
        why = why_not(self.test, self.test_one, self.parsed)
        if why is None:
            why = "pytest's parse of the test command was not recorded" + (
                f" ({self._unparsed})" if self._unparsed else " (no run of it recorded one yet)"
            )
        return f"no test_one, as {why}; set commands.test_one"


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)


def rootdir_in(worktree: Path, rootdir: str | None) -> str | None:
    """pytest's rootdir (absolute, from a run's record in ``worktree``) as a repository path;
    None where it is not in the worktree, or unknown."""
    if rootdir is None:
        return None
    try:
        rel = Path(rootdir).relative_to(worktree).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else rel


def _env_prefix(words: list[str]) -> list[str]:
    """The ``VAR=value`` words before a command, and ``env VAR=value...`` (``env`` with no
    option of its own): kept as they are in a derived ``test_one`` (one that sets nothing
    derives none)."""
    at = 0
    while at < len(words) and _ASSIGNMENT.fullmatch(words[at]):
        at += 1
    if at < len(words) and words[at] in ("env", "/usr/bin/env"):
        at += 1
        while at < len(words) and _ASSIGNMENT.fullmatch(words[at]):
            at += 1
    return words[:at]


def _unittest_one(test: str) -> str | None:
    """``<python> -m unittest {test}`` for a plain ``python -m unittest ...``."""
    match = _UNITTEST.match(test)
    if match is None or _SHELL.search(test):
        return None
    words = test.split()
    if {"-s", "--start-directory"} & set(words) and not {"-t", "--top-level-directory"} & set(
        words
    ):
        return None  # its ids are relative to the start directory: not importable from here
    return f"{match[1]} -m unittest {{test}}"
