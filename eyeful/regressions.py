"""Tests the change breaks: failing on the change, passing on the base, confirmed live.

Only positive evidence counts. A test is `regression` (blocking, a `derived` oracle: the
repository's own test) only when every one of its live runs in one context (alone, in its file,
in the suite: eyeful/confirmation.py) failed on the change and passed on the base, order
dependence or not. Mixed live runs, or a failure that does not come back live: `flaky`; passing
on the base once with no way to run it alone: `unconfirmed` (questions, never blocking). A test
failing on both sides is pre-existing, one the base does not have is new; nothing the runs do
not name (a run that stopped early, output listing failures only) is read as a pass. The kinds
and the rule that picks one from the evidence are the claims' (eyeful/claims.py); this module
gathers the evidence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Literal

import pygit2
from pydantic import Field

from eyeful import moved
from eyeful.claims import BLOCKING_KINDS, FailureKind
from eyeful.claims import QUESTION_KINDS as QUESTION_KINDS  # the claims' own: eyeful/claims.py
from eyeful.claims import SUITE as SUITE
from eyeful.claims import UNVERIFIED_KINDS as UNVERIFIED_KINDS
from eyeful.claims import Context as Context
from eyeful.claims import Evidence as Evidence
from eyeful.claims import Seen as Seen
from eyeful.claims import decide as decide
from eyeful.classtests import class_defines
from eyeful.evidence import EXCERPT_LINES, module_seen
from eyeful.failures import Failure, report_cause
from eyeful.go_records import go_package, split_go_id
from eyeful.model import Model
from eyeful.runs import Run
from eyeful.snapshot import REGULAR_FILE_MODES, Snapshot, blob_at, blobs, tree_at
from eyeful.testids import check_test_id, id_path

_FAILURE_LINES = 40  # of a test's own failure: its end, where the error and its frame are


class TestFailure(Model):
    """A test failing on the change, and what the base says about it."""

    test: str
    kind: FailureKind
    blocking: bool
    oracle: Literal["derived"] = "derived"
    on_change: str
    on_base: str
    excerpt: str
    rerun: str | None = None
    """The command that reruns this test locally (test_one, the id shell-quoted)."""
    line: int | None = None
    """The line of the test's definition in its file on the change, when found."""
    message: str = ""
    """One line: what the test failed with (exception and message), for grouping."""
    confirmation: str | None = None
    """The live runs of the test on its own: outcomes on the change and on the base."""
    raised_at: str | None = None
    """Where its failure was raised (``path:line``), when the runner said."""
    cause: str | None = None
    """What failures of one cause share (eyeful.failures.report_cause: the exception type and
    the change's lines the test ran, else the type and message with numbers and addresses set
    aside); the markdown shows each cause once."""
    ran: dict[str, list[int]] | None = None
    """The change's lines the test ran in its first live run alone on the change, by file;
    None when not traced (no such run, not pytest, another tracer on)."""
    confirmed_in: Context | None = Field(default=None, exclude=True)
    """Where its live runs were judged: a test confirmed only in the suite (it could not run
    alone, or failed only there) is rerun by the test command."""
    representation: str | None = Field(default=None, exclude=True)
    """Why a regression seen on every live run is a question (``unconfirmed``): its failure may
    be about how the code is written, not what it does (claims.Evidence.representation)."""


# pytest's rendering of a frame's arguments: `self = <tests.test_x.TestX object at 0x7f...>` says
# nothing about the failure, and its address differs on every run.
_OBJECT_REPR = re.compile(r"\s*[A-Za-z_]\w* = <[^<>]* at 0x[0-9a-fA-F]+>")


def _kept(line: str) -> bool:
    """A line of an excerpt: not blank, not an argument that is only an object's address."""
    return bool(line.strip()) and _OBJECT_REPR.fullmatch(line) is None


