"""The grader as functions: ``grade(path, assignment) -> Scorecard``.

The pipeline, one stage per module: ``submission`` (read, AST facts) ->
``sandbox`` (warm server, one sandboxed child per submission) -> ``checking``
(hidden pytest checks through the proxy) -> ``figures`` (the HTML report's
pictures, public inputs only) -> ``scoring`` (points, fail closed) ->
``scorecard`` / ``export`` (JSON, text, HTML...). The CLI is a thin layer
over this module.
"""

from __future__ import annotations

import datetime as dt
import platform
import tempfile
import time
import traceback
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import torch

from grader import figures, scoring, seeds
from grader import session
from grader.config import DEFAULT_CONFIG, AssignmentConfig, ConfigError, load_config
from grader.sandbox import layers, returned
from grader.sandbox.client import SubmissionWorker, WorkerServer
from grader.sandbox.launcher import start_server
from grader.sandbox.errors import LoadFailed
from grader.sandbox.proxy import StudentProxy
from grader.scorecard import Scorecard
from grader.submission import Submission, load_submission
from grader.version import __version__


class StrictModeRefused(Exception):
    """``--strict`` asked for isolation layers this machine cannot provide."""


class SecretsExposed(Exception):
    """The hidden checks or the reference lie where the sandbox lets submissions read."""


def assert_secrets_unreadable(assignment: AssignmentConfig, config_path: Path) -> None:
    """Refuse to grade if a secret sits inside a tree the child may read.

    The child may read the Python installation (site-packages included), so a
    non-editable install that copied ``grader/checks`` there would expose them.
    """
    if assignment.is_kit:
        return  # a student kit holds only what students may see: the visible checks and their values
    readable = [Path(p).resolve() for p in layers.python_readable_paths()]
    for secret in (assignment.checks_dir, assignment.reference, config_path):
        path = Path(secret).resolve()
        if any(path == r or r in path.parents for r in readable):
            raise SecretsExposed(
                f"{path} is readable from the sandbox (it lies under the Python installation); "
                "install the grader from the course repository with `pip install -e .`"
            )


