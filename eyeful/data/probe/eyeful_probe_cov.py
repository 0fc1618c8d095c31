"""Where the probe's map of what each test ran (eyeful_probe_main.py's ``reached`` lines) comes
from, and where pytest ran. PYTEST_DONT_REWRITE

eyeful's own watch is marks compiled into the repository's code (eyeful_probe_marks.py). Where
coverage.py (pytest-cov's ``--cov``, ``coverage run -m pytest``) measures as the run starts, it is
``sys.monitoring`` with a tool id of its own on Python 3.12+, beside coverage
(:class:`eyeful_probe_watch.Reach`), and before 3.12 the map is taken from coverage.py itself
(:class:`CoverageReach`). Each test, and each test
module's collection, gets a dynamic context of coverage's (``Coverage.switch_context``), and at
the end of the test loop, before pytest-cov stops, saves and combines its data, coverage's data
says which files ran in each context (``CoverageData.contexts_by_lineno``). What coverage does not
measure (outside its ``source``, ``omit``) is in no test's entry: a change to it runs the whole
suite unless a file a test reached imports it (eyeful/affected.py). Standard library and pytest
only: coverage is used only where the run itself imported and started it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Iterable
from typing import Any

import pytest
from eyeful_probe_deps import Early, Sight  # type: ignore[import-not-found]  # beside it
from eyeful_probe_marks import MarkedReach  # type: ignore[import-not-found]  # beside it
from eyeful_probe_watch import Reach  # type: ignore[import-not-found]  # beside it

TEST = "eyeful-test:"
MODULE = "eyeful-module:"
# pytest-cov's own per-test contexts (`--cov-context=test`) name the test too: "<id>|<phase>".
_COV_PHASES = ("|setup", "|run", "|teardown")


def watch(config: pytest.Config, root: str) -> Reach:
    """The map's watch for this process: marks in the repository's code (eyeful_probe_marks.py;
    a coverage that starts later measures beside them), unless coverage.py measures as the run
    starts: then before Python 3.12 coverage's own data (its tracer is in place), from 3.12
    eyeful's own ``sys.monitoring`` tool beside it."""
    early = Early.take()  # what the initial conftest files opened or ran: every test's
    cov = _measuring()
    if cov is None:
        reach: Reach = MarkedReach.start(root)
    elif getattr(sys, "monitoring", None) is None:
        return CoverageReach.start(root, cov, config, early)
    else:
        reach = Reach.start(root)
    reach.session |= early
    return reach


def _measuring() -> Any | None:  # noqa: ANN401  (coverage.Coverage, not imported here)
    """The coverage.py instance measuring this process, if any (only one the run started)."""
    coverage = sys.modules.get("coverage")
    current = getattr(getattr(coverage, "Coverage", None), "current", None)
    try:
        cov = current() if callable(current) else None
    except Exception:
        return None
    if cov is None or not hasattr(cov, "switch_context") or not hasattr(cov, "get_data"):
        return None  # not measuring, or a coverage.py older than 5.0 (no contexts)
    return cov


