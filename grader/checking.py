"""Stage 3: run the hidden checks (pytest) against the proxy.

The checks live in ``grader/checks/<assignment>/`` and are ordinary pytest
tests. This module runs them in the judge process with a small plugin that
provides the fixtures (``student``, ``reference``, ``submission``...) and
records, for every test, a verdict in the lesson's words: which of the
typed sandbox errors ended it, or the assertion message written for
students. The judge keeps one pytest session open for many submissions;
``scoring`` turns the outcomes into points.
"""

from __future__ import annotations

import importlib.util
import queue
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import pytest
import torch

from grader import words
from grader.config import CHECKS_ROOT, AssignmentConfig
from grader.diagnosis.catalogue import CatalogueError, Mistake, load_catalogue
from grader.diagnosis.diagnose import CheckEvidence, Diagnoser, diagnosis
from grader.sandbox.errors import NotAttempted, StudentError, StudentProblem, StudentTimeout
from grader.sandbox.proxy import StudentProxy
from grader.scorecard import Diagnosis
from grader.submission import Submission
from grader.tape import Tape, TapeMiss
from grader.warmup import warm_up_judge

MAX_MESSAGE = 1500
# Where hypothesis keeps its files (example database, constants and charmap caches): a path that can
# never be a folder, so every write fails quietly (hypothesis catches it) and nothing is read back.
HYPOTHESIS_HOME = Path("/dev/null/grader-hypothesis")


def quiet_hypothesis() -> None:
    """Make the property checks (hypothesis) write nothing: ``grader grade`` leaves only its outputs.

    The ``grader`` settings profile has ``database=None`` (no example database), and hypothesis's
    other caches (the constants it reads from a check's source) point at ``HYPOTHESIS_HOME``, where
    nothing can be created; otherwise both land in ``.hypothesis/`` in whatever folder grading ran
    from, and a cache a student left there would be read back. A kit without hypothesis (its
    checks do not use it) has nothing to configure.
    """
    try:
        from hypothesis import settings
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:
        return
    settings.register_profile("grader", database=None)
    settings.load_profile("grader")
    set_hypothesis_home_dir(HYPOTHESIS_HOME)


class ChecksBroken(Exception):
    """The hidden checks themselves could not be collected or run: a grader bug."""


@dataclass(frozen=True)
class Outcome:
    """What happened in one hidden check, before points are attached."""

    test: str  # function name, the key in assignments.yaml
    check_id: str  # function name plus parameters
    exercise: str
    status: str
    message: str
    duration_s: float
    diagnosis: Diagnosis | None = None
    diagnosis_text: str = ""  # the sentence naming it, said once per exercise on the card (``scoring.exercise_diagnoses``)
    matches: tuple[Mistake, ...] = ()  # catalogued mistakes its answers match, before they are settled per card
    requests: tuple[tuple[dict, dict], ...] = ()  # what it asked of the student, kept until the card is settled