def excerpt(tail: str, test: str, failure: Failure | None = None) -> str:
    """The test's own failure (JUnit text or its section of the output), never another test's.

    The whole suite (no test named) shows the last lines of the output; a named test whose own
    failure was not recorded shows only the lines of the output that name it.
    """
    if failure is not None and failure.excerpt:
        return failure.excerpt  # the failing frames from the runner's record
    if failure is not None and failure.text.strip():
        lines = [line for line in failure.text.splitlines() if _kept(line)]
        return "\n".join(lines[-_FAILURE_LINES:])
    lines = [line for line in tail.splitlines() if _kept(line)]
    if test == SUITE:
        return "\n".join(lines[-EXCERPT_LINES:])
    short = test.split("::")[-1]
    named = [line for line in lines if short in line][-3:]
    return "\n".join(named) or f"(the output has no section of its own for {test})"


def file_in_tree(repo: pygit2.Repository, tree_id: str, test: str) -> bool:
    """Whether the file a test id names is in the tree (ids that name no file: assumed so)."""
    if "::" not in test and not test.endswith(".py"):
        return True
    try:
        tree_at(repo, tree_id)[id_path(test)]
    except KeyError:
        return False
    return True


def exists_in_tree(repo: pygit2.Repository, tree_id: str, test: str) -> bool:
    """Whether the base has this test, judged from its id when the run did not list it.

    pytest ids name their file (``path::[Class::]name[params]``): the file must exist and define
    the function. unittest's dotted ids name a module (and in it a class, a function). go test
    ids (``<import path>.TestX[/sub]``) name a ``TestX`` function in some ``_test.go`` file; a
    package's own id (``<import path>``) is never taken as absent.
    """
    tree = tree_at(repo, tree_id)
    if "::" in test or test.endswith(".py"):
        path, _, rest = test.partition("::")
        try:
            entry = tree[path]
        except KeyError:
            return False
        if entry.filemode not in REGULAR_FILE_MODES:
            return True  # a symlink, say: its text is not the test's; the live runs will tell
        blob = blob_at(repo, entry.id)
        if not rest:
            return True
        # The parameters (after the first `[`) may hold anything, `::` included.
        parts = rest.split("[", 1)[0].split("::")
        text = blob.data.decode(errors="replace")
        if len(parts) > 1 and (said := class_defines(text, parts[:-1], parts[-1])) is not None:
            return said
        if _defines(text, parts[-1]):
            return True
        if len(parts) == 1 and ">>>" in text and ("." in parts[0] or _names_module(path, parts[0])):
            # A doctest's (`calc.py::calc.add`, a name no function has): its function, class or
            # module is here.
            last = parts[0].rsplit(".", 1)[-1]
            return _names_module(path, parts[0]) or (
                re.search(rf"\b(?:def|class) {re.escape(last)}\b", text) is not None
            )
        # A test its class inherits (a mixin of checks in another module): the class is here.
        return len(parts) > 1 and re.search(rf"\bclass {re.escape(parts[-2])}\b", text) is not None
    python = _python_test(repo, tree, test)
    if python is not None:
        return python
    go = [entry for path, entry in blobs(repo, tree) if path.endswith("_test.go")]
    if not go or go_package(test):
        # An id that names no file of the tree, or a Go package's own (it ran no test, or did
        # not build): no evidence that it is absent.
        return True
    try:
        name = split_go_id(test)[1]  # ``example.com/m/a.TestX/sub``: ``TestX/sub``
    except ValueError:
        name = test  # a bare name, read from text
    top = name.split("/")[0]
    needle = re.compile(rf"\bfunc {re.escape(top)}\(".encode())
    return any(needle.search(blob_at(repo, entry.id).data) for entry in go)


def _names_module(path: str, name: str) -> bool:
    """Whether ``name`` (dotted) is the module at ``path``: a module docstring's doctest id."""
    pure = PurePosixPath(path)
    own = pure.parent.name if pure.name == "__init__.py" else pure.stem
    return pure.suffix == ".py" and name.rsplit(".", 1)[-1] == own


