"""The confirmed commands as eyeful runs them: for the runner's record, and one test at a time.

What eyeful adds to a confirmed command changes what the runner *says*, never what it runs:

- a plain ``python -m unittest ...`` gets ``-v`` (its lines name each test as unittest takes it
  back: eyeful/unittest_records.py);
- a plain ``go test ...`` gets ``-json`` (Go's record: eyeful/go_records.py).

One test on its own (:func:`of`) is ``test_one`` where it is configured. Where it is not and
``test`` is a plain ``go test``, it is derived: ``go test -json FLAGS -run '^TestX$/^sub$' PKG``
for each package-qualified id (Go's own names; a bare ``-run TestX ./...`` would also run a test of
that name in every other package). A derived command is a function of the confirmed ``test``
command alone, so confirming ``test`` confirms it; the confirmation shows it.

A configured Go ``test_one`` (``go test ... -run {test} ...``) gets in ``{test}`` what ``-run``
matches: the test's own name anchored per level (``^TestX$/^sub$``), never the package-qualified
id eyeful shows and stores (which matches nothing). Where it is a plain ``go test [flags] -run
{test} [packages]`` it runs like the derived one, with its flags, in the test's package (with
``-json``: Go's record); any other is run as written, the pattern in ``{test}``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from eyeful import results
from eyeful.confine import Refused
from eyeful.go_records import check_go_id, go_test_args, run_pattern, split_go_id
from eyeful.testids import IdCommand, check_test_id, with_ids

__all__ = ["Focus", "for_record", "of", "passable"]

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

    @property
    def derived(self) -> bool:
        return (self.go_flags is not None and self.template is None) or self.from_test

    @property
    def shown(self) -> str:
        """The command as the confirmation and the README show it."""
        if self.template is None:
            assert self.go_flags is not None
            return shlex.join(["go", "test", "-json", *self.go_flags, "-run", "^NAME$", "PACKAGE"])
        return self.template

    def commands(self, tests: Sequence[str], *, each: bool = False) -> list[IdCommand]:
        """The commands for ``tests``: one for them all where the runner takes several ids
        (pytest) unless ``each``, else one per id. The ids travel as arguments, never as shell
        text; raises :class:`Refused` for an id that is not safe data."""
        try:
            go = self.go_flags is not None or self.go_run
            for test in tests:
                (check_go_id if go else check_test_id)(test, "the test id")
            if self.go_flags is not None:
                return [self._go(test) for test in tests]
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
        assert self.go_flags is not None
        package, run, pattern = go_test_args(test)
        words = ["go", "test", "-json", *self.go_flags]
        return IdCommand(
            script=shlex.join(words) + ' -run "$1" "$2"',
            args=(pattern, package),
            shown=shlex.join([*words, run, pattern, package]),
        )

    def _go_as_written(self, test: str) -> IdCommand:
        """A Go ``test_one`` that is not plain: as written, ``{test}`` the test's pattern (of its
        own name; an id read from text has no package)."""
        assert self.template is not None
        try:
            name = split_go_id(test)[1]
        except ValueError:
            name = test
        return with_ids(self.template, [run_pattern(name)])


def rebased(test: str, rootdir: str) -> str:
    """A pytest id, relative to its rootdir (``rootdir``, a repository path), as a path from
    the repository's root."""
    return f"{rootdir}/{test}" if rootdir else test


def of(test: str | None, test_one: str | None) -> Focus | None:
    """How one test runs on its own: ``test_one``, else one derived from ``test``; None when
    there is neither."""
    if test_one:
        if _GO_TEST_ANYWHERE.search(test_one) and _GO_RUN_TEST.search(test_one):
            return Focus(template=test_one, go_flags=_go_one_flags(test_one), go_run=True)
        return Focus(template=test_one)
    if not test:
        return None
    flags = _go_flags(test)
    if flags is not None:
        return Focus(go_flags=tuple(f for f in flags if f != "-json"))
    template = _pytest_one(test) or _unittest_one(test)
    return Focus(template=template, from_test=True) if template else None


# pytest's options that take the next word as their value (core, xdist, cov, timeout, rerun);
# an option of the form --name=value, a short one with its value attached (-kexpr, -rA) and the
# flags below take none. Any other option: its arity is not known, so nothing is derived.
_PYTEST_VALUED = frozenset(
    [
        "-k",
        "-m",
        "-p",
        "-c",
        "-o",
        "-r",
        "-W",
        "-n",
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "--rootdir",
        "--confcutdir",
        "--basetemp",
        "--junitxml",
        "--junit-xml",
        "--junit-prefix",
        "--log-level",
        "--log-file",
        "--log-format",
        "--log-date-format",
        "--log-cli-level",
        "--log-cli-format",
        "--log-file-level",
        "--tb",
        "--maxfail",
        "--durations",
        "--durations-min",
        "--import-mode",
        "--capture",
        "--show-capture",
        "--override-ini",
        "--color",
        "--code-highlight",
        "--assert",
        "--doctest-glob",
        "--doctest-report",
        "--numprocesses",
        "--dist",
        "--maxprocesses",
        "--cov-report",
        "--cov-config",
        "--timeout",
        "--timeout-method",
        "--reruns",
        "--config-file",
        "--pythonwarnings",
    ]
)
_PYTEST_FLAGS = frozenset(
    [
        "--strict-markers",
        "--strict-config",
        "--strict",
        "--lf",
        "--last-failed",
        "--ff",
        "--failed-first",
        "--nf",
        "--new-first",
        "--sw",
        "--stepwise",
        "--stepwise-skip",
        "--showlocals",
        "--no-header",
        "--no-summary",
        "--disable-warnings",
        "--disable-pytest-warnings",
        "--doctest-modules",
        "--continue-on-collection-errors",
        "--runxfail",
        "--full-trace",
        "--exitfirst",
        "--quiet",
        "--verbose",
        "--pyargs",
        "--cache-clear",
        "--setup-show",
        "--no-showlocals",
        "--doctest-continue-on-failure",
        "--capture=no",
        "--tb=short",
    ]
)
_SHORT_FLAGS = re.compile(r"-[qvsxlO]+")
_PYTHON = re.compile(r"(?:\S*/)?python[\d.]*")


def _pytest_one(test: str) -> str | None:
    """``test`` with the paths it names left out and the ids in their place: a plain
    ``pytest ...`` or ``python -m pytest ...`` whose every option is one eyeful knows."""
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
    kept = env + words[:start]
    rest = iter(words[start:])
    for word in rest:
        if word == "--":
            return None
        if not word.startswith("-"):
            continue  # a path the suite names: the ids take its place
        kept.append(word)
        if word in _PYTEST_VALUED:
            value = next(rest, None)
            if value is None:
                return None
            kept.append(value)
        elif not (
            word in _PYTEST_FLAGS
            or _SHORT_FLAGS.fullmatch(word)
            or (word.startswith("--") and "=" in word)
            or (not word.startswith("--") and len(word) > 2 and word[:2] in _PYTEST_VALUED)
        ):
            return None
    return shlex.join(kept) + " {test}"


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)


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