class Grader:
    """What stays warm across the submissions of one assignment.

    The validated config, the worker server (``import torch`` once, a fresh
    forked child per submission) and the judge (one pytest session with the
    hidden checks collected and the reference loaded) are paid for once;
    ``grade`` then costs only the submission's own checks. ``grader grade``
    uses it for one file, ``grader grade-all`` for a whole class: one grading
    path.
    """

    def __init__(self, assignment_id: str, *, config_path: Path = DEFAULT_CONFIG,
                 server: WorkerServer | None = None, strict: bool = False, select: str | None = None,
                 visible_only: bool = False, reference: session.ReferenceFor | None = None,
                 course_secret_file: Path | None = None, exercises: frozenset[str] | None = None) -> None:
        """Raises ConfigError or SecretsExposed (the CLI's exit 2) before anything starts.

        ``visible_only``: run only the checks students may see (``grader check``);
        ``reference``: what each check's ``reference`` fixture gets instead of the assignment's
        reference (``grader release`` passes a ``tape.Recorder``'s ``for_check``);
        ``course_secret_file``: the course secret that gives each student hidden inputs of their own
        (``grader.seeds``; else ``$GRADER_COURSE_SECRET`` or the config's ``course_secret_file:``);
        ``exercises``: judge only these exercises' checks, the others reported as not run (no points): a test
        that studies how one exercise fails pays for that exercise's checks and its callers' only.
        """
        assignment = load_config(config_path).assignment(assignment_id)
        try:
            self._secret = None if visible_only else seeds.course_secret(course_secret_file, config_path)
        except seeds.SecretError as exc:
            raise ConfigError(str(exc)) from None
        self._visible_only = visible_only
        if assignment.is_kit and not visible_only:
            raise ConfigError("this is the student kit: it has only the visible checks, so it cannot grade; "
                              "run `grader check FILE` (your work is graded with every check when you submit it)")
        self.assignment = assignment.visible_part() if visible_only else assignment
        assert_secrets_unreadable(self.assignment, config_path)
        self._own_server = server is None
        self.server = server if server is not None else start_server(fork=False)  # before any secret is loaded
        self.strict = strict
        self.cuda = session.cuda_available()
        # Now, not at the first grade: collecting the checks overlaps the server's warm-up.
        self._judge = session.Judge(self.assignment, self.cuda, select, visible_only=visible_only, reference=reference,
                                    collected_for=assignment, exercises=exercises)
        self._reference: ModuleType | None = None  # the figures' own copy, loaded at the first grade that draws

    def grade(self, path: Path, student: str | None = None, *, seed: int | None = None) -> Scorecard:
        """Grade one submission file. Raises only for what the CLI reports as exit 2:
        UnreadableSubmission (its SubmissionTooLarge included: code over the size limit, which is
        reported with its reason, never graded 0) and StrictModeRefused; every other failure becomes a
        card with ``grader_error``.

        ``student``: whose file it is (default: the file's stem); with a course secret their hidden
        checks get inputs of their own (``grader.seeds``). ``seed``: that seed itself (benches, tests).
        """
        submission = load_submission(Path(path), flagged_calls=self.assignment.flagged_calls)
        return self._grade(submission, self.input_seed(student or Path(path).stem) if seed is None else seed)

    def input_seed(self, student: str | None) -> int:
        """The seed of ``student``'s hidden inputs: 0 without a course secret (or in the student kit)."""
        return seeds.student_seed(self._secret, self.assignment.id, student)

    def _grade(self, submission: Submission, seed: int = seeds.NO_SECRET) -> Scorecard:
        assignment = self.assignment
        started = time.monotonic()
        graded_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        env = environment(self.cuda)
        if not self._visible_only:  # the student kit runs no hidden check: nothing to say
            env.update(seeds.environment_entries(seed, self._secret))
        if submission.problem:
            checks = scoring.problem_results(assignment, scoring.FILE_PROBLEM_REFERENCE, self.cuda,
                                             collected=self._judge.collected())
            card = scoring.build_scorecard(assignment, submission, checks, env, graded_at=graded_at,
                                           duration_s=time.monotonic() - started)
            return replace(card, problem=f"your file could not be graded: {submission.problem}")
        worker = None
        try:
            with tempfile.TemporaryDirectory(prefix="grader-scratch-") as scratch:
                worker = SubmissionWorker(self.server, submission.source, submission.filename, assignment.limits,
                                          Path(scratch), where=submission.where, units=submission.units)
                worker.ensure_started()
                env["isolation"] = dict(sorted(worker.layers.items()))
                if (kind := self.server.worker_kind()) is not None:  # a spawned child: off Linux, says why
                    env["worker"] = kind
                _enforce_strict(self.strict, worker.layers)
                student = StudentProxy(worker, {ex.name: ex.returns for ex in assignment.exercises}, self._contract())
                outcomes = self._judge.run(session.Context(student, worker, submission, seed))
                pictures = self._figures(student, worker)
                worker.close()  # before reading the output, so all of it is in
                checks = scoring.check_results(outcomes, assignment)
                problem = _load_problem(worker)
                checks = scoring.file_problem_results(checks, problem) if problem else checks
                problem = problem or scoring.not_attempted_problem(checks)
                card = scoring.build_scorecard(assignment, submission, checks, env, output=worker.output_text(),
                                               graded_at=graded_at, duration_s=time.monotonic() - started,
                                               figures=pictures)
                return replace(card, problem=problem, diagnoses=scoring.exercise_diagnoses(checks, outcomes, assignment))
        except StrictModeRefused:
            raise
        except Exception as exc:  # noqa: BLE001 - the grader's own crash still yields a (non-grade) card
            return error_card(assignment, submission, exc, env, self.cuda, graded_at, time.monotonic() - started,
                              collected=self._judge.collected(timeout=0.0))
        finally:
            if worker is not None:
                worker.close()

    def _contract(self) -> Callable[[str, list, dict], Any] | None:
        """The reference's output shapes for given arguments, which a caller's error compares its callees' returns
        with (``returned.contract_outputs``); None in a student kit, which has no reference."""
        if self.assignment.reference is None:
            return None
        try:
            if self._reference is None:
                self._reference = session.load_reference(self.assignment.reference)
        except Exception:  # noqa: BLE001 - a reference that cannot load is the judge's to report, on every card;
            return None  # without it no callee is compared, and the card says why the grade is not one
        return returned.contract_outputs(self._reference)

    def _figures(self, student: StudentProxy, worker: SubmissionWorker) -> dict[str, Any] | None:
        """The HTML report's pictures (``grader.figures``), after the checks: they never change a score.

        None in a student kit (no reference to draw beside the student's), and when the
        worker could not load the file, crashed or timed out: what it would draw is not to be trusted
        and every further call would cost a restart or another wait.
        """
        if self.assignment.reference is None or worker.load_error is not None or worker.incidents:
            return None
        if self._reference is None:
            self._reference = session.load_reference(self.assignment.reference)
        return figures.collect(student, self._reference, self.assignment.id)

    @property
    def hidden_checks(self) -> int:
        """How many checks this grader leaves out (``visible_only``), known after the first grade;
        in a student kit, the count the release recorded."""
        return self.assignment.hidden_checks + self._judge.deselected

    def close(self, wait: bool = True) -> None:
        """End the judge's session (``wait=False``: do not wait for a check still running) and the server."""
        self._judge.close(timeout=30.0 if wait else 1.0)
        if self._own_server:
            self.server.close()

    def __enter__(self) -> Grader:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(wait=exc_type is None)  # leaving on an error (a Ctrl-C mid-grade): no wait for a running check