def file_unchanged(repo: pygit2.Repository, base: str, head: str, test: str) -> bool:
    """Whether the file that holds ``test`` (a pytest id's path; the module a unittest dotted id
    names) is the same on both trees: the change did not take the test away there."""
    if "::" in test or test.endswith(".py"):
        paths = [id_path(test)]
    elif "/" in test or "." not in test:
        return False
    else:
        # The module the id names: its longest prefix that is a file (not the packages above
        # it, whose `__init__.py` the change may leave alone while it edits the module).
        parts = test.split(".")
        every = [p for p, _ in blobs(repo, tree_at(repo, head)) if p.endswith(".py")]
        paths = []
        for cut in range(len(parts), 0, -1):
            names = {f"{'/'.join(parts[:cut])}{end}" for end in (".py", "/__init__.py")}
            paths = [p for p in every if p in names or any(p.endswith("/" + n) for n in names)]
            if paths:
                break
    old, new = tree_at(repo, base), tree_at(repo, head)
    for path in paths:
        try:
            if old[path].id == new[path].id:
                return True
        except KeyError:
            continue
    return False


def _python_test(repo: pygit2.Repository, tree: pygit2.Tree, test: str) -> bool | None:
    """For unittest's dotted id (``tests.test_calc.T.test_add``, from the top directory or from
    the start directory below it): whether the module it names, found in the tree, defines the
    test (or its class); None where no module of the tree is named (a Go id, say)."""
    if "/" in test or "." not in test:
        return None
    parts = test.split(".")
    files = [(path, entry) for path, entry in blobs(repo, tree) if path.endswith(".py")]
    for cut in range(len(parts), 0, -1):
        module = "/".join(parts[:cut])
        found = [
            entry
            for path, entry in files
            for name in (f"{module}.py", f"{module}/__init__.py")
            if path == name or path.endswith(f"/{name}")
        ]
        if found and cut == len(parts):
            return True  # a module's own id (it skipped itself: unittest.SkipTest at import)
        if found:
            names = parts[cut:]
            if len(names) > 1 and len(found) == 1 and found[0].filemode in REGULAR_FILE_MODES:
                text = blob_at(repo, found[0].id).data.decode(errors="replace")
                if (said := class_defines(text, names[:-1], names[-1])) is not None:
                    return said
            # (a class's own id, `tests.test_calc.T`: a class or module fixture skipped it)
            pattern = rf"\b(?:def|class) {re.escape(names[-1])}\b"
            if len(names) > 1:
                pattern += rf"|\bclass {re.escape(names[-2])}\b"
            return any(
                entry.filemode not in REGULAR_FILE_MODES
                or re.search(pattern, blob_at(repo, entry.id).data.decode(errors="replace"))
                for entry in found
            )
    return None


def ids_moved(repo: pygit2.Repository, snap: Snapshot, test: str) -> bool:
    """Whether ``test`` is an id of a file the change left as the base's, which the change's
    code may have named otherwise (claims.Evidence.ids_moved): a parametrized id
    (``file::name[...]``) whose function the base defines, or a test the file does not define
    by its text (a method made from the code's data: ``setattr`` on a class, ``globals()``)."""
    path, sep, rest = test.partition("::")
    if not sep:
        path, name = _dotted_module(repo, tree_at(repo, snap.base.tree), test) or ("", "")
        if not path:
            return False
    else:
        name = rest.split("::")[-1]
    try:
        entry = tree_at(repo, snap.base.tree)[path]
        same = entry.id == tree_at(repo, snap.head.tree)[path].id
    except KeyError:
        return False
    if not same:
        return False
    if "[" in rest:
        return exists_in_tree(repo, snap.base.tree, test)
    return not _defines(blob_at(repo, entry.id).data.decode(errors="replace"), name)


def _defines(text: str, name: str) -> bool:
    """Whether a Python file's text holds ``def name``."""
    return re.search(rf"\bdef {re.escape(name)}\b", text) is not None


def _dotted_module(repo: pygit2.Repository, tree: pygit2.Tree, test: str) -> tuple[str, str] | None:
    """For unittest's dotted id of a method (``tests.test_ops.TestOps.test_x``): the one module
    file of the tree it names and the method's name; None for another id."""
    if "/" in test or "." not in test:
        return None
    parts = test.split(".")
    files = [path for path, _ in blobs(repo, tree) if path.endswith(".py")]
    for cut in range(len(parts) - 2, 0, -1):  # a module, a class, a method at least
        module = "/".join(parts[:cut])
        found = [p for p in files if p == f"{module}.py" or p.endswith(f"/{module}.py")]
        if len(found) == 1:
            return found[0], parts[-1]
        if found:
            return None
    return None


