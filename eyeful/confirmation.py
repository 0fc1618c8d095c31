"""The live runs behind a regression: the change's failing tests run again on each side, in the
context their failure needs.

Every failing test whose file the base has runs live `reruns` times on each side: first alone
(`test_one`; several ids in one command where the runner takes several). Where alone is not where
the failure lives (it passes alone on the change, or fails there otherwise than in the suite, or
fails alone on the base that the base's suite said passed), it runs with the rest of its file,
then in the whole suite. The base's evidence always comes from the context the change's came
from, but for one case: a whole suite's first run on the change where the failure did not come
back (flaky) runs no suite on the base, and the narrower context's base runs stand, named as
such. The runs of a context go in pairs, each pair in one worktree, change then base or base then
change in turn, so whatever a run leaves behind weighs on both sides alike. A cached run (the
base's suite) says where to look, never what a test is: nothing cached blocks or unblocks.

"The base" in these runs is the base's code with the change's test side (eyeful/testside.py):
a failure there too is the tests' new demands, pre-existing; a test whose file the change edited
that fails on both sides by different causes is still a regression.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pygit2

from eyeful import doctests, hunks, moved
from eyeful.evidence import looked_words
from eyeful.failures import Failure, cause, same_failure
from eyeful.focus import passable
from eyeful.onbase import located
from eyeful.regressions import (
    CONFIGURATION,
    DATA,
    EXAMPLE,
    Context,
    Evidence,
    Seen,
    alone,
    context_line,
    decide,
    exists_in_tree,
    file_in_tree,
    ids_moved,
    in_run,
)
from eyeful.runs import Run, Runner, setup_key
from eyeful.shell import parallel_map
from eyeful.snapshot import Snapshot, regular_file
from eyeful.testids import id_path
from eyeful.testside import (
    bodies_edited_alone,
    code_unchanged,
    config_kept,
    data_of_tests,
    renamed_files,
    side_paths,
    side_tree,
)
from eyeful.worktrees import Worktree


@dataclass
class Confirmation:
    evidence: list[Evidence]
    runs: list[Run] = field(default_factory=list)
    ran: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    """The change's lines each test ran in its first run alone on the change (the only traced
    run: the suite never is), by test and file: the report's causes (eyeful/causes.py)."""


def can_focus(runner: Runner, change: Run) -> bool:
    """Whether the change's failing tests can be run on their own: `test_one` is configured (or
    derived: eyeful/focus.py) and the run named them with ids that can be passed to it."""
    return (
        runner.alone.how() is not None
        and change.names_known
        and any(passable(t) for t in change.failing)
    )


CONTEXTS: tuple[Context, ...] = ("alone", "file", "suite")


