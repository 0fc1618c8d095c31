"""What each verdict claims, and the facts it needs: the table, as data and small predicates.

Every outcome eyeful gives is a claim about the change, and it stands only when every fact it
needs was observed on live runs of this review (a cached run only says where to look). A missing
fact never upgrades a verdict; it degrades it to the next weaker claim:

- clean (exit 0) needs: the change's run reached its end and ran every test it collected (the
  ones it did not reach are run by id; a go or unittest run, which names only what it started,
  did not stop at a failure or lose its test binary); each passed, xfailed, or was skipped for
  a reason that held on the base; and the outcomes are the runner's (the change edits no file
  of the tests that can make a failure pass or skip: both sides run the change's tests).
  Missing: could not verify (``incomplete``: what did not run and why; a test the change made
  skip: a question, and could not verify).
- regression (blocks) needs: live runs on both sides in one context, every base run passed and
  every change run failed; the base had the test (its id, or its name and body in another file:
  eyeful/moved.py); and nothing says the failure is about how the code is written rather than
  what it does (``representation``: the change edits only the code's comments, docstrings and
  layout, or none of it; the test ran none of the change's lines and read a changed file as
  text, took its size, looked at a code object). Missing: flaky or unconfirmed (a question),
  new test, undetermined (exit 3).
- pre-existing needs: the same test, by id, failed live on the base with the same failure (its
  cause: type and message, numbers and addresses aside). Another failure there: a question
  (``fails_otherwise``), and could not verify. A base run that never reached it is no
  evidence: undetermined. The suite as a whole (no run named a test: a command that stops
  before its tests, a runner eyeful cannot read) is no test by id: failing on both sides, it
  may hide what the change broke, so it is undetermined, never pre-existing.
- newly skipped (a question, could not verify) needs: passed live on the base, skipped on the
  change. A skip because the repository's own module no longer imports is a failure
  (eyeful/evidence.py), judged as one.
- could not verify (exit 3): the weakest claim, always available, always saying why.

The flow modules (regressions, confirmation, review) gather the facts; the outcome is derived
here. A reader checks a verdict against the table by reading this module.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from eyeful.completeness import UNITTEST_UNFINISHED
from eyeful.errors import EXIT_BLOCKING, EXIT_OK, EXIT_UNVERIFIED
from eyeful.model import Model

FailureKind = Literal[
    "regression",
    "pre_existing",
    "new_test",
    "undetermined",
    "flaky",
    "order_dependent",
    "unconfirmed",
    "xpass_strict",
    "newly_skipped",
    "fails_otherwise",
]
QUESTION_KINDS: tuple[FailureKind, ...] = (
    "flaky",
    "order_dependent",
    "unconfirmed",
    "xpass_strict",
    "newly_skipped",
    "fails_otherwise",
)
"""Kinds the report asks about: seen to regress once, not shown to every time; or a test that
passed on the base and does not run on the change."""
UNVERIFIED_KINDS: tuple[FailureKind, ...] = (
    "unconfirmed",
    "undetermined",
    "newly_skipped",
    "fails_otherwise",
)
"""Kinds that lack a fact their nearest claim needs, so the review could not verify the change
(exit 3; a pre-push hook stops, where a question alone would go by unseen): a regression not
confirmed alone, a base that never named the test, a test that passed on the base and does not
run on the change (what it checks went unchecked), a failure on both sides by different causes
(pre-existing needs the same one)."""
BLOCKING_KINDS: tuple[FailureKind, ...] = ("regression",)
SUITE = "the test suite"
"""The test a run that names none is judged as: the whole suite."""

Outcome = Literal["nothing_to_review", "clean", "blocking", "unverified"]


class Incomplete(Model):
    """Tests a run did not run, and why: no claim about them can stand (exit 3)."""

    side: Literal["change", "base"]
    tests: int = Field(description="how many tests did not run (0: none was reached, or unknown)")
    ids: list[str] = Field(default_factory=list, description="the first of them, by id")
    why: str = Field(description="why they did not run: the runner's own words where it said")
    reached_no_test: bool = Field(
        default=False, description="the run reached no test at all (the runner could not start)"
    )

    def line(self) -> str:
        """The checklist line."""
        if self.reached_no_test:
            return f"the tests could not run on the {self.side}: {self.why}"
        shown = ", ".join(f"`{t}`" for t in self.ids[:5])
        more = f" and {self.tests - 5} more" if self.tests > 5 else ""
        which = f" ({shown}{more})" if shown else ""
        count = {0: "some tests (how many is not known)", 1: "1 test"}.get(
            self.tests, f"{self.tests} tests"
        )
        return f"{count} did not run on the {self.side}{which}: {self.why}"


# The failing-test claims ------------------------------------------------------------------------

Seen = Literal["passed", "failed", "absent", "unknown"]
"""What one run says of one test (eyeful/regressions.py ``in_run``): only a named outcome."""
Context = Literal["alone", "file", "suite"]
"""Where a test's live runs ran: on its own, with the rest of its file, in the whole suite."""


