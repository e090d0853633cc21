"""A verdict for every check, in the lesson's words: which of the typed sandbox errors ended it, or the
assertion message written for students; a skip that is not a GPU-only check on a CPU machine fails
closed (``unjudged_message``). Once a submission's checks have run, the known mistakes their answers
match are settled across the card (``with_diagnoses``); ``scoring`` then attaches the points."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import Any

from grader import words
from grader.diagnosis.diagnose import CheckEvidence, Diagnoser
from grader.diagnosis.naming import Known, diagnosis, representative
from grader.sandbox.errors import NotAttempted, StudentProblem, StudentTimeout
from grader.scorecard import Diagnosis
from grader.session.runner import skip_message
from grader.session.tape import TapeMiss


MAX_MESSAGE = 1500


@dataclass(frozen=True)
class Verdict:
    """What happened in one hidden check, before points are attached."""

    test: str  # function name, the key in assignments.yaml
    check_id: str  # function name plus parameters
    exercise: str
    status: str
    message: str
    duration_s: float
    diagnosis: Diagnosis | None = None
    diagnosis_text: str = ""  # the sentence naming it, said once per exercise on the card (``scoring.exercise_diagnoses``)
    requests: tuple[tuple[dict, dict], ...] = ()  # what it asked of the student, kept until the card is settled
    diagnosable: bool = False  # failed on the student's answers (not a skip, a timeout or the grader's own error)
    visible: bool = True  # a visible check: its inputs are the same for everyone and may be quoted as evidence
    fails_first: str = ""  # a function it calls that fails its own checks, named in ``diagnosis_text`` instead


@dataclass(frozen=True)
class CollectedCheck:
    """One collected hidden check: a row of every card of the assignment, whatever the file."""

    test: str  # function name, the key in assignments.yaml
    check_id: str  # function name plus parameters
    exercise: str


NO_CUDA_MESSAGE = "no CUDA device on this machine: GPU-only check not run"


UNJUDGED_PREFIX = "this check could not be judged, so it does not count as passed: "


def unjudged_message(reason: str) -> str:
    """A skip's reason as a failure: says that the property could not be judged, and why."""
    return reason if reason.startswith(UNJUDGED_PREFIX) else UNJUDGED_PREFIX + reason


def check_verdict(error: BaseException | None, incident: bool = False) -> dict[str, Any]:
    """The status and message of a check that ended with ``error`` (None: it passed); ``incident``: the worker
    crashed or timed out while it ran, so a pass does not count (fail closed)."""
    if error is None:
        if incident:
            return {"status": "error", "message": "the worker crashed or timed out during this check"}
        return {"status": "passed", "message": ""}
    skipped = skip_message(error)
    if skipped is not None:
        return {"status": "skipped", "message": skipped}
    if isinstance(error, NotAttempted):
        return {"status": "failed", "message": "not attempted"}
    if isinstance(error, StudentTimeout):
        return {"status": "timeout", "message": clip(error.student_message())}
    if isinstance(error, StudentProblem):
        return {"status": error.status, "message": clip(error.student_message())}
    if isinstance(error, AssertionError):
        return {"status": "failed", "message": clip(str(error).strip() or "the check failed")}
    if isinstance(error, TapeMiss):
        return {"status": "error", "message": clip(f"the grader could not run this check: {error}")}
    # A bug in a check itself, not in the submission: no points, and say so.
    return {"status": "error", "message": clip(f"internal check error ({type(error).__name__}: {error}); please report this")}


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """A message cut to what a card keeps."""
    return words.clip(text, max(limit, 200))


def with_diagnoses(outcomes: list[Verdict], diagnoser: Diagnoser | None, source: str | None = None) -> list[Verdict]:
    """Settle the matched mistakes across the card, then name them on each failed check.

    The sentence is kept beside the message, not appended to it: a mistake that fails 14 checks
    is explained once, above its exercise's failed checks (``ExerciseDiagnosis``). ``source``: the
    student's Python text (parsed here, never run), so that a title quoting code is said only where
    their code contains it (``grader.diagnosis.truth``); None says every such title as behaviour.
    """
    if diagnoser is None:
        return outcomes
    try:
        return _named_on(outcomes, diagnoser, source)
    except Exception as exc:  # noqa: BLE001 - naming the mistake is advice: its own fault must never cost a grade
        sys.stderr.write(f"grader: warning: no mistake named on this card, the diagnosis failed ({type(exc).__name__}: "
                         f"{exc}); the checks' points and messages stand. Please report this.\n")
        return outcomes