_IN: dict[Context, str] = {"alone": ", alone", "file": ", in its file", "suite": ", in the suite"}


def in_run(run: Run | None, test: str) -> Seen:
    """What one run says about ``test``: only a named outcome is an outcome.

    With the runner's record (``run.collected``), the runner's own word: a test its collection
    does not name is ``absent``; an expected failure (xfail) is a known failure, never a pass; a
    module that did not collect is ``failed``, one that collected tests ``passed`` (as a module).
    From text, a test the run does not name is ``absent`` only when the run covered everything it
    collected and lists its passes (JUnit, verbose output); a run that stopped early, or one that
    lists only failures, says nothing about it (``unknown``), and never that it passed.
    """
    if run is None or run.status == "ERROR" or run.tests is None:
        return "unknown"
    outcome = run.tests.get(test)
    if outcome in ("failed", "error", "xfailed", "xpass_strict"):
        return "failed"
    if outcome in ("passed", "xpassed"):
        return "passed"
    if outcome == "skipped":
        return "unknown"
    if outcome is None and "::" in test and "[" not in test:
        instances = _instances(run.tests, test)
        if instances:
            return instances
    if run.collected is not None:
        return _in_record(run, run.collected, test)
    if run.stopped:
        return "unknown"
    if run.none_ran or run.tests_from == "junit" or "passed" in run.tests.values():
        return "absent"
    return "unknown"


def _instances(outcomes: Mapping[str, str], test: str) -> Seen | None:
    """A test function's id where the run gave it parameters (`test_x[one]`, `test_x[two]`):
    passed where one passed (the function ran and passed there), failed where every one failed,
    else nothing said. A change that takes a fixture's parameters away makes `test_x` error
    where the base ran its instances."""
    prefix = test + "["
    found = [o for t, o in outcomes.items() if t.startswith(prefix)]
    if any(o in ("passed", "xpassed") for o in found):
        return "passed"
    if found and all(o in ("failed", "error") for o in found):
        return "failed"
    return None


def _in_record(run: Run, collected: list[str], test: str) -> Seen:
    """A test the run's record has no outcome for."""
    if "::" not in test:
        module = module_seen(collected, run.tests or {}, test)
        if module is not None:
            return "failed" if module == "failed" else "passed"
    if test in collected:
        return "unknown"  # collected, never ran: the run stopped before it
    if id_path(test) in (run.tests or {}):
        return "unknown"  # its module did not collect: whether it has the test is not known
    return "absent"


def alone(run: Run, test: str, only: bool) -> Seen:
    """What a focused run says about ``test``; ``only``: its command named no other test, so
    its exit status is the test's outcome when the output names none."""
    seen = in_run(run, test)
    if seen != "unknown" or not only or run.stopped:
        return seen
    if run.none_ran:
        return "absent"
    if run.status == "ERROR":
        return "unknown"
    if run.tests:  # it named other tests, not this one
        return "unknown"
    return "passed" if run.status == "PASSED" else "failed"


def _counts(seen: list[Seen]) -> str:
    parts = [f"{word} {seen.count(word)}/{len(seen)}" for word in dict.fromkeys(seen)]
    return ", ".join(parts)


def context_line(ev: Evidence, how: str | None = None) -> str | None:
    """What the live runs of the test's present context showed, on each side."""
    how = _IN[ev.context] if how is None else how
    if ev.base_alone is None and ev.change_alone is None:
        return None
    out = []
    if ev.change_alone is not None:
        out.append(f"on the change{how}: {_counts(ev.change_alone)}")
    if ev.base_alone is not None:
        where = how if ev.base_from is None else _IN[ev.base_from]
        out.append(f"on the base{where}: {_counts(ev.base_alone)}")
    if ev.causes_differ:
        out.append("with the change's tests on the base's code it failed by another cause")
    if ev.old_version == "failed" and (ev.causes_differ or "unknown" in (ev.base_alone or [])):
        out.append("the base's own version of the test failed on the base's code")
    if ev.old_version_regresses:
        out.append(
            "the base's version of the test passed on the base's code and failed on the change's"
        )
    return "; ".join(out)