def confirm(
    runner: Runner,
    repo: pygit2.Repository,
    snap: Snapshot,
    change: Run,
    hint: Run | None,
    jobs: int,
) -> Confirmation:
    """Evidence for each failing test from live runs, in the context its failure needs.

    ``hint`` is the base's cached suite run, if any: it says where to look (a test it names as
    passing that fails alone on the base is looked at in its file), never what a test is.
    """
    evidence = [
        Evidence(t, base_suite=in_run(hint, t), change_cached=change.cached)
        for t in sorted(change.failing)
    ]
    # A test whose file the base does not have is not there: a fact of the tree. Whether the
    # file has the test is the base's collection's to say (doctests, inherited tests, any
    # parameter), in the live runs below; guessed from the file's text only without a record.
    exists = exists_in_tree if change.collected is None else file_in_tree
    # (An id whose file the change's tree lacks too does not name a repository path: a rootdir
    # below the repository, say. Its live runs tell.)
    with runner.lock_repo():
        renamed = renamed_files(repo, snap.base.tree, snap.head.tree)
        base_ids = {ev.test: _on_base(ev.test, renamed) for ev in evidence}
        unlike = [t for t, b in base_ids.items() if not exists(repo, snap.base.tree, b)]
        # A test moved to a file too unlike for git's renames: the same name and code there.
        base_ids |= moved.ids_on_base(repo, snap.base.tree, snap.head.tree, unlike)
        for ev in evidence:
            ev.ids_moved = ids_moved(repo, snap, ev.test)
        missing = {
            ev.test
            for ev in evidence
            if not exists(repo, snap.base.tree, base_ids[ev.test])
            and exists(repo, snap.head.tree, ev.test)
        }
        # The base side runs the base's code with the change's tests (eyeful/testside.py): a
        # test file it took from the change goes by the change's name there.
        side = side_paths(repo, snap.base.tree, snap.head.tree, change.test_files(),
                          change.rootdir, change.doctest_files())  # fmt: skip
        tested = side_tree(repo, snap.base.tree, snap.head.tree, paths=side)
        edited = set(side)
        layout = code_unchanged(repo, snap.base.tree, snap.head.tree, edited)
        own_config = config_kept(repo, snap.base.tree, snap.head.tree, side)
        tests_data = data_of_tests(repo, snap.base.tree, snap.head.tree, side) if not layout else {}
        # Which of the change's lines each failing test runs: traced in its first run alone on
        # the change (a pytest run: the probe's tracer), never in a suite run.
        changed = (
            hunks.changed_lines(repo, snap.base.tree, snap.head.tree)
            if change.tests_from == "probe"
            else {}
        )
        # The change's code lines, where it edits only functions' bodies in Python files and
        # nothing else of the code (the setup the same): a test that ran none of them saw only
        # where they are.
        code_changed = (
            {path: lines for path, lines in changed.items() if path not in edited}
            if changed
            and bodies_edited_alone(repo, snap.base.tree, snap.head.tree, edited)
            and _same_setup(runner, repo, snap)
            else {}
        )
        if tested != snap.base.tree:
            base_ids = {
                test: test if file_in_tree(repo, tested, test) else old
                for test, old in base_ids.items()
            }
    for ev in evidence:
        if ev.test in missing:
            ev.base_suite = "absent"
        elif hint is not None and hint.cached and ev.base_suite in ("failed", "absent"):
            ev.base_suite = "unknown"  # a cached run may say where to look, never what it is
    # An id that cannot be an argument (a NUL or a line break) stays unconfirmed on its own;
    # it never keeps the others from their live runs.
    todo = [ev for ev in evidence if ev.test not in missing and passable(ev.test)]
    lock = runner.lock_repo()
    on_change, on_base = located(repo, snap.head.tree, lock), located(repo, tested, lock)
    done = Confirmation(evidence)
    traced: dict[str, Run] = {}  # the run each test's lines were traced in
    suites = _suite_failures(change)
    for context in CONTEXTS:
        if not todo:
            break
        files_next = context == "alone" and change.tests_from == "probe"
        if context == "file" and change.tests_from != "probe":
            continue  # a file of tests is pytest's to run; other runners go on to the suite
        tests = [ev.test for ev in todo]
        trace = changed if context == "alone" else None
        seen, runs = _in_context(runner, snap, tested, context, tests, base_ids, jobs, trace)
        done.runs += runs
        done.ran |= {t: lines for run in runs if run.ran for t, lines in run.ran.items()}
        traced |= {t: run for run in runs if run.ran for t in run.ran}
        further = []
        for ev in todo:
            change_observed = seen[("change", ev.test)]
            # No base run in this context: the suite's first run on the change passed it
            # (_suite_pairs), so it is flaky, and the base's evidence stays the narrower one's.
            kept = ("base", ev.test) not in seen
            base_observed = seen.get(("base", ev.test), [])
            change_seen = [outcome for outcome, _ in change_observed]
            base_seen = list(ev.base_alone or []) if kept else [o for o, _ in base_observed]
            inconclusive = {"unknown", "absent"} & {*change_seen, *base_seen}
            if ev.change_alone is not None and inconclusive:
                # The wider context told nothing (a run that stopped at `-x`, say): the
                # narrower one's evidence stands; the wider one is on the record.
                ev.inconclusive.append(context)
                continue
            if ev.change_alone is not None:
                ev.history.append(context_line(ev) or "")
            if kept:
                ev.base_from = ev.context
            ev.context = context
            ev.change_alone, ev.base_alone = change_seen, base_seen
            ev.change_causes = _causes(change_observed)
            if not kept:
                ev.base_causes = _causes(base_observed)
            ev.causes_differ = _in_repo(runner, snap, ev.test) in edited and _causes_differ(
                change_observed, base_observed, on_change, on_base
            )
            if _look_further(ev, suites.get(ev.test), seen[("change", ev.test)], files_next):
                further.append(ev)
        todo = further
    if not layout:
        done.runs += _alone_where_shared(runner, snap, evidence, done.ran, traced, changed, jobs)
    for ev in evidence:
        with runner.lock_repo():  # (the repository is read for a doctest's examples)
            ev.representation = (
                layout
                or _looked_not_ran(ev.test, done.ran, traced.get(ev.test))
                or _configured_not_ran(ev.test, done.ran, traced.get(ev.test), own_config, changed)
                or _data_not_ran(ev.test, done.ran, traced.get(ev.test), tests_data, changed)
                or _example_written(ev.test, change, repo, snap.base.tree, snap.head.tree)
                or _moved_not_ran(ev, done.ran, traced.get(ev.test), code_changed)
            )
    done.runs += _old_versions(runner, repo, snap, change, evidence, edited, jobs)
    return done