def _named_on(outcomes: list[Verdict], diagnoser: Diagnoser, source: str | None) -> list[Verdict]:
    names = diagnoser.true_names(source)
    settled = diagnoser.diagnose([CheckEvidence(o.exercise, o.status, (), o.requests, o.diagnosable) for o in outcomes])
    examples: dict[tuple[str, str], str] = {}
    unnamed = _first_breaks(outcomes, settled, diagnoser)
    result = []
    for outcome, found in zip(outcomes, settled):
        lead = representative(found, names)
        if lead is not None and (outcome.exercise, lead.id) not in examples:
            examples[(outcome.exercise, lead.id)] = _example(diagnoser, lead, outcome.exercise, outcomes)
        named = diagnosis(found, examples[(outcome.exercise, lead.id)], names) if lead is not None else None
        if named is None:
            text, callee = unnamed.get(id(outcome), ("", ""))  # most checks: nothing to say, the verdict kept as it is
            result.append(replace(outcome, diagnosis_text=text, fails_first=callee) if text else outcome)
            continue
        result.append(replace(outcome, diagnosis=named[0], diagnosis_text=named[1]))
    return result


def _example(diagnoser: Diagnoser, mistake: Known, exercise: str, outcomes: list[Verdict]) -> str:
    """One request of a visible check of ``exercise`` that shows ``mistake`` (``Diagnoser.example``), failed
    checks first; '' if none does. Never a hidden check's: its inputs are the student's own and unseen."""
    shown = sorted((o for o in outcomes if o.exercise == exercise and o.visible), key=lambda o: o.status == "passed")
    return next((text for o in shown if (text := diagnoser.example(mistake, o.requests))), "")


UNNAMED = "No known mistake fits all your answers"


def _first_breaks(outcomes: list[Verdict], settled: list[list[Known]], diagnoser: Diagnoser) -> dict[int, tuple[str, str]]:
    """For each exercise with a failed check and no mistake named: the first visible check that failed on the
    student's answers, with the smallest recorded input where their answer is not the reference's. Keyed by
    that outcome's ``id()``: the sentence is said once, above the exercise's failed checks.

    Nothing is said where no answer differs (the check's own message says what it saw: a forbidden call,
    a weight of 1e-9 where 0 is asked). An exercise that calls a failing one is not said to fit no known
    mistake: its sentence points at the function it calls that fails first (``Diagnoser.blame``), the cause
    to look at first, which has its own sentence. Values: (sentence, that function or '')."""
    named = {o.exercise for o, found in zip(outcomes, settled) if found}
    failing = {o.exercise for o in outcomes if o.status not in ("passed", "skipped")}
    said: dict[int, tuple[str, str]] = {}
    done: set[str] = set()
    for o in outcomes:
        if o.exercise in named or o.exercise in done or not (o.visible and o.diagnosable):
            continue
        done.add(o.exercise)
        smallest = diagnoser.smallest_difference(o.requests)
        callee = diagnoser.blame(o.exercise, failing)
        if smallest and callee:
            said[id(o)] = (f"`{o.exercise}` calls `{callee}`{_through(diagnoser, o.exercise, callee, failing)}, which fails "
                           f"its own checks: fix it first.", callee)
        elif smallest:
            said[id(o)] = (f"{UNNAMED}: the first property that broke is `{o.check_id}`. "
                           f"The smallest input where your answer differs: {smallest}", "")
    return said


def _through(diagnoser: Diagnoser, caller: str, callee: str, failing: set[str]) -> str:
    """" (through `attention`)" where ``caller`` reaches ``callee`` through a failing function; '' otherwise."""
    between = [c for c in diagnoser.failing_callees(caller, failing)
               if c != callee and callee in diagnoser.failing_callees(c, failing)]
    return f" (through `{between[-1]}`)" if between else ""