class CoverageReach(Reach):  # type: ignore[misc]  # Reach is untyped to mypy (beside it)
    """The map from coverage.py's per-test contexts (see the module's docstring).

    The contexts are switched on the instance that measured when the map started. Not in an
    xdist worker: there each switch writes the worker's data file, and pytest-cov's workers erase
    each other's data files as they start, which broke runs now and then; under xdist with
    coverage no map is recorded (the whole suite runs, saying why)."""

    why: str | None
    session: set[str]

    def __init__(self, root: str, cov: Any) -> None:  # noqa: ANN401
        super().__init__(root)
        self.cov = cov
        self.static = str(getattr(getattr(cov, "config", None), "context", None) or "")
        self.previous: list[str | None] = []
        self.tests: set[str] = set()
        self.in_test = False
        self.blind: set[str] = set()
        """Tests during which pytest-cov stops measuring (``no_cover``): every file it measured
        counts for them."""
        self.found: dict[tuple[str, str], set[str]] | None = None

    @classmethod
    def start(
        cls,
        root: str,
        cov: Any,  # noqa: ANN401
        config: pytest.Config,
        seen: set[str],
        sight: Sight | None = None,
    ) -> CoverageReach:
        reach = cls(root, cov)
        reach.session |= seen
        reach.sight = sight if sight is not None else Sight.start(reach)
        reach.sight.reach = reach
        if getattr(getattr(cov, "config", None), "dynamic_context", None):
            reach.why = "coverage's own dynamic contexts are on (dynamic_context)"
        elif hasattr(config, "workerinput"):
            # Switching contexts writes a worker's data file early, and pytest-cov's workers
            # erase the data files they find as they start: another worker's can go mid-run
            # (seen as coverage's "no such table"). No map there: the whole suite runs.
            reach.why = "coverage measures in pytest-xdist's workers (no per-test contexts there)"
        else:
            config.pluginmanager.register(_Contexts(reach), "eyeful_probe_cov_contexts")
        return reach

    def enter(self, label: str) -> None:
        if self.why is not None:
            return
        try:
            self.previous.append(self.cov.switch_context(label))
        except Exception as error:
            self.why = f"coverage could not switch contexts ({error!r:.200})"

    def switch(self, label: str) -> None:
        """From one context of eyeful's to the next, the one to go back to kept."""
        if self.why is not None:
            return
        try:
            self.cov.switch_context(label)
        except Exception as error:
            self.why = f"coverage could not switch contexts ({error!r:.200})"

    def leave(self) -> None:
        if self.why is not None or not self.previous:
            return
        try:
            self.cov.switch_context(self.previous.pop() or "")
        except Exception as error:
            self.why = f"coverage could not switch contexts ({error!r:.200})"

    def harvest(self) -> None:
        """Read coverage's data (while it still measures: pytest-cov stops, saves and combines
        it at the end of the test loop): which files ran in which context."""
        if self.found is not None or self.why is not None:
            return
        found: dict[tuple[str, str], set[str]] = {}
        try:
            data = self.cov.get_data()
            for path in data.measured_files():
                if not self.relative({path}):
                    continue
                labels: set[str] = set()
                for contexts in data.contexts_by_lineno(path).values():
                    labels.update(contexts)
                for label in labels:
                    found.setdefault(self._owner(label), set()).add(path)
        except Exception as error:
            self.why = f"coverage's data could not be read ({error!r:.200})"
            return
        self.found = found

    def _owner(self, label: str) -> tuple[str, str]:
        """Whose a context's data is: ("test", id), ("module", id), or ("", "") the session's
        (what ran outside any test or module's collection, and any context not eyeful's)."""
        static = self.static
        if static and label.startswith(static + "|"):
            label = label[len(static) + 1 :]
        elif static and label == static:
            return ("", "")
        if label.startswith(TEST):
            return ("test", label[len(TEST) :])
        if label.startswith(MODULE):
            return ("module", label[len(MODULE) :])
        for phase in _COV_PHASES:
            if label.endswith(phase) and label[: -len(phase)] in self.tests:
                return ("test", label[: -len(phase)])
        return ("", "")

    def lines(self) -> list[dict[str, Any]]:
        """The ``reached`` lines of each test and test module, from coverage's data."""
        self.harvest()
        if self.why is not None or self.found is None:
            return []
        out = []
        everything = set().union(*self.found.values())
        for test in sorted(self.blind):
            out.append({"t": "reached", "id": test, "files": self.relative(everything)})
        for (kind, name), files in sorted(self.found.items()):
            if kind == "test":
                out.append({"t": "reached", "id": name, "files": self.relative(files)})
            elif kind == "module":
                out.append({"t": "reached", "module": name, "files": self.relative(files)})
        return out

    def stop(self) -> dict[str, Any]:
        self.harvest()
        if self.why is not None or self.found is None:
            why = self.why or "coverage's data was not read"
            return {"t": "reached", "id": None, "files": None, "why": why}
        files = self.session | self.found.get(("", ""), set())
        line: dict[str, Any] = self.with_graph(
            {"t": "reached", "id": None, "files": self.relative(files)}
        )
        return line


class _Contexts:
    """Each test and each test module's collection in a context of coverage's own; coverage's
    data read at the end of the test loop (innermost: before pytest-cov's own end runs)."""

    def __init__(self, reach: CoverageReach) -> None:
        self.reach = reach

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, None]:
        # Each switch costs coverage a write of its data: a test's context lasts until the
        # next test's (nothing of the project runs between two tests) or the loop's end.
        self.reach.tests.add(item.nodeid)
        if item.get_closest_marker("no_cover") or "no_cover" in getattr(item, "fixturenames", ()):
            self.reach.blind.add(item.nodeid)
        if self.reach.in_test:
            self.reach.switch(TEST + item.nodeid)
        else:
            self.reach.enter(TEST + item.nodeid)
            self.reach.in_test = True
        yield

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, Any, None]:
        module = isinstance(collector, pytest.Module)
        if module:
            self.reach.enter(MODULE + collector.nodeid)
        try:
            yield
        finally:
            if module:
                self.reach.leave()

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, None]:
        try:
            yield
        finally:
            if self.reach.in_test:
                self.reach.leave()
                self.reach.in_test = False
            self.reach.harvest()


def place(config: pytest.Config, root: str) -> dict[str, str | None]:
    """Where pytest ran, relative to the map's root (``""``: the root itself; None: outside
    it): its rootdir, where its ids start, and the directory it started in, where the paths
    given to it as arguments start (eyeful/affected.py turns the map's ids into those)."""
    real_root = os.path.realpath(root)

    def relative(path: object) -> str | None:
        if path is None:
            return None
        rel = os.path.relpath(os.path.realpath(str(path)), real_root)
        if rel == os.pardir or rel.startswith(os.pardir + os.sep):
            return None
        return "" if rel == os.curdir else rel.replace(os.sep, "/")

    params = getattr(config, "invocation_params", None)
    rootdir = getattr(config, "rootpath", None) or getattr(config, "rootdir", None)
    return {"rootdir": relative(rootdir), "started": relative(getattr(params, "dir", None))}


def last_lines(reach: Reach, config: pytest.Config, root: str) -> Iterable[dict[str, Any]]:
    """The map's lines at the session's end: each test's and module's from coverage's data
    (none from eyeful's own watch, which wrote them as they ended), then the session's, with
    where pytest ran."""
    more = getattr(reach, "lines", None)
    if callable(more):
        yield from more()
    line = reach.stop()
    if line.get("files") is not None:
        line.update(place(config, root))
    yield line
