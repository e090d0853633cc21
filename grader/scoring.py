"""Stage 4: outcomes + assignments.yaml -> a Scorecard. Fail closed.

Points come only from a recorded pass. A configured check that left no
outcome (pytest crashed, a test was deselected, the worker died before it)
is an ``error`` worth 0; a test the config does not know is a grader bug and
stops grading rather than guessing its worth.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from grader.checking import ChecksBroken, Outcome
from grader.config import AssignmentConfig, CheckConfig
from grader.scorecard import CheckResult, Flag, Scorecard, SubmissionInfo
from grader.submission import Submission


def check_results(outcomes: list[Outcome], assignment: AssignmentConfig) -> list[CheckResult]:
    """Attach points to outcomes; a parametrised check splits its points evenly."""
    shares = Counter((o.exercise, o.test) for o in outcomes)
    results: list[CheckResult] = []
    for o in outcomes:
        cfg = assignment.check(o.exercise, o.test)
        if cfg is None:
            raise ChecksBroken(f"check {o.check_id} (exercise {o.exercise!r}) is not listed in assignments.yaml")
        share = cfg.points / shares[(o.exercise, o.test)]
        max_score = _skipped_max(assignment, cfg, share) if o.status == "skipped" else share
        score = share if o.status == "passed" else 0.0
        diagnosis = o.diagnosis if o.status in ("failed", "error") else None  # never on a passing (or skipped) check
        results.append(CheckResult(o.check_id, o.exercise, o.status, _r(score), _r(max_score), o.message,
                                   cfg.visibility, o.duration_s, diagnosis))
    order = {ex.name: i for i, ex in enumerate(assignment.exercises)}
    results.sort(key=lambda r: order.get(r.exercise, len(order)))  # stable: collection order within an exercise
    seen = set(shares)
    for ex in assignment.exercises:
        for c in ex.checks:
            if (ex.name, c.name) not in seen:
                results.append(CheckResult(c.name, ex.name, "error", 0.0, _r(c.points),
                                           "this check did not run, so it cannot count as passed", c.visibility))
    return results


def problem_results(assignment: AssignmentConfig, message: str, cuda: bool, status: str = "failed") -> list[CheckResult]:
    """Every check ``status`` with one message: for a file that cannot be run at all.

    GPU-only checks are skipped where no CUDA exists, exactly as in a normal
    grading, so max_score is the same whether or not the file could be run.
    """
    results = []
    for ex in assignment.exercises:
        for c in ex.checks:
            if c.requires_cuda and not cuda:
                results.append(CheckResult(c.name, ex.name, "skipped", 0.0, _r(_skipped_max(assignment, c, c.points)),
                                           "no CUDA device on the grading machine; GPU parity not checked", c.visibility))
            else:
                results.append(CheckResult(c.name, ex.name, status, 0.0, _r(c.points), message, c.visibility))
    return results


def build_scorecard(assignment: AssignmentConfig, submission: Submission, checks: list[CheckResult],
                    environment: dict[str, Any], output: str = "", grader_error: str | None = None,
                    graded_at: str = "", duration_s: float = 0.0, figures: dict[str, Any] | None = None) -> Scorecard:
    """The one constructor of scorecards: totals are always the sum of the checks.

    ``figures`` (``grader.figures``) only ride along for the HTML report: they never enter a total.
    """
    flags = tuple(
        Flag("dynamic-code", f.line, f"`{f.name}` used{' in `' + f.function + '`' if f.function else ''}: "
             "dynamic lookups can hide forbidden calls; review by hand")
        for f in submission.flags
    )
    return Scorecard(
        assignment=assignment.id,
        submission=SubmissionInfo(submission.filename, submission.sha256),
        score=_r(sum(c.score for c in checks)),
        max_score=_r(sum(c.max_score for c in checks)),
        checks=tuple(checks),
        environment=environment,
        flags=flags,
        output=output,
        grader_error=grader_error,
        notebook=submission.notebook,
        figures=figures,
        graded_at=graded_at,
        duration_s=round(duration_s, 3),
    )


def _skipped_max(assignment: AssignmentConfig, check: CheckConfig, share: float) -> float:
    """What a skipped check adds to max_score: its share, or 0 where the config drops it."""
    policy = assignment.gpu_points_without_cuda if check.requires_cuda else assignment.skipped_points
    return 0.0 if policy == "drop" else share


def _r(x: float) -> float:
    return round(float(x), 6)
