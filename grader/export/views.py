"""What each reader of a scorecard may see: a card in, a (smaller) card out.

A hidden check exists so that students cannot fit their code to its inputs;
its message quotes those inputs and the values expected from them, and its
diagnosis names what the inputs revealed. So the student's view keeps only
that the check exists, what it is about and how it went. One pure function,
shared by every page or file a student receives (the HTML report, pytest-json,
Gradescope's results.json, CI's cards, summary, annotations and Classroom
result): a format reads the view ``as_seen_by`` gives it, never the card it
came from, so what the view drops (the seed of the hidden inputs included)
cannot reach a student through a field a format happens to copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from grader.scorecard import CheckResult, ExerciseDiagnosis, Scorecard
from grader.seeds import HIDDEN_ENVIRONMENT_KEYS, NO_SECRET

VISIBLE = "visible"  # every other visibility (hidden, after_due_date, after_published) is masked
HIDDEN_MESSAGE = "hidden check: its details are shown to course staff only"
VIEWS = ("student", "instructor")  # the readers a report is drawn for (``--view``)


def as_seen_by(card: Scorecard, view: str) -> Scorecard:
    """The card ``view`` may read: the student's view, or the whole card for the instructor.

    Every format drawn for a chosen reader starts here, so there is one place
    that decides what a student sees; ValueError on a view nobody reads.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r} (known: {', '.join(VIEWS)})")
    return student_view(card) if view == "student" else card


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


def _visible_environment(env: Mapping[str, Any]) -> dict[str, Any]:
    """The seed of the student's hidden inputs (``grader.seeds``) and the note that there is none go:
    with the seed (and the checks' source) a student could rebuild those inputs. So does any other
    entry, at any depth, whose value spells the seed out (a note or a nested record that quotes it)."""
    return _without_seed(env, _seed_text(env))


def _seed_text(env: Mapping[str, Any]) -> str | None:
    """The seed's decimal digits, or None without a seed (0 is everyone's: it reveals nothing)."""
    seed = env.get("input_seed")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed == NO_SECRET:
        return None
    return str(seed)


def _without_seed(entries: Mapping[str, Any], seed: str | None) -> dict[str, Any]:
    """``entries`` less the seed's own keys and every value that quotes ``seed``; nested mappings are
    cleaned entry by entry, so the rest of them (``isolation``) stays."""
    kept: dict[str, Any] = {}
    for key, value in entries.items():
        if key in HIDDEN_ENVIRONMENT_KEYS:
            continue
        if isinstance(value, Mapping):
            kept[key] = _without_seed(value, seed)
        elif seed is None or seed not in str(value):
            kept[key] = value
    return kept


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