def _alone_where_shared(
    runner: Runner,
    snap: Snapshot,
    evidence: list[Evidence],
    ran: dict[str, dict[str, list[int]]],
    traced: dict[str, Run],
    changed: hunks.ChangedLines,
    jobs: int,
) -> list[Run]:
    """A regression that ran none of the change's lines, traced in one run with other tests in
    which the tests' files looked at a changed Python file: which of them looked is not known,
    so each runs once more on the change alone, traced (into ``ran`` and ``traced``)."""
    shared = [
        ev.test for ev in evidence
        if decide(ev)[0] == "regression" and _looked_not_ran(ev.test, ran, traced.get(ev.test),
                                                             shared=True)
    ]  # fmt: skip
    if not shared:
        return []
    batches = parallel_map(
        lambda test: runner.one(snap.head.tree, "change", [test], trace=changed or None), shared,
        jobs,
    )  # fmt: skip
    for test, batch in zip(shared, batches, strict=True):
        run = next((r for r in reversed(batch) if r.name == "test_one" and r.ran), None)
        if run is not None and test in (run.ran or {}):
            ran[test], traced[test] = (run.ran or {})[test], run
    return [run for batch in batches for run in batch]


_RAN_IT = "ran in a child process"
"""A look at a changed file that is running it (a script the test starts with Python, the probe's
``RAN``): what it does."""


def _looked_not_ran(
    test: str, ran: dict[str, dict[str, list[int]]], run: Run | None, *, shared: bool = False
) -> str | None:
    """A test that ran none of the change's lines (its setup, call and teardown: a `def` line
    the import ran defines what the test did not run), in a run alone on the change, of it
    alone, in which the tests' own files looked at a changed Python file otherwise than by
    running it (read it, took its size, a function's code object: not a script it started, nor
    other code it handed a path): what it saw of the change is how the code is written. (What
    a run looked at is the run's: a run of several tests tells no one of them; ``shared``: such
    a run, where one of them may have looked.)"""
    lines = ran.get(test)
    if run is None or lines is None or any(lines.values()):
        return None
    if run.beyond_trace or run.edited_entered:
        return None  # (a child process it started may have run the change's lines, unseen)
    alone = len(run.ran or {}) == 1
    if alone == shared:  # of it alone, or (``shared``) of several tests
        return None
    how = run.looked or {}
    looked = [
        path for path in run.looked_by_tests or []
        if path.endswith(".py") and not how.get(path, "").startswith(_RAN_IT)
    ]  # fmt: skip
    if not looked:
        return None
    did = "; ".join(looked_words(path, (run.looked or {}).get(path)) for path in looked)
    return f"it ran none of the change's lines, and its run alone on the change {did}"


def _configured_not_ran(
    test: str,
    ran: dict[str, dict[str, list[int]]],
    run: Run | None,
    config: str | None,
    changed: hunks.ChangedLines,
) -> str | None:
    """A test that ran none of the change's lines (traced alone on the change, starting no
    process) where the change edits the pytest configuration and the base kept its own
    (:func:`eyeful.testside.config_kept`): the options, not the code, may be what fails it (a
    module's old warning made an error by the new filters)."""
    if config is None or not _ran_none(test, ran, run, changed):
        return None
    return (
        f"it ran none of the change's lines, and the change edits the pytest configuration in "
        f"{config}, {CONFIGURATION} (it kept its own)"
    )