def grade(path: Path, assignment_id: str, *, config_path: Path = DEFAULT_CONFIG,
          server: WorkerServer | None = None, strict: bool = False, student: str | None = None) -> Scorecard:
    """Grade one submission file with a grader of its own (see ``Grader.grade``).

    Raises ConfigError, UnreadableSubmission, SecretsExposed or StrictModeRefused
    (the CLI's exit 2).
    """
    with Grader(assignment_id, config_path=config_path, server=server, strict=strict) as grader:
        return grader.grade(path, student)


def error_card(assignment: AssignmentConfig, submission: Submission, exc: BaseException, env: dict[str, Any],
               cuda: bool, graded_at: str = "", duration_s: float = 0.0,
               collected: list[session.CollectedCheck] | None = None) -> Scorecard:
    """A valid card that says the grader failed: no check counts as passed."""
    checks = scoring.problem_results(assignment, "not graded: the grader itself failed", cuda, "error", collected)
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return scoring.build_scorecard(assignment, submission, checks, env, grader_error=detail,
                                   graded_at=graded_at, duration_s=duration_s)


def _load_problem(worker: SubmissionWorker) -> str | None:
    """The message every check got when the file failed at import (``LoadFailed``), as the checks
    carry it; the card says it once (``Scorecard.problem``)."""
    if worker.load_error is None:
        return None
    return session.clip(LoadFailed(worker.load_error, worker.where).student_message())


def _enforce_strict(strict: bool, active: dict[str, str]) -> None:
    missing = sorted(name for name, state in active.items() if state != "active")
    if strict and missing:
        raise StrictModeRefused(f"--strict: isolation layers not active on this machine: {', '.join(missing)}")


def environment(cuda: bool) -> dict[str, Any]:
    """What graded the card. Without CUDA it says once that the GPU-only checks were not run here:
    they are skipped on every card alike, not a note under each of them."""
    env: dict[str, Any] = {
        "grader": __version__,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": cuda,
        "platform": platform.system().lower(),
    }
    if not cuda:
        env["not_checked"] = NOT_CHECKED_WITHOUT_CUDA
    return env


NOT_CHECKED_WITHOUT_CUDA = "GPU-only checks (CPU/CUDA parity) were not run: this machine has no CUDA device"
