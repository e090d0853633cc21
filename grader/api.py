"""The grader as functions: ``grade(path, assignment) -> Scorecard``.

The pipeline, one stage per module: ``submission`` (read, AST facts) ->
``sandbox`` (warm server, one sandboxed child per submission) -> ``checking``
(hidden pytest checks through the proxy) -> ``scoring`` (points, fail
closed) -> ``scorecard`` / ``export`` (JSON, text...). The CLI is a thin
layer over this module.
"""

from __future__ import annotations

import datetime as dt
import platform
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import torch

from grader import checking, scoring
from grader.config import DEFAULT_CONFIG, AssignmentConfig, load_config
from grader.sandbox import layers
from grader.sandbox.client import SubmissionWorker, WorkerServer
from grader.sandbox.proxy import StudentProxy
from grader.scorecard import Scorecard
from grader.submission import Submission, load_submission

__version__ = "0.1.0"


class StrictModeRefused(Exception):
    """``--strict`` asked for isolation layers this machine cannot provide."""


class SecretsExposed(Exception):
    """The hidden checks or the reference lie where the sandbox lets submissions read."""


def assert_secrets_unreadable(assignment: AssignmentConfig, config_path: Path) -> None:
    """Refuse to grade if a secret sits inside a tree the child may read.

    The child may read the Python installation (site-packages included), so a
    non-editable install that copied ``grader/checks`` there would expose them.
    """
    readable = [Path(p).resolve() for p in layers.python_readable_paths()]
    for secret in (assignment.checks_dir, assignment.reference, config_path):
        path = Path(secret).resolve()
        if any(path == r or r in path.parents for r in readable):
            raise SecretsExposed(
                f"{path} is readable from the sandbox (it lies under the Python installation); "
                "install the grader from the course repository with `pip install -e .`"
            )


def grade(path: Path, assignment_id: str, *, config_path: Path = DEFAULT_CONFIG,
          server: WorkerServer | None = None, strict: bool = False) -> Scorecard:
    """Grade one submission file. Raises only for what the CLI reports as exit 2:
    ConfigError, UnreadableSubmission, SecretsExposed, StrictModeRefused; every
    other failure becomes a card with ``grader_error``.
    """
    assignment = load_config(config_path).assignment(assignment_id)
    assert_secrets_unreadable(assignment, config_path)
    submission = load_submission(Path(path), flagged_calls=assignment.flagged_calls)
    if server is not None:
        return _grade_with(server, assignment, submission, strict)
    with WorkerServer() as own:  # started before any secret is loaded
        return _grade_with(own, assignment, submission, strict)


def _grade_with(server: WorkerServer, assignment: AssignmentConfig, submission: Submission, strict: bool) -> Scorecard:
    started = time.monotonic()
    graded_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    cuda = checking.cuda_available()
    env = environment(cuda)
    if submission.problem:
        checks = scoring.problem_results(assignment, f"your file could not be graded: {submission.problem}", cuda)
        return scoring.build_scorecard(assignment, submission, checks, env, graded_at=graded_at,
                                       duration_s=time.monotonic() - started)
    worker = None
    try:
        with tempfile.TemporaryDirectory(prefix="grader-scratch-") as scratch:
            worker = SubmissionWorker(server, submission.source, submission.filename, assignment.limits, Path(scratch))
            worker.ensure_started()
            env["isolation"] = dict(sorted(worker.layers.items()))
            _enforce_strict(strict, worker.layers)
            reference = checking.load_reference(assignment.reference)
            plugin = checking.GraderPlugin(StudentProxy(worker), worker, reference, submission, assignment, cuda)
            outcomes = checking.run_checks(plugin, assignment)
            worker.close()  # before reading the output, so all of it is in
            checks = scoring.check_results(outcomes, assignment)
            return scoring.build_scorecard(assignment, submission, checks, env, output=worker.output_text(),
                                           graded_at=graded_at, duration_s=time.monotonic() - started)
    except StrictModeRefused:
        raise
    except Exception as exc:  # noqa: BLE001 - the grader's own crash still yields a (non-grade) card
        return error_card(assignment, submission, exc, env, cuda, graded_at, time.monotonic() - started)
    finally:
        if worker is not None:
            worker.close()


def error_card(assignment: AssignmentConfig, submission: Submission, exc: BaseException, env: dict[str, Any],
               cuda: bool, graded_at: str = "", duration_s: float = 0.0) -> Scorecard:
    """A valid card that says the grader failed: no check counts as passed."""
    checks = scoring.problem_results(assignment, "not graded: the grader itself failed", cuda, "error")
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return scoring.build_scorecard(assignment, submission, checks, env, grader_error=detail,
                                   graded_at=graded_at, duration_s=duration_s)


def _enforce_strict(strict: bool, active: dict[str, str]) -> None:
    missing = sorted(name for name, state in active.items() if state != "active")
    if strict and missing:
        raise StrictModeRefused(f"--strict: isolation layers not active on this machine: {', '.join(missing)}")


def environment(cuda: bool) -> dict[str, Any]:
    return {
        "grader": __version__,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": cuda,
        "platform": platform.system().lower(),
    }