def _data_not_ran(
    test: str,
    ran: dict[str, dict[str, list[int]]],
    run: Run | None,
    data: dict[str, set[str]],
    changed: hunks.ChangedLines,
) -> str | None:
    """A test whose file names a data file the change edits that only the tests name
    (:func:`eyeful.testside.data_of_tests`: a table of cases), and that ran none of the change's
    Python lines (traced alone on the change, starting no process; or the change edits none):
    the base ran its own data, so a new case may fail on the base's code too."""
    named = sorted(path for path, files in data.items() if id_path(test) in files)
    if not named:
        return None
    if changed and not _ran_none(test, ran, run, changed):
        return None
    return (
        f"it ran none of the change's lines, and the change edits {named[0]}, {DATA} (the "
        "base ran with its own)"
    )


def _moved_not_ran(
    ev: Evidence, ran: dict[str, dict[str, list[int]]], run: Run | None, code: hunks.ChangedLines
) -> str | None:
    """A test failing alone (no other test's doing) that ran none of the change's code lines
    (``code``: the change edits only functions' bodies in Python files, docstrings and comments
    kept, and nothing else of the code: :func:`eyeful.testside.bodies_edited_alone`), traced
    alone on the change (the initial conftest files' imports too), whose run looked at no file
    of the change's code otherwise than by running it and ran nothing unseen: what it saw
    differ is where the lines are (a warning's or a traceback's line number), not what the code
    does."""
    if not code or ev.context != "alone" or run is None:
        return None
    if not _ran_none(ev.test, ran, run, code):
        return None
    if any(path in code for path in run.read_as_text or []):
        return None
    return (
        "it ran none of the change's lines, not even at import, and nothing looked at its "
        "files: what moved for it is where the code's lines are (a line number), not what the "
        "code does"
    )


def _same_setup(runner: Runner, repo: pygit2.Repository, snap: Snapshot) -> bool:
    """Whether the setup installs alike on both trees (none, or the same inputs)."""
    if runner.config.commands.setup is None:
        return True
    return setup_key(repo, snap.base.tree, runner.config) == setup_key(
        repo, snap.head.tree, runner.config
    )


def _example_written(
    test: str, change: Run, repo: pygit2.Repository, base_tree: str, head_tree: str
) -> str | None:
    """A doctest that failed at an example the base's doctest does not run as the change's
    does up to it (helper-67): the change wrote it, or one before it, and the base ran its own
    docstrings (a module of doctests is the code), so it may fail on the base's code too.
    pytest's (its record names the item a doctest) and unittest's (`DocTestSuite`: a dotted id
    whose failure is a doctest's, its module a file of the tree)."""
    failure = (change.failures or {}).get(test)
    if failure is None:
        return None
    if (change.kinds or {}).get(test) == "DoctestItem":
        path, name = id_path(test), test.partition("::")[2]
        if change.rootdir:  # (ids start at pytest's rootdir: helper-69)
            path = f"{change.rootdir}/{path}"
    elif "::" not in test and doctests.failing_example(failure.chain) is not None:
        path, name = _module_file(repo, head_tree, test), test  # (helper-69)
    else:
        return None
    sides = [regular_file(repo, tree, path) for tree in (base_tree, head_tree)]
    base, head = (data.decode("utf-8", "replace") if data else None for data in sides)
    source = doctests.written_by_change(name, failure.chain, base, head, path)
    if source is None:
        return None
    return (
        f"the example it fails at (`{source.splitlines()[0][:120]}`) {EXAMPLE}, and the base "
        "ran its own docstrings (a module of doctests is the code)"
    )


