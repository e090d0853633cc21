"""What each reader of a scorecard may see: a card in, a (smaller) card out.

A hidden check exists so that students cannot fit their code to its inputs;
its message quotes those inputs and the values expected from them, and its
diagnosis names what the inputs revealed. So the student's view keeps only
that the check exists, what it is about and how it went. One pure function,
shared by every page or file a student receives (the HTML report, CI).
"""

from __future__ import annotations

from dataclasses import replace

from grader.scorecard import CheckResult, ExerciseDiagnosis, Scorecard
from grader.seeds import HIDDEN_ENVIRONMENT_KEYS

VISIBLE = "visible"  # every other visibility (hidden, after_due_date, after_published) is masked
HIDDEN_MESSAGE = "hidden check: its details are shown to course staff only"


def student_view(card: Scorecard) -> Scorecard:
    """The card a student may see.

    Checks that are not ``visible`` keep their exercise, status, score and
    max_score; their name becomes ``hidden check N``, their message a neutral
    text, and their diagnosis and duration go. ``flags`` are notes for course staff ("review by hand")
    and go too, as does the seed of the hidden inputs (``environment.input_seed``). ``figures`` stay: they come from public inputs only.
    Scores and totals are untouched, so the student sees the same grade.
    """
    hidden = 0
    checks = []
    for check in card.checks:
        if is_hidden(check):
            hidden += 1
            check = _masked(check, hidden)
        checks.append(check)
    return replace(card, checks=tuple(checks), flags=(), diagnoses=_visible_diagnoses(card),
                   environment=_visible_environment(card.environment))


def _visible_environment(env: dict) -> dict:
    """The seed of the student's hidden inputs (``grader.seeds``) and the note that there is none go:
    with the seed (and the checks' source) a student could rebuild those inputs."""
    return {k: v for k, v in env.items() if k not in HIDDEN_ENVIRONMENT_KEYS}


def _visible_diagnoses(card: Scorecard) -> tuple[ExerciseDiagnosis, ...]:
    """A mistake said once for its exercise stays when a visible check shows it, and then names only
    those; one that only hidden checks revealed goes, as their own diagnosis does."""
    visible = {(c.exercise, c.id) for c in card.checks if not is_hidden(c)}  # ids repeat across exercises
    kept = []
    for named in card.diagnoses:
        shown = tuple(i for i in named.checks if (named.exercise, i) in visible)
        if shown:
            kept.append(replace(named, checks=shown))
    return tuple(kept)


def is_hidden(check: CheckResult) -> bool:
    """Whether students may not read this check's details."""
    return check.visibility != VISIBLE


def _masked(check: CheckResult, number: int) -> CheckResult:
    """Its name goes too: a check's name says what it checks (the student kit keeps hidden check
    names out as well); ``hidden check N`` numbers them over the card, so each id stays unique."""
    return replace(check, id=f"hidden check {number}", message=HIDDEN_MESSAGE, diagnosis=None, duration_s=0.0)