@dataclass
class Evidence:
    """What is known of one failing test: the base's suite run and the live runs on its own."""

    test: str
    base_suite: Seen = "unknown"
    """What a suite run on the base said; with live runs (``base_alone``) it is only a hint."""
    base_alone: list[Seen] | None = None
    """The live runs on the base in ``context``; None: not run live (no `test_one`)."""
    change_alone: list[Seen] | None = None
    """The live runs on the change in ``context``."""
    context: Context = "alone"
    base_from: Context | None = None
    """Where ``base_alone`` was run when not in ``context``: the suite ran again on the change
    only, where the failure did not come back (flaky whatever the base's suite says)."""
    history: list[str] = field(default_factory=list)
    """What the narrower contexts showed before this one (a confirmation line each)."""
    inconclusive: list[Context] = field(default_factory=list)
    """Wider contexts whose runs told nothing of the test (stopped before it, never named it):
    the evidence of ``context`` stands."""
    change_cached: bool = False
    """The change's suite result came from the cache: passing alone then says it is stale or
    flaky, not that it depends on order."""
    change_causes: list[str] = field(default_factory=list)
    """The causes (eyeful.failures ``cause``) of its live failures on the change, where recorded."""
    base_causes: list[str] = field(default_factory=list)
    """The causes of its live failures on the base: pre-existing needs the same failure."""
    ids_moved: bool = False
    """A parametrized id of a test file the change left as the base's, whose function the base
    defines: the base does not name it because the code renamed its parameters (an enum's
    ``__str__``, a list's values), so the base's silence is no "new test"."""
    old_version_regresses: bool = False
    """The change edited the test's side (its file, a conftest.py, a helper); failing on both
    sides with the change's version, the base's version of those files passed on the base's code
    and failed on the change's: the change's code fails what the test asked before (a stricter
    assertion put first, or a fixture's value moved with the code, masks it)."""
    causes_differ: bool = False
    """The change edited the test's file, and it failed on both sides (the base side: the
    base's code with the change's tests, eyeful/testside.py) by different causes: the change's
    code fails the test otherwise than the base's code does, or the change's test asks for what
    the base's code lacks (a helper the change adds): where ``old_version`` failed too, the
    test failed before the change."""
    old_version: Seen | None = None
    """What the base's own version of the test side said of the test on the base's code (None:
    not asked): before the change, did it pass?"""
    old_version_causes: list[str] = field(default_factory=list)
    """The causes of that run's failure."""
    representation: str | None = None
    """Why its failure may be about how the changed code is written, not what it does (eyeful/
    confirmation.py says): a regression then is a question (``unconfirmed``), never a block."""

    @property
    def change_failed(self) -> bool:
        """Every live run on the change failed (and there was one)."""
        return bool(self.change_alone) and all(s == "failed" for s in self.change_alone or [])


def decide(ev: Evidence) -> tuple[FailureKind, str]:
    """The kind of one failing test, and what the base said (``on_base``), from its evidence.

    A regression needs live runs on both sides in one context: every base run passed, every
    change run failed; and no sign that the failure is about the code's representation.
    Pre-existing needs every live base run to have failed. A base that did not name the test
    (stopped, never reached it) is no evidence: undetermined.
    """
    kind, on_base = _decide(ev)
    if kind == "regression" and ev.representation is not None:
        return "unconfirmed", on_base
    if kind == "pre_existing" and ev.test == SUITE:
        return "undetermined", on_base  # a suite failing on both sides may hide a new failure
    return kind, on_base