def _confirmation(ev: Evidence, how: str | None = None) -> str | None:
    """Every context the test ran in, narrowest first."""
    line = context_line(ev, how)
    if line is None:
        return None
    told_nothing = [f"{_IN[c].lstrip(', ')}: no run named it" for c in ev.inconclusive]
    return "; then ".join([*ev.history, line, *told_nothing])


def classify(
    change: Run, evidence: list[Evidence], ran: dict[str, dict[str, list[int]]] | None = None
) -> list[TestFailure]:
    """The change's failing tests, each judged on its evidence; ``ran``: the change's lines
    each ran (eyeful/confirmation.py), for the report's causes."""
    ran = ran or {}
    out = []
    for ev in evidence:
        if (change.tests or {}).get(ev.test) == "xpass_strict":
            # Marked as an expected failure, and it passed: the runner fails it, but the change
            # may have fixed a known bug. A question for the author, never a block.
            out.append(_failure(ev.test, "xpass_strict", change, ev.base_suite))
            continue
        kind, on_base = decide(ev)
        failure = _failure(ev.test, kind, change, on_base, ran.get(ev.test))
        failure.confirmation = _confirmation(ev)
        failure.confirmed_in = ev.context if ev.change_alone is not None else None
        if kind == "unconfirmed" and ev.representation is not None:
            failure.representation = ev.representation
            failure.confirmation = "; ".join(
                filter(None, [failure.confirmation, ev.representation])
            )
        if kind == "flaky" and failure.confirmation and _only_where_mapped(change, ev):
            failure.confirmation += f"; {_ONLY_WHERE_MAPPED}"
        out.append(failure)
    return out


REPRESENTATION = (
    "its failure is about how the code is written, not what it does, so it does not block"
)
"""What a regression seen on every live run, whose failure may be about the code's representation
(claims.Evidence.representation), is said to be."""
CONFIGURATION = "which the base did not run with"
"""In a reason (claims.Evidence.representation) where the change's pytest configuration, not its
code, may be what fails the test (eyeful/confirmation.py)."""


DATA = "data its tests name and the code does not"
"""In a reason where a data file the change edits for its tests, not the code, may be what fails
the test (eyeful/confirmation.py)."""


EXAMPLE = "is one the change wrote"
"""In a reason where a doctest fails at an example the change wrote (eyeful/confirmation.py)."""


def not_the_code(reason: str | None) -> str:
    """What a regression seen on every live run that does not block for ``reason`` means."""
    if reason is not None and EXAMPLE in reason:
        return (
            "the example the change wrote, not the code, may be what fails it, so it does not block"
        )
    if reason is not None and CONFIGURATION in reason:
        return "the configuration, not the code, may be what fails it, so it does not block"
    if reason is not None and DATA in reason:
        return "the new data, not the code, may be what fails it, so it does not block"
    return REPRESENTATION


_ONLY_WHERE_MAPPED = (
    "it failed only in the run that recorded the map of what each test ran (eyeful's marks in "
    "the code, its watch of the import functions), which may be what it saw"
)


def _only_where_mapped(change: Run, ev: Evidence) -> bool:
    """The change's suite run recorded the map and every live run passed on both sides: its
    one failure was in the one run with eyeful's instrumentation in the code."""
    runs = [*(ev.change_alone or []), *(ev.base_alone or [])]
    return change.mapped and bool(ev.change_alone) and all(s == "passed" for s in runs)


def suite_failure(change: Run, on_change: list[Run], on_base: list[Run]) -> TestFailure:
    """A suite that names no tests, judged as one test on its live runs on each side."""

    def seen(run: Run) -> Seen:
        return {"PASSED": "passed", "FAILED": "failed"}.get(run.status, "unknown")  # type: ignore[return-value]

    ev = Evidence(SUITE, change_alone=[seen(r) for r in on_change],
                  base_alone=[seen(r) for r in on_base])  # fmt: skip
    kind, on_base_word = decide(ev)
    failure = _failure(SUITE, kind, change, on_base_word)
    failure.confirmation = _confirmation(ev, " (live runs)")
    return failure