def load_reference(path: Path) -> ModuleType:
    """Import the reference solution in the judge (trusted code only)."""
    name = f"_reference_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ChecksBroken(f"cannot load the reference {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Context:
    """The submission being judged right now: what the fixtures hand to the checks."""

    student: StudentProxy
    worker: Any  # SubmissionWorker: its ``incidents`` count crashes and timeouts
    submission: Submission
    seed: int = 0  # this student's hidden inputs (``grader.seeds``); 0: the inputs written in the checks


ReferenceFor = Callable[[str], Any]  # check id -> what its ``reference`` fixture hands it


def reference_source(assignment: AssignmentConfig) -> ReferenceFor:
    """Where the checks' expected values come from: the reference module or, in a student kit,
    the values the release recorded (``grader.tape``)."""
    if assignment.reference is None:
        if assignment.expected is None:
            raise ChecksBroken(f"assignment {assignment.id!r} has neither a reference nor recorded expected values")
        return Tape.load(assignment.expected).for_check
    module = load_reference(assignment.reference)
    return lambda check_id: module


class GraderPlugin:
    """Fixtures for the checks and a verdict for every test.

    The reference, the assignment and the CUDA answer stay for the judge's
    life; ``context`` is swapped for every submission.
    """

    def __init__(self, reference: ReferenceFor, assignment: AssignmentConfig, cuda: bool,
                 diagnoser: Diagnoser | None = None) -> None:
        self._reference = reference
        self._assignment = assignment
        self._cuda = cuda
        self.diagnoser = diagnoser
        self.context: Context | None = None

    def _now(self) -> Context:
        if self.context is None:
            raise ChecksBroken("a check ran with no submission to judge")
        return self.context

    @pytest.fixture
    def student(self) -> StudentProxy:
        return self._now().student

    @pytest.fixture
    def reference(self, request: pytest.FixtureRequest) -> Any:
        return self._reference(request.node.nodeid)

    @pytest.fixture
    def submission(self) -> Submission:
        return self._now().submission

    @pytest.fixture
    def hidden_seed(self) -> int:
        """The seed of this submission's hidden inputs (``grader.seeds``): only hidden checks read it,
        so visible checks (and the kit's recorded answers) keep the same inputs for everyone."""
        return self._now().seed

    @pytest.fixture
    def assignment(self) -> AssignmentConfig:
        return self._assignment

    @pytest.fixture
    def cuda_available(self) -> bool:
        return self._cuda

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> None:
        item.user_properties.clear()  # the same item runs once per submission
        if self.context is not None:
            self.context.student.start_recording()  # a failed check's diagnosis replays only its own requests

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item):  # noqa: ANN201 - pytest hookwrapper
        worker = self._now().worker
        before = worker.incidents
        outcome = yield
        if outcome.excinfo is None and worker.incidents != before:
            # The check passed, but the worker crashed or timed out inside it: fail closed.
            item.user_properties.append(("incident", True))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo):  # noqa: ANN201
        outcome = yield
        report = outcome.get_result()
        if report.when == "setup":
            marker = item.get_closest_marker("exercise")
            item.user_properties.append(("exercise", marker.args[0] if marker else ""))
            if report.skipped:
                item.user_properties.append(("verdict", self._judged(item, {"status": "skipped",
                                                                            "message": _skip_reason(report)})))
        if report.when != "call":
            return
        verdict = self._judged(item, _verdict(report, call, dict(item.user_properties)))
        exc = call.excinfo.value if call.excinfo else None
        if verdict["status"] in ("failed", "error") and isinstance(exc, (AssertionError, StudentError)):
            verdict["matches"] = self._matches(dict(item.user_properties).get("exercise", ""))
        if self.diagnoser is not None and self.context is not None:
            verdict["requests"] = tuple(self.context.student.recorded())  # settling the card may replay them
        item.user_properties.append(("verdict", verdict))

    def _judged(self, item: pytest.Item, verdict: dict[str, Any]) -> dict[str, Any]:
        """Only a GPU-only check on a machine without CUDA may stay ``skipped``; any other skip fails.

        A check that skips could not be judged (NaN in the student's output, no row that is a
        distribution...): that is about this submission, so it must not leave the total the way a
        skip with ``skipped_points: drop`` would. It fails with the reason and keeps its points
        possible, so every card of an assignment has the same total.
        """
        if verdict["status"] != "skipped":
            return verdict
        cfg = self._assignment.check(_exercise_of(item), _test_name(item))
        if cfg is not None and cfg.requires_cuda and not self._cuda:
            return {"status": "skipped", "message": NO_CUDA_MESSAGE}
        return {"status": "failed", "message": clip(unjudged_message(verdict["message"]))}

    def _matches(self, exercise: str) -> tuple[Mistake, ...]:
        """The known mistakes this failed check's answers match (``grader.diagnosis``); settled per card."""
        if self.diagnoser is None or self.context is None:
            return ()
        return tuple(self.diagnoser.matching(exercise, self.context.student.recorded()))


NO_CUDA_MESSAGE = "no CUDA device on this machine: GPU-only check not run"
UNJUDGED_PREFIX = "this check could not be judged, so it does not count as passed: "


def unjudged_message(reason: str) -> str:
    """A skip's reason as a failure: says that the property could not be judged, and why."""
    return reason if reason.startswith(UNJUDGED_PREFIX) else UNJUDGED_PREFIX + reason


