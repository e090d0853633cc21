"""A class's results as rows: one per student, whatever happened to them.

A batch (``grader grade-all``) ends every input as a card or an explicit
row: ``graded`` (a card exists, however badly it did), ``missing`` (on the
roster, nothing submitted) or ``error`` (two files for one student, an
unreadable file, the grader itself failed). Rows are plain data; the
gradebook CSV, Canvas import, summary and ``grader merge`` are views of them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from grader.scorecard import Scorecard, by_exercise
from grader.words import clip

ROW_STATUSES = ("graded", "missing", "error")


@dataclass(frozen=True)
class Row:
    student: str
    status: str  # one of ROW_STATUSES
    file: str = ""  # the submission's path relative to the SUBMISSIONS root ('' when missing)
    sha256: str = ""
    score: float | None = None  # None unless graded
    max_score: float | None = None
    exercises: tuple[tuple[str, float], ...] = ()  # (exercise, points got), in the assignment's order
    message: str = ""  # why a row is an error or missing, or why a graded row (or an exercise) scored 0
    card: str = ""  # the card's path relative to the batch folder ('' when none)
    submitted_at: str = ""  # when the LMS says it was submitted, ISO 8601 ('' when the download does not say)
    late: bool | None = None  # the LMS's own late flag (Canvas' LATE); None when the download has none
    # The late policy (grader.deadlines), applied by grade-all on every run: ``score`` is then the final score,
    # ``raw_score`` the card's, ``penalty`` the points taken off, ``lateness`` hours past the student's due time
    # (None: time unknown or no policy) and ``late_rule`` what was applied ('' when the assignment has no deadline).
    raw_score: float | None = None
    penalty: float | None = None
    lateness: float | None = None
    late_rule: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["exercises"] = [list(pair) for pair in self.exercises]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Row:
        values = dict(data)
        values["exercises"] = tuple((str(e), float(p)) for e, p in values.get("exercises", ()))
        return cls(**values)


def exercise_scores(card: Scorecard) -> tuple[tuple[str, float], ...]:
    """Points got per exercise, in the order the card lists them."""
    totals: dict[str, float] = {}
    for check in card.checks:
        totals[check.exercise] = round(totals.get(check.exercise, 0.0) + check.score, 6)
    return tuple(totals.items())


def row_from_card(student: str, card: Scorecard, file: str, card_path: str) -> Row:
    """A graded row, or an error row when the card says the grader itself failed."""
    if card.grader_error:
        return Row(student, "error", file, card.submission.sha256, message=f"grader error: {card.grader_error}",
                   card=card_path)
    row = Row(student, "graded", file, card.submission.sha256, card.score, card.max_score,
              exercise_scores(card), message=zero_reason(card) if card.score == 0 else exercise_zeros(card),
              card=card_path)
    late = card.late  # the late policy grade-all applied: every view of the row uses the final score
    if not late:
        return row
    final = float(late["final_score"])
    return replace(row, score=final, raw_score=float(late["raw_score"]), penalty=float(late["penalty_points"]),
                   lateness=late.get("lateness_hours"), late_rule=str(late["rule"]),
                   message=str(late["rule"]) if final == 0 and card.score != 0 else row.message)


FILE_PREFIXES = (("your file could not be graded: ", ""), ("your file could not be loaded: ", "could not load: "))
REASON_CHARS = 200


def zero_reason(card: Scorecard) -> str:
    """Why a graded card scored 0, in a few words, so no zero in the gradebook is left unexplained:
    the file-level problem (not attempted; syntax error at line L; could not load: ...) or else the
    first failed check's message."""
    if card.problem:
        text = card.problem
        for prefix, replacement in FILE_PREFIXES:
            if text.startswith(prefix):
                text = replacement + text.removeprefix(prefix)
    else:
        failed = next((c for c in card.checks if c.status not in ("passed", "skipped")), None)
        text = f"no check passed; first: {failed.id}: {failed.message}" if failed else "no check passed"
    return clip(" ".join(text.split()), REASON_CHARS)


EXERCISE_REASON_CHARS = 120


def exercise_zeros(card: Scorecard) -> str:
    """Why each exercise that scored 0 of its points did, when the card as a whole did not score 0 (that is
    ``zero_reason``): ``softmax: 0/10, not attempted; causal_mask: 0/5, test_is_causal: <its message>``, so a
    zero cell of the gradebook is explained like a zero total. '' when no exercise is at 0.

    The root cause leads: the first exercise on the card that lost points. A card lists the exercises in
    ``assignments.yaml``'s order, which is call order (``grader.authoring.completeness`` holds every exercise
    after the ones it calls), so a wrong ``attention_scores`` (3.5/8.5) is named before the
    ``multi_head_attention`` (0/14.5) that failed through it."""
    parts: list[str] = []
    lead = ""  # the first exercise to lose points, when it is not at 0 (one at 0 is first among ``parts``)
    first = True
    for exercise, checks in by_exercise(card.checks):
        possible, got = round(sum(c.max_score for c in checks), 6), round(sum(c.score for c in checks), 6)
        if possible == 0 or got == possible:
            continue
        messages = {" ".join(c.message.split()) for c in checks}
        failed = next((c for c in checks if c.status not in ("passed", "skipped")), checks[0])
        why = messages.pop() if len(messages) == 1 and got == 0 else f"{failed.id}: {failed.message}"
        why = clip(" ".join(why.split()) or failed.status, EXERCISE_REASON_CHARS)
        if got == 0:
            parts.append(f"{exercise}: 0/{possible:g}, {why}")
        elif first:
            lead = f"{exercise}: {got:g}/{possible:g}, the first exercise in call order to lose points: {why}"
        first = False
    return "; ".join(([lead] if lead and parts else []) + parts)