def notes(failures: list[TestFailure], no_test_one: str | None = None) -> list[tuple[str, bool]]:
    """Checklist lines for what did not come out as a plain answer, and whether each means the
    change could not be verified (exit 3); ``no_test_one``: why no test can run on its own."""
    out: list[tuple[str, bool]] = []
    unconfirmed = []
    for failure in failures:
        if failure.kind != "unconfirmed":
            continue
        if failure.representation is not None:
            out.append((
                f"`{failure.test}` failed on the change and passed on the base, but "
                f"{failure.representation}: {not_the_code(failure.representation)}", True,
            ))  # fmt: skip
            continue
        try:
            check_test_id(failure.test)
        except ValueError as err:
            out.append((f"{err}, so it could not be re-run on its own to confirm it", True))
            continue
        unconfirmed.append(failure.test)
    if unconfirmed:
        own, they = ("its", "it does") if len(unconfirmed) == 1 else ("their", "they do")
        out.append((
            f"{_names(unconfirmed)} failed on the change and passed on the base once, but "
            f"could not be re-run on {own} own to confirm it, so {they} not block (configure "
            "commands.test_one)", True,
        ))  # fmt: skip
        if no_test_one is not None:  # why, in a line of its own (the one above points up)
            out.append((no_test_one, False))
    otherwise = [f.test for f in failures if f.kind == "fails_otherwise"]
    if otherwise:
        out.append((
            f"{_names(otherwise)} failed on the base too, but by another cause than on the "
            f"change: whether the change broke {'it' if len(otherwise) == 1 else 'them'} anew "
            "could not be told", True,
        ))  # fmt: skip
    undetermined = [f.test for f in failures if f.kind == "undetermined" and f.test != SUITE]
    if any(f.kind == "undetermined" and f.test == SUITE for f in failures):
        out.append((
            "the test suite fails on the base too, and no run named a test (the command stopped "
            "before its tests, or its runner's output is not one eyeful reads): whether the "
            "change broke more than the base already did could not be told", True,
        ))  # fmt: skip
    if undetermined:
        out.append((
            f"could not tell whether {_names(undetermined)} passed on the base: no run named "
            "them as passed there", True,
        ))  # fmt: skip
    for failure in failures:
        if failure.kind == "xpass_strict":
            out.append((f"`{failure.test}` is marked as an expected failure (strict) and passed "
                        "on the change: if the change fixed that known bug, remove the mark",
                        False))  # fmt: skip
        elif failure.kind == "flaky":
            out.append((f"`{failure.test}` is flaky ({failure.confirmation}): it does not "
                        "block", False))  # fmt: skip
        elif failure.kind == "order_dependent":
            out.append((f"`{failure.test}` fails in the suite on the change but passes on its "
                        "own: it depends on the tests run before it", False))  # fmt: skip
    return out


def newly_skipped(change: Run, passed_on_base: dict[str, str]) -> list[TestFailure]:
    """Tests the change's run skipped that passed live on the base: questions, with the skip's
    reason (eyeful/claims.py: ``skip_kind``)."""
    return [
        TestFailure(
            test=test, kind="newly_skipped", blocking=False,
            on_change=(change.tests or {}).get(test, "not collected"),
            on_base="passed", excerpt=reason or "(the skip gave no reason)",
            message=reason[:200],
        )
        for test, reason in sorted(passed_on_base.items())
    ]  # fmt: skip


def names(tests: list[str]) -> str:
    """Test ids in a line: the first five, then how many more."""
    return _names(tests)


def _names(tests: list[str]) -> str:
    shown = ", ".join(f"`{t}`" for t in tests[:5])
    return shown + (f" and {len(tests) - 5} more" if len(tests) > 5 else "")