def _decide(ev: Evidence) -> tuple[FailureKind, str]:
    if ev.base_alone is None:
        kinds: dict[str, FailureKind] = {
            "failed": "pre_existing", "absent": "new_test",
            "passed": "unconfirmed", "unknown": "undetermined",
        }  # fmt: skip
        if ev.base_suite == "absent" and ev.ids_moved:
            return "undetermined", "unknown"
        return kinds[ev.base_suite], ev.base_suite
    if ev.base_alone and all(s == "absent" for s in ev.base_alone) and ev.base_suite != "passed":
        if ev.ids_moved or (
            ev.change_alone and all(s in ("absent", "unknown") for s in ev.change_alone)
        ):
            # Not found on the change either: the id does not reach the test (a rootdir below
            # the repository, a command that changes directory); or the code renamed it: the
            # base's silence says nothing of it.
            return "undetermined", "unknown"
        return "new_test", "absent"
    base = ev.base_alone  # live runs only: a cached run never decides
    change_failed = ev.change_failed
    if not base or any(s in ("unknown", "absent") for s in base):
        # The change's test told nothing on the base's code (its module does not import there:
        # it imports a helper the change adds): the test's own version tells what it did before.
        if change_failed and base and "unknown" in base and (said := _own_version(ev)):
            return said
        return "undetermined", "unknown"
    if all(s == "failed" for s in base):
        if change_failed and ev.old_version_regresses:
            return "regression", "failed"  # the change's code fails what the test asked before
        if ev.causes_differ and ev.old_version == "failed" and (said := _own_version(ev)):
            # The base's own version of the test failed on the base's code too: it failed
            # before the change (the change's test asks what the base lacks, a new helper).
            return said
        if (
            change_failed
            and ev.causes_differ
            and ev.old_version == "passed"
            and _one_place(ev.change_causes, ev.base_causes)
        ):
            # The base's own version of the test passed on the base's code and did not fail on
            # the change's: what the test asked before still holds. The change's version fails
            # on both codes at one check (a new assertion), with other values: not shown to be
            # the change's doing. (One that fails on the base at a later check passed there the
            # one it fails on the change: that blocks, below.)
            return "fails_otherwise", "failed"
        if change_failed and ev.causes_differ:
            return "regression", "failed"  # an edited test the change's code fails otherwise
        if _otherwise(ev.change_causes, ev.base_causes):
            return "fails_otherwise", "failed"  # pre-existing needs the same failure
        return "pre_existing", "failed"
    if not all(s == "passed" for s in base):
        return "flaky", "mixed"
    change = ev.change_alone or []
    if not change or any(s in ("unknown", "absent") for s in change):
        return "undetermined", "passed"
    if all(s == "failed" for s in change):
        return "regression", "passed"
    # Passing on the change in the widest context it was run in (the suite's failure did not
    # come back), or mixed: flaky.
    return "flaky", "passed"


def _own_version(ev: Evidence) -> tuple[FailureKind, str] | None:
    """An edited test failing on the change, by its own (the base's) version: passing on the
    base's code and failing on the change's, a regression; failing on the base's code, it failed
    before the change (by the change's cause: pre-existing); else None, it tells nothing."""
    if ev.old_version_regresses:
        return "regression", "passed"
    if ev.old_version == "failed":
        if _otherwise(ev.change_causes, ev.old_version_causes):
            return "fails_otherwise", "failed"
        return "pre_existing", "failed"
    return None


_PLACE = re.compile(r" at (\S+): ")


def _one_place(change: list[str], base: list[str]) -> bool:
    """Whether every failure on both sides was raised at one place (a file and line)."""
    places = {
        found[1] if (found := _PLACE.search(c)) and "?" not in found[1] else None
        for c in [*change, *base]
    }
    return bool(change) and bool(base) and len(places) == 1 and None not in places


def _what(cause: str) -> str:
    """A failure's cause without where it was raised: a line the change moved is one cause."""
    return re.sub(r" at \S+: ", ": ", cause, count=1)


