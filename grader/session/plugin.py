"""The pytest plugin the hidden checks run under: the fixtures they ask for (``student``, ``reference``,
``submission``, ``hidden_seed``...) from the submission being judged (``Context``), and a verdict
recorded for every test from pytest's own reports."""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import pytest

from grader.checks.nonfinite import prune_causes
from grader.checks.plan import ASSIGNMENT
from grader.config import AssignmentConfig
from grader.diagnosis.diagnose import Diagnoser
from grader.sandbox import returned
from grader.sandbox.errors import StudentError
from grader.sandbox.proxy import StudentProxy
from grader.submission import Submission
from grader.session.tape import Tape
from grader.session.runner import Ran
from grader.session.verdicts import NO_CUDA_MESSAGE, Verdict, check_verdict, clip, unjudged_message


class ChecksBroken(Exception):
    """The hidden checks themselves could not be collected or run: a grader bug."""


# Held while a judge imports by hand: its reference and catalogue (``load_reference``, ``Judge.__init__``),
# then its check modules and conftests while pytest configures and collects (pytest's importlib mode), all
# outside Python's import lock. Two judges of one process made back to back did both at once: a half-made
# module seen by the other, or CPython's own "SystemError: bad argument to internal function" while the
# reference's classes were made (both seen in the suite). Re-entrant: the judge's constructor holds it
# around ``load_reference``, which takes it too (the figures load the reference on their own).
IMPORTING = threading.RLock()


def load_reference(path: Path) -> ModuleType:
    """Import the reference solution in the judge (trusted code only)."""
    name = f"_reference_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ChecksBroken(f"cannot load the reference {path}")
    module = importlib.util.module_from_spec(spec)
    with IMPORTING:
        spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Context:
    """The submission being judged right now: what the fixtures hand to the checks."""

    student: StudentProxy
    worker: Any  # SubmissionWorker: its ``incidents`` count crashes and timeouts
    submission: Submission
    seed: int = 0  # this student's hidden inputs (``grader.seeds``); 0: the inputs written in the checks


@dataclass(frozen=True)
class CheckFacts:
    """One collected check as its verdict names it; fixed for the judge's life."""

    test: str  # function name, the key in assignments.yaml
    check_id: str  # function name plus parameters
    exercise: str
    key: str  # ``check_key``: where it was collected from, what its RNG states derive from
    visible: bool  # students see it: its inputs are the same for all and may be quoted
    gpu_only: bool  # configured ``requires_cuda``: the only check that may stay skipped, on a machine without CUDA


ReferenceFor = Callable[[str], Any]  # check id -> what its ``reference`` fixture hands it