def _module_file(repo: pygit2.Repository, tree: str, dotted: str) -> str:
    """The file of the longest module a dotted name starts with (`calc.add`: `calc.py`), ""
    where the tree has none."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):  # (the whole name: a module's own docstring, helper-73)
        stem = "/".join(parts[:cut])
        for path in (
            f"{stem}.py",
            f"{stem}/__init__.py",
            f"src/{stem}.py",
            f"src/{stem}/__init__.py",
        ):
            if regular_file(repo, tree, path) is not None:
                return path  # (a src layout's too: helper-71)
    return ""


def _ran_none(
    test: str, ran: dict[str, dict[str, list[int]]], run: Run | None, changed: hunks.ChangedLines
) -> bool:
    """Whether ``test``'s traced run alone on the change ran none of the change's lines and
    entered no function the change edited: not in its setup, call and teardown, not while
    modules were imported (a module's constant, a decorator's body: what the code does too),
    not in pytest's hooks between them (a conftest's report hook may decide an outcome), and
    ran nothing unseen (a process it started, a thread of its own)."""
    lines = ran.get(test)
    if run is None or lines is None or run.beyond_trace or run.edited_entered:
        return False
    if any(found for path, found in lines.items() if path in changed):
        return False
    for found in [run.executed_at_import or {}, *(run.executed_in_module or {}).values()]:
        if any(set(lines) & changed.get(path, frozenset()) for path, lines in found.items()):
            return False
    return True


def _old_versions(
    runner: Runner,
    repo: pygit2.Repository,
    snap: Snapshot,
    change: Run,
    evidence: list[Evidence],
    edited: set[str],
    jobs: int,
) -> list[Run]:
    """For each test failing on both sides whose test side the change edited (its own file, or
    what its file shares with others: a conftest.py, a helper, data, pytest.ini), the base's
    version of those files run once on the base's code (the base itself) and once on the
    change's: passing on the first and failing on the second, the change's code fails what the
    test asked before (a stricter assertion the old code fails too, put first, or a fixture's
    value moved with the code, would mask it). Not for a test the runner names as no test
    function (a doctest's file is the code it tests)."""
    own_files = set(change.test_files())
    shared = sorted(p for p in edited if p not in own_files)
    todo: list[tuple[Evidence, tuple[str, ...]]] = []
    for ev in evidence:
        if (change.kinds or {}).get(ev.test) or not (
            decide(ev)[0] == "pre_existing" or ev.causes_differ or _told_nothing(ev)
        ):
            continue
        path = _in_repo(runner, snap, ev.test)
        reverted = tuple(sorted({*shared, *([path] if path in edited else [])}))
        if reverted and (path not in edited or file_in_tree(repo, snap.base.tree, ev.test)):
            todo.append((ev, reverted))
    if not todo:
        return []
    with runner.lock_repo():  # the change's code with the base's version of those files
        trees = {
            paths: side_tree(repo, snap.head.tree, snap.base.tree, paths=list(paths))
            for paths in {paths for _, paths in todo}
        }
    runs = [
        (ev, side, tree)
        for ev, paths in todo
        for side, tree in (("base", snap.base.tree), ("change", trees[paths]))
    ]
    batches = parallel_map(lambda r: runner.one(r[2], r[1], r[0].test), runs, jobs)
    said: dict[tuple[str, str], Seen] = {}
    for (ev, side, _), batch in zip(runs, batches, strict=True):
        tests = [run for run in batch if run.name == "test_one"]
        said[(ev.test, side)] = alone(tests[-1], ev.test, only=True) if tests else "unknown"
        if side == "base" and tests:
            observed = [(said[(ev.test, side)], _failure_of(tests[-1], ev.test))]
            ev.old_version_causes = _causes(observed)
    for ev, _ in todo:
        ev.old_version = said[(ev.test, "base")]
        ev.old_version_regresses = (
            said[(ev.test, "base")] == "passed" and said[(ev.test, "change")] == "failed"
        )
    return [run for batch in batches for run in batch]


def _told_nothing(ev: Evidence) -> bool:
    """Failing on the change, told nothing of on the base's code (the change's test module does
    not import there): its own version may tell what it did before."""
    return ev.change_failed and "unknown" in (ev.base_alone or [])


Observed = tuple[Seen, Failure | None]


def _in_repo(runner: Runner, snap: Snapshot, test: str) -> str:
    """The repository path of a record's test id's file (its ids start at pytest's rootdir)."""
    return id_path(runner.given([test], snap.head.tree)[0])


def _causes_differ(
    change: list[Observed],
    base: list[Observed],
    on_change: Callable[[Failure], str | None],
    on_base: Callable[[Failure], str | None],
) -> bool:
    """Whether the test failed on both sides by different causes (eyeful.failures.cause: type,
    raising line, message with numbers aside; the raising line by its text in each side's tree,
    eyeful.onbase.located), each failure recorded: the change's test on the base's code failed, but
    not as on the change."""
    mine = {on_change(f) if f is not None else None for o, f in change if o == "failed"}
    theirs = {on_base(f) if f is not None else None for o, f in base if o == "failed"}
    if not mine or not theirs or None in mine or None in theirs:
        return False
    return not mine & theirs


def _in_context(
    runner: Runner,
    snap: Snapshot,
    tested: str,
    context: Context,
    tests: list[str],
    base_ids: dict[str, str],
    jobs: int,
    trace: hunks.ChangedLines | None = None,
) -> tuple[dict[tuple[str, str], list[Observed]], list[Run]]:
    """``reruns`` pairs of live runs of ``tests`` in ``context``, each pair in one worktree,
    change then base, or base then change for every other pair: whatever one run leaves in the
    worktree (ignored files, caches) weighs on both sides alike. The base side is ``tested``:
    the base's code with the change's tests. A test goes by its id there (``base_ids``: its
    file's name before a rename, where that file is the base's). ``trace``: the change's lines,
    traced in the first pair's run on the change."""
    sides = {"change": snap.head.tree, "base": tested}
    ids = {"change": tests, "base": [base_ids.get(t, t) for t in tests]}

    def pair(index: int) -> list[tuple[str, list[Run]]]:
        order = ["change", "base"] if index % 2 == 0 else ["base", "change"]
        out = []
        with runner.hold() as worktree:
            for side in order:
                traced = trace if index == 0 and side == "change" else None
                batch = _run(runner, context, sides[side], side, ids[side], worktree, traced)
                out.append((side, batch))
        return out

    seen: dict[tuple[str, str], list[Observed]] = {}
    runs: list[Run] = []

    def record(side: str, batch: list[Run]) -> None:
        runs.extend(batch)
        said = _per_test(context, ids[side], batch)
        for test, side_id in zip(tests, ids[side], strict=True):
            seen.setdefault((side, test), []).append(said[side_id])

    if context == "suite":
        _suite_pairs(runner, sides, tests, seen, record, pair, jobs)
        return seen, runs
    for batches in parallel_map(pair, range(runner.config.reruns), jobs):
        for side, batch in batches:
            record(side, batch)
    return seen, runs


def _suite_pairs(
    runner: Runner,
    sides: dict[str, str],
    tests: list[str],
    seen: dict[tuple[str, str], list[Observed]],
    record: Callable[[str, list[Run]], None],
    pair: Callable[[int], list[tuple[str, list[Run]]]],
    jobs: int,
) -> None:
    """The widest context, bounded: a whole suite run each. The change first: where no test's
    failure came back there (each passed), they are flaky whatever else runs, and no suite runs
    again (a flaky timing test would cost ``reruns`` pairs of whole suites). Else the base in
    the same worktree, then the other pairs as in any context, in parallel."""
    with runner.hold() as worktree:
        record("change", runner.suite(sides["change"], "change", live=True, worktree=worktree))
        if all(any(o == "passed" for o, _ in seen[("change", t)]) for t in tests):
            return
        record("base", runner.suite(sides["base"], "base", live=True, worktree=worktree))
    for batches in parallel_map(pair, range(1, runner.config.reruns), jobs):
        for side, batch in batches:
            record(side, batch)


def _on_base(test: str, renamed: dict[str, str]) -> str:
    """``test``'s id on the base: its file under the name it had there."""
    path = id_path(test)
    old = renamed.get(path)
    return test if old is None else old + test[len(path) :]


def _run(
    runner: Runner,
    context: Context,
    tree: str,
    side: str,
    tests: list[str],
    worktree: Worktree,
    trace: hunks.ChangedLines | None = None,
) -> list[Run]:
    if context == "suite":
        return runner.suite(tree, side, live=True, worktree=worktree)
    ids = tests if context == "alone" else sorted({id_path(t) for t in tests})
    batch = runner.one(tree, side, ids, worktree=worktree, trace=trace or None)
    stopped = len(ids) > 1 and any(r.stopped for r in batch if r.name == "test_one")
    if context == "alone" and (stopped or (side == "base" and _not_found([batch]))):
        # pytest refuses a whole command when one id is not in the tree (a parameter the change
        # added), and `test_one` with `-x` stops at the first that fails: one command per id.
        batch += runner.one(tree, side, ids, each=True, worktree=worktree, trace=trace or None)
    return batch


def _per_test(context: Context, tests: list[str], batch: list[Run]) -> dict[str, Observed]:
    """What one context's run(s) on one side said about each test (setup runs first; a failed
    setup: unknown)."""
    name = "test" if context == "suite" else "test_one"
    runs = [run for run in batch if run.name == name]
    if not runs:
        return dict.fromkeys(tests, ("unknown", None))
    if context == "alone" and len(runs) > 1:  # one command for all, then one per id
        each = runs[-len(tests) :] if len(runs) > len(tests) else runs
        if len(each) == len(tests):
            return {
                test: (alone(run, test, only=True), _failure_of(run, test))
                for test, run in zip(tests, each, strict=True)
            }
    run = runs[-1]
    only = context == "alone" and len(tests) == 1
    return {test: (alone(run, test, only=only), _failure_of(run, test)) for test in tests}


def _causes(observed: list[Observed]) -> list[str]:
    """The causes of the failures observed (eyeful/claims.py: pre-existing needs the same)."""
    return [c for seen, f in observed if seen == "failed" and f and (c := cause(f)) is not None]


def _failure_of(run: Run, test: str) -> Failure | None:
    return (run.failures or {}).get(test)


def _suite_failures(change: Run) -> dict[str, Failure]:
    return dict(change.failures or {})


def _look_further(
    ev: Evidence, in_suite: Failure | None, change: list[Observed], files_next: bool
) -> bool:
    """Whether this context is not where the failure lives, so the next one (file, suite) must
    judge: the test passed here on the change every time, or failed every time but not as it
    failed in the suite (alone it lacks what the tests before it set up); or it failed every time
    on the base too, alone, and its file is next (a pre-existing failure unblocks: it must hold
    with the test's file, where the tests before it ran), or here while the base's suite run
    said it passed there; or it could not be run here at all, on either side."""
    outcomes = [outcome for outcome, _ in change]
    base = ev.base_alone or []
    if outcomes and all(o == "unknown" for o in outcomes) and all(b == "unknown" for b in base):
        return True  # it cannot run here (unittest given a doctest's name): the suite judges
    if any(b != base[0] for b in base):
        return False  # mixed on the base: flaky, wherever it runs
    if outcomes and all(o == "passed" for o in outcomes):
        return True
    if outcomes and all(o == "failed" for o in outcomes):
        if any(not _same_failure_as(in_suite, failure) for _, failure in change):
            return True
        failing_on_base = bool(base) and all(b == "failed" for b in base)
        return failing_on_base and (files_next or ev.base_suite == "passed")
    return False


def _same_failure_as(first: Failure | None, other: Failure | None) -> bool:
    """Whether two runs' failures of one test are the same exception (eyeful.failures
    ``same_failure``: the chain and where it was raised, addresses and temporary paths aside);
    True when either was not recorded as an exception (read from text): nothing to tell them
    apart by."""
    if first is None or other is None or not first.chain or not other.chain:
        return True
    return same_failure(first, other)


def _not_found(batches: list[list[Run]]) -> bool:
    """Whether pytest said it could not find an id it was given ("ERROR: not found: ...")."""
    runs = [r for batch in batches for r in batch if r.name == "test_one"]
    if any(run.status == "ERROR" and (run.none_ran or run.exit_code == 4) for run in runs):
        # refused before it ran anything (its record collected nothing), or its command line
        # refused (pytest's usage error: an id whose module does not import on this side)
        return True
    return any(
        f"\nERROR: {what}not found: " in "\n" + run.tail
        for run in runs
        for what in ("", "file or directory ")
    )