def compare(
    change: Run, base: Run | None, repo: pygit2.Repository, snap: Snapshot
) -> tuple[list[TestFailure], list[str]]:
    """The change's failures against one base suite run, without live runs: what that run names
    (a test it names as passed is at most `unconfirmed`). The run is of the base's code with the
    change's test side (eyeful/testside.py): a test whose file the base itself does not have is
    new, whatever it did there."""
    notes: list[str] = []
    if change.status != "FAILED":
        return [], notes
    if base is None or base.status == "ERROR":
        why = base.reason if base is not None and base.reason else "setup failed there"
        notes.append(
            f"the tests could not be run on the base ({why}), so failures are unclassified"
        )
        failures = sorted(change.failing) if change.names_known else [SUITE]
        return [_failure(t, "undetermined", change, "unknown") for t in failures], notes
    if base.stopped:
        notes.append(f"the base's test run did not cover every test: {base.stopped}")
    if not change.names_known:
        notes.append("the test output names no failing tests: the suite was compared as a whole")
        seen: Seen = "passed" if base.status == "PASSED" else "failed"
        kind, on_base = decide(Evidence(SUITE, base_suite=seen))
        return [_failure(SUITE, kind, change, on_base)], notes
    if not base.names_known:
        notes.append(
            "the base failed without naming its failing tests, so the change's failures "
            "could not be compared test by test"
        )
    failing = sorted(change.failing)
    # A test moved to another file is judged by its id on the base (eyeful/moved.py) where the
    # run has no outcome for it under its own.
    unlike = [
        t
        for t in failing
        if in_run(base, t) in ("absent", "unknown") or not file_in_tree(repo, snap.base.tree, t)
    ]
    base_ids = moved.ids_on_base(repo, snap.base.tree, change.tree, unlike)
    evidence = []
    for test in failing:
        seen = in_run(base, test)
        if seen in ("absent", "unknown") and test in base_ids:
            seen = in_run(base, base_ids[test])
        ev = Evidence(test, base_suite=seen, ids_moved=ids_moved(repo, snap, test))
        evidence.append(ev)
        if test in base_ids:
            continue
        if not file_in_tree(repo, snap.base.tree, test) and file_in_tree(
            repo, snap.head.tree, test
        ):
            ev.base_suite = "absent"  # the base does not have its file: new, whatever it did
        elif (
            base.collected is None  # from text: the base's tree says whether it has the test
            and ev.base_suite == "unknown"
            and not exists_in_tree(repo, snap.base.tree, test)
        ):
            ev.base_suite = "absent"
    return classify(change, evidence), notes


def conftest_regression(change: Run, changes: int, bases: int) -> TestFailure:
    """The suite as one test where the change's code broke loading a conftest.py (pytest
    stopped before any test on every run on the change; the base's code with the change's tests
    passed every run): a regression."""
    return TestFailure(
        test=SUITE, kind="regression", blocking=True, on_change="error", on_base="passed",
        excerpt=excerpt(change.tail, SUITE), message=(change.reason or "")[:200],
        confirmation=(
            f"on the change (live runs): a conftest.py failed to load {changes}/{changes}; "
            f"on the base (live runs): passed {bases}/{bases}"
        ),
    )  # fmt: skip


def all_new(change: Run) -> list[TestFailure]:
    """The change's failures when the base has no files at all: new tests, none blocking."""
    if change.status != "FAILED":
        return []
    tests = sorted(change.failing) if change.names_known else [SUITE]
    return [_failure(t, "new_test", change, "absent") for t in tests]


def _failure(
    test: str,
    kind: FailureKind,
    change: Run,
    on_base: str,
    ran: dict[str, list[int]] | None = None,
) -> TestFailure:
    on_change = (change.tests or {}).get(test, "failed")
    failure = (change.failures or {}).get(test)
    return TestFailure(
        test=test,
        kind=kind,
        blocking=kind in BLOCKING_KINDS,
        on_change=on_change,
        on_base=on_base,
        excerpt=excerpt(change.tail, test, failure),
        message=_message(failure),
        raised_at=_raised_at(failure),
        cause=report_cause(failure, ran) if failure is not None else None,
        ran=ran,
    )


def _raised_at(failure: Failure | None) -> str | None:
    if failure is not None and failure.in_repository:
        return failure.in_repository
    if failure is None or not failure.raised_in:
        return None
    if failure.raised_line is None:
        return failure.raised_in
    return f"{failure.raised_in}:{failure.raised_line}"


def _message(failure: Failure | None) -> str:
    if failure is None:
        return ""
    if failure.type and not failure.message.startswith(failure.type):
        return f"{failure.type}: {failure.message}"[:200]
    return failure.message[:200]