def _exercise_of(item: pytest.Item) -> str:
    marker = item.get_closest_marker("exercise")
    return str(marker.args[0]) if marker else ""


def _test_name(item: pytest.Item) -> str:
    return getattr(item, "originalname", None) or item.name.split("[", 1)[0]


@dataclass(frozen=True)
class CollectedCheck:
    """One collected hidden check: a row of every card of the assignment, whatever the file."""

    test: str  # function name, the key in assignments.yaml
    check_id: str  # function name plus parameters
    exercise: str


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return "skipped"


def _verdict(report: pytest.TestReport, call: pytest.CallInfo, props: dict) -> dict[str, Any]:
    if report.skipped:
        return {"status": "skipped", "message": _skip_reason(report)}
    if report.passed:
        if props.get("incident"):
            return {"status": "error", "message": "the worker crashed or timed out during this check"}
        return {"status": "passed", "message": ""}
    exc = call.excinfo.value if call.excinfo else None
    if isinstance(exc, NotAttempted):
        return {"status": "failed", "message": "not attempted"}
    if isinstance(exc, StudentTimeout):
        return {"status": "timeout", "message": clip(exc.student_message())}
    if isinstance(exc, StudentProblem):
        return {"status": exc.status, "message": clip(exc.student_message())}
    if isinstance(exc, AssertionError):
        return {"status": "failed", "message": clip(str(exc).strip() or "the check failed")}
    if isinstance(exc, TapeMiss):
        return {"status": "error", "message": clip(f"the grader could not run this check: {exc}")}
    # A bug in a check itself, not in the submission: no points, and say so.
    return {"status": "error", "message": clip(f"internal check error ({type(exc).__name__}: {exc}); please report this")}


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """A message cut to what a card keeps."""
    return words.clip(text, max(limit, 200))


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
    ``run`` hands one over and waits for its outcomes, which the judge
    records from pytest's own reports (``pytest_runtest_logreport``).
    """

    def __init__(self, assignment: AssignmentConfig, cuda: bool, select: str | None = None, *,
                 visible_only: bool = False, reference: ReferenceFor | None = None) -> None:
        """``visible_only``: deselect every test the assignment does not configure (``grader check``
        hands in the visible part of the config); ``reference``: what each check's ``reference``
        fixture gets instead of the assignment's own (``grader release`` records through it)."""
        # The judge's tensors are tiny: one thread. More would spin idle OpenMP workers (measured:
        # half the judge's CPU time per grade) and oversubscribe the cores under ``grade-all --jobs``.
        torch.set_num_threads(1)  # now, before any op; warm_up_judge (in the session's thread) says so again
        quiet_hypothesis()  # before pytest imports a check that uses it
        self._broken: ChecksBroken | None = None
        answers: ReferenceFor = lambda check_id: ModuleType("unloadable_reference")  # noqa: E731
        diagnoser = None
        try:
            answers = reference or reference_source(assignment)
            diagnoser = _diagnoser(assignment) if reference is None else None
        except CatalogueError as exc:
            self._broken = ChecksBroken(f"the catalogue of known mistakes is broken: {exc}")
        except ChecksBroken as exc:
            self._broken = exc
        except Exception as exc:  # noqa: BLE001 - a broken reference is the grader's failure: every card says so
            source = assignment.reference or assignment.expected
            self._broken = ChecksBroken(f"the {'reference' if assignment.reference else 'recorded values'} "
                                        f"{source.name if source else ''} cannot be loaded: {type(exc).__name__}: {exc}")
        self.plugin = GraderPlugin(answers, assignment, cuda, diagnoser)
        self._assignment, self._visible_only = assignment, visible_only
        self.deselected = 0  # checks left out by ``visible_only``, known once collected
        self._args = [str(assignment.checks_dir), *PYTEST_ARGS] + (["-k", select] if select else [])
        self._inbox: queue.Queue[Context | None] = queue.Queue()
        self._outbox: queue.Queue[list[Outcome] | BaseException] = queue.Queue()
        self._collect_errors: list[str] = []
        self._durations: dict[str, float] = {}
        self._outcomes: list[Outcome] = []
        self._collected: list[CollectedCheck] | None = None
        self._collected_ready = threading.Event()  # set once collection ends, or the session does
        self._exit: int | None = None
        self._thread = threading.Thread(target=self._session, name="judge", daemon=True)
        if self._broken is None:
            self._thread.start()

    def _session(self) -> None:
        try:
            self._exit = int(pytest.main(self._args, plugins=[self.plugin, self]))
        finally:
            self._collected_ready.set()  # a session that never collected must not leave ``collected`` waiting

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        # Verdicts come from the exception objects: formatting tracebacks would only cost time.
        # (``--tb`` belongs to the terminal reporter, which the judge does not load.)
        config.option.tbstyle = "no"

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if not self._visible_only:
            return
        keep, drop = [], []
        for item in items:
            configured = self._assignment.check(_exercise_of(item), _test_name(item)) is not None
            (keep if configured else drop).append(item)
        self.deselected = len(drop)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self._collect_errors:
            self._collected = [CollectedCheck(_test_name(item), item.nodeid.rsplit("::", 1)[-1], _exercise_of(item))
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
        while (context := self._inbox.get()) is not None:
            try:
                if self._collect_errors:
                    raise ChecksBroken(f"the hidden checks could not be collected: {self._collect_errors[0]}")
                self._outbox.put(self._run_items(session, context))
            except Exception as exc:  # noqa: BLE001 - handed to the caller, who turns it into an error card
                self._outbox.put(exc)
        return True

    def _run_items(self, session: pytest.Session, context: Context) -> list[Outcome]:
        self.plugin.context, self._durations, self._outcomes = context, {}, []
        try:
            items = session.items
            for i, item in enumerate(items):
                # The next item is items[0] after the last: session-scoped fixtures stay warm.
                nextitem = items[i + 1] if i + 1 < len(items) else items[0]
                item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            return _with_diagnoses(self._outcomes, self.plugin.diagnoser)
        finally:
            self.plugin.context = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._durations[report.nodeid] = self._durations.get(report.nodeid, 0.0) + report.duration
        if report.when == "teardown":
            self._outcomes.append(_outcome(report.nodeid, dict(report.user_properties),
                                           self._durations.pop(report.nodeid)))

    def run(self, context: Context) -> list[Outcome]:
        """Run every hidden check against ``context``; one Outcome per test."""
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


def _diagnoser(assignment: AssignmentConfig) -> Diagnoser | None:
    """Diagnosis needs the reference and the catalogue: a course judge has both, a student kit neither."""
    if assignment.reference is None:
        return None
    mistakes = load_catalogue(assignment.id)
    return Diagnoser(assignment.reference, mistakes) if mistakes else None


def _outcome(nodeid: str, props: dict[str, Any], duration: float) -> Outcome:
    check_id = nodeid.rsplit("::", 1)[-1]
    verdict = props.get("verdict") or {"status": "error", "message": "the check recorded no result"}
    return Outcome(
        test=check_id.split("[", 1)[0],
        check_id=check_id,
        exercise=str(props.get("exercise", "")),
        status=str(verdict["status"]),
        message=str(verdict["message"]),
        duration_s=round(duration, 6),
        matches=tuple(verdict.get("matches", ())),
        requests=tuple(verdict.get("requests", ())),
    )


def _with_diagnoses(outcomes: list[Outcome], diagnoser: Diagnoser | None) -> list[Outcome]:
    """Settle the matched mistakes across the card, then name them on each failed check.

    The sentence is kept beside the message, not appended to it: a mistake that fails 14 checks
    is explained once, above its exercise's failed checks (``ExerciseDiagnosis``).
    """
    if diagnoser is None:
        return outcomes
    settled = diagnoser.settle([CheckEvidence(o.exercise, o.status, o.matches, o.requests) for o in outcomes])
    result = []
    for outcome, found in zip(outcomes, settled):
        named = diagnosis(found)
        if named is None:
            result.append(replace(outcome, matches=(), requests=()))
            continue
        result.append(replace(outcome, diagnosis=named[0], diagnosis_text=named[1], matches=(), requests=()))
    return result


def cuda_available() -> bool:
    """Asked in the judge only: the worker server must never touch CUDA before forking."""
    return bool(torch.cuda.is_available())