def _otherwise(change: list[str], base: list[str]) -> bool:
    """Whether the test failed on the base by another cause than on the change, every time
    (both sides' causes recorded: a failure read from text tells nothing apart)."""
    if not change or not base:
        return False
    return not {_what(c) for c in change} & {_what(b) for b in base}


def skip_kind(on_base: str) -> FailureKind | None:
    """A test skipped on the change, by what live runs on the base said of it: passed there is a
    question (the change made it skip); skipped or absent there, its skip held (None)."""
    return "newly_skipped" if on_base == "passed" else None


# The run-level claims ---------------------------------------------------------------------------


def unrun(collected: list[str] | None, outcomes: dict[str, str] | None) -> list[str]:
    """The tests a run collected and gave no outcome: it stopped before them."""
    if collected is None:
        return []
    done = outcomes or {}
    return [t for t in collected if t not in done]


_FAILFAST = {
    "go": (re.compile(r"--?failfast(?:=(?:true|1|t|T|TRUE|True))?"), ("go", "test")),
    "unittest": (re.compile(r"--failfast|-[bcfkv]*f[bcfkv]*"), ("-m", "unittest")),
}


def stops_at_first_failure(command: str, runner: str, goflags: str = "") -> str | None:
    """Why a go or unittest run with a failure may not have started every test: its command
    stops at the first failure (``go test -failfast``, ``python -m unittest -f`` or ``-vf``),
    a word after the runner's own (``go test``, ``-m unittest``); for go, in the GOFLAGS the
    command gets (``goflags``: the environment's, or ``go env -w``'s) too."""
    if runner not in _FAILFAST:
        return None
    pattern, (first, second) = _FAILFAST[runner]
    words = _words(command)
    starts = _after(words, first, second)
    if runner == "go":  # go's flags in the command's environment too: `GOFLAGS=-failfast`
        flags = [w.split() for w in words[: starts[0] if starts else 0] if w.startswith("GOFLAGS=")]
        words += [f.removeprefix("GOFLAGS=") for group in flags for f in group]
        words += goflags.split()
    if not starts or not any(pattern.fullmatch(word) for word in words[starts[0] :]):
        return None
    flag = "-failfast" if runner == "go" else "-f"
    return f"the test command stops at its first failure ({flag}): the tests after it did not run"


def _words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _after(words: list[str], first: str, second: str) -> list[int]:
    """Where the words after each ``first second`` (``-m unittest``) start."""
    return [i + 2 for i in range(len(words) - 1) if words[i : i + 2] == [first, second]]


def unittest_unfinished(command: str, ended: bool) -> str | None:
    """Why a passing run of ``python -m unittest`` says nothing: its output never ``ended``
    with unittest's summary."""
    if ended or not _after(_words(command), "-m", "unittest"):
        return None
    return UNITTEST_UNFINISHED


def stop_cause(command: str, exit_code: int | None, status: str, tail: str) -> str:
    """Why a run stopped before tests it collected, as far as its command and output say."""
    words = command.split()
    if "-x" in words or "--exitfirst" in words or any(w.startswith("--maxfail") for w in words):
        return "the test command stops at its first failures (-x or --maxfail)"
    if "_pytest.outcomes.Exit" in tail:
        return "a test ended the session (pytest.exit)"
    if exit_code == 0 and status != "ERROR":
        return "the run ended early with exit status 0 (a test's os._exit or sys.exit, say)"
    if status == "ERROR":
        return "the run did not finish (a crash or a timeout)"
    return "the run stopped early"


# The verdict ------------------------------------------------------------------------------------


def outcome(*, nothing_to_review: bool, blocking: int, unverified: bool) -> tuple[Outcome, int]:
    """The review's outcome and exit code: blocking needs a blocking claim that stood; clean
    needs every fact of its row; anything short of both is could not verify."""
    if nothing_to_review:
        return "nothing_to_review", EXIT_OK
    if blocking:
        return "blocking", EXIT_BLOCKING
    if unverified:
        return "unverified", EXIT_UNVERIFIED
    return "clean", EXIT_OK