def reference_source(assignment: AssignmentConfig) -> ReferenceFor:
    """Where the checks' expected values come from: the reference module or, in a student kit,
    the values the release recorded (``grader.session.tape``)."""
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
                 diagnoser: Diagnoser | None = None, collected_for: AssignmentConfig | None = None) -> None:
        """``collected_for``: the assignment whose exercises the shared checks are parametrised by
        (``grader.checks.plan``): the whole of it, hidden checks included, where ``assignment`` is only
        its visible part; ``assignment`` when not given."""
        self._reference = reference
        self._assignment = assignment
        self._collected_for = collected_for or assignment
        self._cuda = cuda
        self.diagnoser = diagnoser
        self.context: Context | None = None
        self._known: dict[str, CheckFacts] = {}
        self._checking: str | None = None  # the node id of the check running now (``begin``)

    def _now(self) -> Context:
        if self.context is None:
            raise ChecksBroken("a check ran with no submission to judge")
        return self.context

    def pytest_configure(self, config: pytest.Config) -> None:
        config.stash[ASSIGNMENT] = self._collected_for  # read at collection by grader.checks.plan

    @pytest.fixture
    def student(self) -> StudentProxy:
        return self._now().student

    @pytest.fixture
    def reference(self) -> Any:
        # The check's id from ``begin``, not from pytest's ``request``: each fixture asking for ``request``
        # makes pytest build a fixture definition and inspect a signature, per check and submission.
        if self._checking is None:
            raise ChecksBroken("a check asked for the reference outside a grading")
        return self._reference(self._checking)

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

    def _facts(self, item: pytest.Item) -> CheckFacts:
        """What a check's verdict needs to know about it, read from its markers and the config once per judge."""
        facts = self._known.get(item.nodeid)
        if facts is None:
            exercise, test = exercise_of(item), test_name(item)
            cfg = self._collected_for.check(exercise, test)
            own = self._assignment.check(exercise, test)
            facts = CheckFacts(test, item.nodeid.rsplit("::", 1)[-1], exercise, check_key(item),
                               visible=cfg is None or cfg.visibility == "visible",
                               gpu_only=own is not None and own.requires_cuda)
            self._known[item.nodeid] = facts
        return facts

    def begin(self, item: pytest.Item) -> None:
        """As each check starts: a failed check's diagnosis replays only its own requests, and its RNG states are
        its own (``rng``)."""
        self._checking = item.nodeid
        self._now().student.start_recording(self._facts(item).key, self._salt(item))

    def _salt(self, item: pytest.Item) -> int:
        """The student's seed for a hidden check's RNG states; 0 for a visible one, whose answers must be the
        same in the student kit (which has no seed) as in the course's grader."""
        return self.context.seed if self.context is not None and not self._facts(item).visible else 0

    def verdict(self, item: pytest.Item, ran: Ran, incident: bool) -> Verdict:
        """The check's verdict from how it ended (``runner.run_item``); ``incident``: the worker crashed or timed
        out inside it, so a pass does not count."""
        facts = self._facts(item)
        error = returned.explained(ran.error, self.context.student.malformed() if self.context is not None else [])
        verdict = self._judged(facts, check_verdict(error, incident))
        requests: tuple = ()
        diagnosable, visible = False, True
        if self.diagnoser is not None and self.context is not None:
            requests = tuple(self.context.student.recorded())  # settling the card may replay them
            diagnosable = verdict["status"] in ("failed", "error") and isinstance(error, (AssertionError, StudentError))
            visible = facts.visible  # only a visible check's inputs may be quoted as evidence
        # A NaN cause that quotes code is named only where the student's code holds it (``nonfinite.prune_causes``).
        tree = self.context.submission.tree if self.context is not None else None
        message = prune_causes(verdict["message"], tree, facts.exercise)
        return Verdict(test=facts.test, check_id=facts.check_id, exercise=facts.exercise, status=verdict["status"],
                       message=message, duration_s=round(ran.duration, 6), requests=requests,
                       diagnosable=diagnosable, visible=visible)

    def _judged(self, facts: CheckFacts, verdict: dict[str, Any]) -> dict[str, Any]:
        """Only a GPU-only check on a machine without CUDA may stay ``skipped``; any other skip fails.

        A check that skips could not be judged (NaN in the student's output, no row that is a
        distribution...): that is about this submission, so it must not leave the total the way a
        skip with ``skipped_points: drop`` would. It fails with the reason and keeps its points
        possible, so every card of an assignment has the same total.
        """
        if verdict["status"] != "skipped":
            return verdict
        if facts.gpu_only and not self._cuda:
            return {"status": "skipped", "message": NO_CUDA_MESSAGE}
        return {"status": "failed", "message": clip(unjudged_message(verdict["message"]))}


def exercise_of(item: pytest.Item) -> str:
    marker = item.get_closest_marker("exercise")
    return str(marker.args[0]) if marker else ""


def check_key(item: pytest.Item) -> str:
    """A check's id where it was collected from (``test_modules.py::test_x[SelfAttentionHead]``): the same in
    the course's grader and in a student kit, whatever folder each runs from."""
    return item.nodeid.rsplit("/", 1)[-1]


def test_name(item: pytest.Item) -> str:
    return getattr(item, "originalname", None) or item.name.split("[", 1)[0]
