"""The judge: one pytest session kept open for many submissions of one assignment (``Judge``).

pytest's start-up, the collection of the hidden checks and the reference are paid once; each
submission then runs the same collected items with its own ``Context``. The session runs in the
judge process only, never where student code runs.
"""

from __future__ import annotations

import importlib.machinery
import queue
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from grader import scorecard
from grader.config import CHECKS_ROOT, AssignmentConfig
from grader.diagnosis.catalogue import CatalogueError, load_catalogue
from grader.diagnosis.diagnose import Diagnoser
from grader.sandbox.warmup import warm_up_judge
from grader.session.hypothesis_setup import quiet_hypothesis
from grader.session.runner import run_item
from grader.session.verdicts import CollectedCheck, Verdict, with_diagnoses
from grader.session.plugin import (IMPORTING, ChecksBroken, Context, GraderPlugin, ReferenceFor, exercise_of,
                                   reference_source, test_name)


class PlainImports:
    """Check modules (and their conftests) imported as written: no assertion rewriting, whoever imports them.

    A check's failure message is the one it wrote for the student. The judge runs pytest with
    ``--assert=plain``, but when this project's own tests grade in-process the outer pytest's
    ``AssertionRewritingHook`` sits in ``sys.meta_path`` and would rewrite every ``test_*.py`` and
    ``conftest.py`` it is asked for, appending its ``assert ... where ...`` explanation to each message.
    Put first in ``sys.meta_path`` (``with PlainImports(root):``), this finder answers for the files under
    ``root`` with Python's own path finder, so no other finder sees them; other modules are left to the rest.
    """

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not spec.origin or not spec.has_location:
            return None
        return spec if Path(spec.origin).resolve().is_relative_to(self.root) else None

    def __enter__(self) -> PlainImports:
        sys.meta_path.insert(0, self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()

    def remove(self) -> None:
        """Out of ``sys.meta_path`` (this one only, by identity: other judges' stay); again is harmless."""
        for i, finder in enumerate(sys.meta_path):
            if finder is self:
                del sys.meta_path[i]
                return


PYTEST_ARGS = (
    "-c", str(CHECKS_ROOT / "pytest.ini"),
    "--rootdir", str(CHECKS_ROOT),
    "--import-mode=importlib",
    "--assert=plain",
    # Per-test machinery the judge does not use (log capture around every phase, warning
    # recorders, gc passes at exit); the checks never read logs, warnings or crash dumps.
    "-p", "no:cacheprovider", "-p", "no:logging", "-p", "no:warnings", "-p", "no:faulthandler",
    "-p", "no:unraisableexception", "-p", "no:threadexception", "-p", "no:randomly",
    "-p", "no:terminal",
    "-p", "no:debugging", "-p", "no:unittest", "-p", "no:legacypath", "-p", "no:tmpdir", "-p", "no:monkeypatch",
    "-p", "no:recwarn", "-p", "no:pastebin", "-p", "no:junitxml", "-p", "no:doctest", "-p", "no:setuponly",
    "-p", "no:setupplan", "-p", "no:stepwise", "-p", "no:subtests", "-p", "no:hypothesispytest",
    "-p", "no:capture",
    # Installed plugins the judge does not use: the card is made from pytest's own reports.
    "-p", "no:pytest_jsonreport", "-p", "no:metadata",
)


class Judge:
    """One pytest session kept open for many submissions of one assignment.

    pytest's start-up, the collection of the hidden checks and the reference
    are paid once; each submission then runs the same collected items with
    its own ``Context``. pytest drives its own loop, so the session lives in
    a thread whose ``pytest_runtestloop`` takes submissions from a queue;
    ``run`` hands one over and waits for its verdicts. Each check's phases are
    driven by the judge through pytest's fixture machinery (``runner``), not
    by pytest's per-test protocol, whose hooks and reports it never read.
    """

    def __init__(self, assignment: AssignmentConfig, cuda: bool, select: str | None = None, *,
                 visible_only: bool = False, reference: ReferenceFor | None = None,
                 collected_for: AssignmentConfig | None = None, exercises: frozenset[str] | None = None) -> None:
        """``exercises``: run only these exercises' checks (the others are deselected, so the card says they did
        not run and they earn nothing); ``visible_only``: deselect every test the assignment does not configure (``grader check``
        hands in the visible part of the config); ``reference``: what each check's ``reference``
        fixture gets instead of the assignment's own (``grader release`` records through it);
        ``collected_for``: the whole assignment when ``assignment`` is its visible part (the shared
        checks are parametrised by it, so the hidden ones are collected, then deselected and counted)."""
        # The judge's tensors are tiny: one thread. More would spin idle OpenMP workers (measured:
        # half the judge's CPU time per grade) and oversubscribe the cores under ``grade-all --jobs``.
        torch.set_num_threads(1)  # now, before any op; warm_up_judge (in the session's thread) says so again
        quiet_hypothesis()  # before pytest imports a check that uses it
        self._broken: ChecksBroken | None = None
        answers: ReferenceFor = lambda check_id: ModuleType("unloadable_reference")  # noqa: E731
        diagnoser = None
        try:
            with IMPORTING:
                answers = reference or reference_source(assignment)
                diagnoser = diagnoser_for(assignment) if reference is None else None
        except CatalogueError as exc:
            self._broken = ChecksBroken(f"the catalogue of known mistakes is broken: {exc}")
        except ChecksBroken as exc:
            self._broken = exc
        except Exception as exc:  # noqa: BLE001 - a broken reference is the grader's failure: every card says so
            source = assignment.reference or assignment.expected
            self._broken = ChecksBroken(f"the {'reference' if assignment.reference else 'recorded values'} "
                                        f"{source.name if source else ''} cannot be loaded: {type(exc).__name__}: {exc}")
        self.plugin = GraderPlugin(answers, assignment, cuda, diagnoser, collected_for)
        self._assignment, self._visible_only, self._exercises = assignment, visible_only, exercises
        self.deselected = 0  # checks left out by ``visible_only``, known once collected
        self._args = [str(assignment.checks_dir), *PYTEST_ARGS] + (["-k", select] if select else [])
        self._inbox: queue.Queue[Context | None] = queue.Queue()
        self._outbox: queue.Queue[list[Verdict] | BaseException] = queue.Queue()
        self._collect_errors: list[str] = []
        self._collected: list[CollectedCheck] | None = None
        self._collected_ready = threading.Event()  # set once collection ends, or the session does
        self._exit: int | None = None
        self._released = False  # ``IMPORTING`` given back (``_collection_over``)
        self._thread = threading.Thread(target=self._session, name="judge", daemon=True)
        if self._broken is None:
            self._thread.start()

    def _session(self) -> None:
        # The conftests load while pytest configures, the check modules while it collects: plain, until then.
        self._plain = PlainImports(CHECKS_ROOT)
        IMPORTING.acquire()  # released as collection ends (``_collection_over``), or below
        try:
            with self._plain:
                self._exit = int(pytest.main(self._args, plugins=[self.plugin, self]))
        finally:
            self._collection_over()
            self._collected_ready.set()  # a session that never collected must not leave ``collected`` waiting

    def _collection_over(self) -> None:
        """Other judges of this process may collect now; once only."""
        if not self._released:
            self._released = True
            IMPORTING.release()

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if self._exercises is not None:
            others = [item for item in items if exercise_of(item) not in self._exercises]
            if others:
                config.hook.pytest_deselected(items=others)
                items[:] = [item for item in items if exercise_of(item) in self._exercises]
        if not self._visible_only:
            return
        keep, drop = [], []
        for item in items:
            configured = self._assignment.check(exercise_of(item), test_name(item)) is not None
            (keep if configured else drop).append(item)
        self.deselected = len(drop)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._plain.remove()  # every check module is imported: other imports go back to the usual finders
        self._collection_over()
        if not self._collect_errors:
            self._collected = [CollectedCheck(test_name(item), item.nodeid.rsplit("::", 1)[-1], exercise_of(item))
                               for item in session.items]
        self._collected_ready.set()

    def collected(self, timeout: float = 300.0) -> list[CollectedCheck] | None:
        """The checks a grading runs, one per parameter, in run order; None when they could not be collected.

        A file that cannot be run at all gets these rows too (``scoring.problem_results``), so its
        card lists the same check ids and points possible as any other card of the assignment.
        """
        if self._broken is not None:
            return None
        self._collected_ready.wait(timeout)
        return None if self._collected is None else list(self._collected)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._collect_errors.append(str(report.longrepr)[-500:])

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        warm_up_judge()  # while the caller waits for the worker server, not during the first submission
        scorecard.compile_validator()  # the card's schema, needed once the first card is written
        while (context := self._inbox.get()) is not None:
            try:
                if self._collect_errors:
                    raise ChecksBroken(f"the hidden checks could not be collected: {self._collect_errors[0]}")
                self._outbox.put(self._run_items(session, context))
            except Exception as exc:  # noqa: BLE001 - handed to the caller, who turns it into an error card
                self._outbox.put(exc)
        return True

    def _run_items(self, session: pytest.Session, context: Context) -> list[Verdict]:
        self.plugin.context = context
        try:
            items = session.items
            outcomes = []
            for i, item in enumerate(items):
                # The next item is items[0] after the last: session-scoped fixtures stay warm.
                outcomes.append(self._run_item(item, items[i + 1] if i + 1 < len(items) else items[0], context))
            return with_diagnoses(outcomes, self.plugin.diagnoser, context.submission.source)
        finally:
            self.plugin.context = None

    def _run_item(self, item: pytest.Item, nextitem: pytest.Item, context: Context) -> Verdict:
        """One check, its phases driven here rather than by pytest's per-test protocol (``runner``)."""
        self.plugin.begin(item)
        before = context.worker.incidents
        ran = run_item(item, nextitem, owner=self.plugin)
        # A pass during which the worker crashed or timed out does not count: fail closed.
        return self.plugin.verdict(item, ran, incident=context.worker.incidents != before)

    def run(self, context: Context) -> list[Verdict]:
        """Run every hidden check against ``context``; one Verdict per test."""
        if self._broken is not None:
            raise self._broken
        if not self._thread.is_alive():
            raise self._dead()
        self._inbox.put(context)
        while True:
            try:
                result = self._outbox.get(timeout=0.5)
                break
            except queue.Empty:
                if not self._thread.is_alive() and self._outbox.empty():
                    raise self._dead() from None
        if isinstance(result, BaseException):
            raise result
        return result

    def _dead(self) -> ChecksBroken:
        detail = self._collect_errors[0] if self._collect_errors else "see the grader's stderr"
        return ChecksBroken(f"the hidden checks could not run (pytest exit {self._exit}): {detail}")

    def close(self, timeout: float = 30.0) -> None:
        """End the session: session-scoped fixtures are torn down by pytest itself."""
        if self._thread.is_alive():
            self._inbox.put(None)
            self._thread.join(timeout)


def diagnoser_for(assignment: AssignmentConfig) -> Diagnoser | None:
    """Diagnosis needs the reference (the operators' source) and the catalogue: a course judge has both, a
    student kit neither."""
    if assignment.reference is None:
        return None
    return Diagnoser(assignment.reference, load_catalogue(assignment.id), operators=True, assignment=assignment.id)


def cuda_available() -> bool:
    """Asked in the judge only: the worker server must never touch CUDA before forking."""
    return bool(torch.cuda.is_available())
