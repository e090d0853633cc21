"""Stage 4: outcomes + assignments.yaml -> a Scorecard. Fail closed.

Points come only from a recorded pass. A configured check that left no
outcome (pytest crashed, a test was deselected, the worker died before it)
is an ``error`` worth 0; a test the config does not know is a grader bug and
stops grading rather than guessing its worth.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any, Sequence

from grader.session import NO_CUDA_MESSAGE, ChecksBroken, CollectedCheck, Verdict
from grader.config import AssignmentConfig, CheckConfig
from grader.scorecard import CheckResult, Diagnosis, ExerciseDiagnosis, Flag, Scorecard, SubmissionInfo
from grader.submission import Submission


UNNAMED_ID = "unnamed"  # an exercise diagnosis that names no mistake: the first property that broke
FILE_PROBLEM_REFERENCE = "not run: your file could not be loaded (see the problem above)"
NOT_ATTEMPTED = "not attempted"


def check_results(outcomes: list[Verdict], assignment: AssignmentConfig) -> list[CheckResult]:
    """Attach points to outcomes; a parametrised check splits its points evenly."""
    shares = Counter((o.exercise, o.test) for o in outcomes)
    ungated = _ungated(outcomes, assignment)
    results: list[CheckResult] = []
    for o in outcomes:
        cfg = assignment.check(o.exercise, o.test)
        if cfg is None:
            raise ChecksBroken(f"check {o.check_id} (exercise {o.exercise!r}) is not listed in assignments.yaml")
        share = cfg.points / shares[(o.exercise, o.test)]
        max_score = _skipped_max(assignment, cfg, share) if o.status == "skipped" else share
        status, message = o.status, o.message
        if status == "passed" and not cfg.gate and o.exercise in ungated:
            status, message = "failed", ungated[o.exercise]
        score = share if status == "passed" else 0.0
        diagnosis = o.diagnosis if status in ("failed", "error") else None  # never on a passing (or skipped) check
        results.append(CheckResult(o.check_id, o.exercise, status, _r(score), _r(max_score), message,
                                   cfg.visibility, o.duration_s, diagnosis))
    results.sort(key=lambda r: card_order(assignment, r.exercise, r.id.split("[", 1)[0]))
    seen = set(shares)
    for ex in assignment.exercises:
        for c in ex.checks:
            if (ex.name, c.name) not in seen:
                results.append(CheckResult(c.name, ex.name, "error", 0.0, _r(c.points),
                                           "this check did not run, so it cannot count as passed", c.visibility))
    return results


def card_order(assignment: AssignmentConfig, exercise: str, test: str) -> tuple[int, int]:
    """Where a check sits on every card: exercise by exercise as configured, the exercise's gate first
    (a placeholder is told so before the checks it withholds), then collection order (sorts are stable)."""
    names = [ex.name for ex in assignment.exercises]
    cfg = assignment.check(exercise, test)
    return (names.index(exercise) if exercise in names else len(names), 0 if cfg is not None and cfg.gate else 1)


def _ungated(outcomes: list[Verdict], assignment: AssignmentConfig) -> dict[str, str]:
    """Exercises whose gate check has no recorded pass, with the message their passing checks get instead.

    Credit only for work done: a property check compares the student's code with itself, so code that
    computes nothing (zeros, its input handed back) passes many of them. They count once the gate (its
    output varies with its inputs the way the exercise needs, ``grader/checks/work.py``) passed; a gate
    that did not run counts as not passed (fail closed).
    """
    passed = {(o.exercise, o.test) for o in outcomes if o.status == "passed"}
    return {
        ex.name: (f"passed, but not credited while `{ex.name}` looks like a placeholder (see {gate.name} "
                  "above); it counts once the output is computed from the inputs")
        for ex in assignment.exercises
        for gate in ex.checks
        if gate.gate and (ex.name, gate.name) not in passed
    }


def problem_results(assignment: AssignmentConfig, message: str, cuda: bool, status: str = "failed",
                    collected: Sequence[CollectedCheck] | None = None) -> list[CheckResult]:
    """Every check ``status`` with one message: for a file that cannot be run at all.

    ``collected`` (``Judge.collected``): the checks a grading runs, one per parameter. With it the
    card lists exactly the rows a normal grading lists (the same ids, points split the same way,
    in the same order), so its total is every other card's. Without it (the checks could not be
    collected: only a grader error card) there is one row per configured check.
    GPU-only checks are skipped where no CUDA exists, exactly as in a normal grading.
    """
    rows = list(collected) if collected is not None else [
        CollectedCheck(c.name, c.name, ex.name) for ex in assignment.exercises for c in ex.checks]
    rows = [r for r in rows if assignment.check(r.exercise, r.test) is not None]
    shares = Counter((r.exercise, r.test) for r in rows)
    rows.sort(key=lambda r: card_order(assignment, r.exercise, r.test))  # as check_results sorts
    rows += [CollectedCheck(c.name, c.name, ex.name) for ex in assignment.exercises for c in ex.checks
             if (ex.name, c.name) not in shares]  # a configured check no test serves: a row all the same
    results = []
    for r in rows:
        c = assignment.check(r.exercise, r.test)
        share = c.points / shares.get((r.exercise, r.test), 1)
        if c.requires_cuda and not cuda:
            results.append(CheckResult(r.check_id, r.exercise, "skipped", 0.0,
                                       _r(_skipped_max(assignment, c, share)), NO_CUDA_MESSAGE, c.visibility))
        else:
            results.append(CheckResult(r.check_id, r.exercise, status, 0.0, _r(share), message, c.visibility))
    return results


def exercise_diagnoses(checks: Sequence[CheckResult], outcomes: Sequence[Verdict],
                       assignment: AssignmentConfig) -> tuple[ExerciseDiagnosis, ...]:
    """Each named mistake once per exercise, with the failed checks that show it, in card order.

    The checks keep their own ``diagnosis`` (which mistake); the sentence that explains it is said
    once here, so a report prints it above the exercise's failed checks and not under each one.
    """
    texts = {(o.exercise, o.diagnosis): o.diagnosis_text for o in outcomes if o.diagnosis and o.diagnosis_text}
    found: dict[tuple[str, Diagnosis], list[str]] = {}
    for c in checks:
        if c.diagnosis is not None and (c.exercise, c.diagnosis) in texts:
            found.setdefault((c.exercise, c.diagnosis), []).append(c.id)
    named = tuple(ExerciseDiagnosis(exercise, d.id, d.title, texts[(exercise, d)], tuple(ids), d.also)
                  for (exercise, d), ids in found.items())
    # An exercise no known mistake explains: which property broke first, and the smallest input that shows it.
    # Not for an exercise that looks like a placeholder: its gate's message is the cause, and "no known
    # mistake fits" would send the student looking for a bug in code they have not written yet.
    ungated = _ungated(list(outcomes), assignment)
    # Keyed by exercise too: two exercises may have checks of one id (``test_keeps_dtype[float64]``).
    sentences = {(o.exercise, o.check_id): o for o in outcomes if o.diagnosis is None and o.diagnosis_text}
    unnamed = tuple(ExerciseDiagnosis(c.exercise, UNNAMED_ID, _unnamed_title(sentences[(c.exercise, c.id)]),
                                      sentences[(c.exercise, c.id)].diagnosis_text, (c.id,))
                    for c in checks  # card order, as the named ones
                    if (c.exercise, c.id) in sentences and c.status not in ("passed", "skipped") and c.exercise not in ungated)
    return named + unnamed


def _unnamed_title(outcome: Verdict) -> str:
    """An unnamed exercise's title: no known mistake fits, or a function it calls fails first (``fails_first``)."""
    return f"`{outcome.fails_first}` fails its own checks first" if outcome.fails_first else "no known mistake fits"


def file_problem_results(checks: Sequence[CheckResult], problem: str) -> list[CheckResult]:
    """Checks that failed only because the file could not be loaded: their message becomes a
    reference to the card's ``problem``, which says the error once."""
    return [replace(c, message=FILE_PROBLEM_REFERENCE) if c.status != "passed" and c.message == problem else c
            for c in checks]


def not_attempted_problem(checks: Sequence[CheckResult]) -> str | None:
    """A file where no exercise was attempted (every check that ran says "not attempted") has one problem."""
    ran = [c for c in checks if c.status != "skipped"]
    if ran and all(c.status != "passed" and c.message == NOT_ATTEMPTED for c in ran):
        return "not attempted: every function is still the stub (it raises NotImplementedError)"
    return None


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
