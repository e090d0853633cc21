"""A scorecard as Gradescope's autograder ``results.json``.

Format: Gradescope's "Autograder Specifications"
(https://gradescope-autograders.readthedocs.io/en/latest/specs/), checked in
this project's tests against ``tests/data/gradescope_results.schema.json``.

Mapping, and why:

* Top-level ``score`` is the card's score: Gradescope takes it over the sum of
  the tests. Gradescope has no top-level maximum - the assignment's points are
  set in Gradescope (137.5 for ``attention`` without CUDA).
* One test per check, in card order. ``name`` = ``"<exercise>: <check id>"``;
  ``number`` = ``"E.C"`` - E the exercise's position among the card's
  exercises, C the check's position within its exercise, both from 1 - so the
  same check keeps its number from one submission to the next. ``score`` and
  ``max_score`` are the check's; ``output`` is its message; ``tags`` are
  ``[exercise, our status]``.
* ``status``: Gradescope knows only ``passed`` and ``failed``. ``passed`` only
  for our ``passed``; ``failed``, ``error`` and ``timeout`` are ``failed``.
  A ``skipped`` check (GPU parity on a machine without CUDA) is ``failed``
  too, never ``passed``: nothing was verified. It keeps score 0 and the
  card's own ``max_score`` for it - 0 when the assignment drops skipped points,
  its points when it keeps them - so the tests add up to exactly the card's
  score and max_score; its output starts with "Skipped, not graded:" so the
  student is not told they failed it.
* ``visibility``: our ``visible`` -> ``visible``; our ``hidden`` ->
  ``after_published``: students see hidden checks, names and messages only
  once staff publish grades, not while they can still resubmit against them.
  ``after_due_date`` and ``after_published`` (assignments.yaml takes
  Gradescope's own names too) pass through unchanged. Every visibility the
  config schema allows is mapped, so no card can fail to export.
* A known mistake (``card.diagnoses``) is explained once, in the top-level
  ``output`` (only those a visible check shows: the top is seen at once); each
  diagnosed test's ``output`` ends with a short line naming it. A file-level
  problem (``card.problem``) is said once at the top too.
* Text formats are ``text`` throughout: messages and printed output are shown
  verbatim, never rendered as HTML or Markdown.
* Top-level ``output`` = a summary line, then what the student's code printed
  (``card.output``), visible to the student; ``stdout_visibility`` =
  ``hidden``: the autograder's own stdout is for staff. No top-level
  ``visibility``: its default, ``visible``, shows the total at once, and a
  top-level value would only risk overriding the per-test settings above.
* A card with ``grader_error``: ``score`` 0, every test 0, and the output says
  the grader failed and no grade was given, so it is never mistaken for a 0
  earned by the code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grader import views
from grader.export.gradebook_csv import format_number
from grader.files import write_atomically
from grader.scorecard import CheckResult, Scorecard

# Our visibility (grader/schema/assignments.schema.json) -> Gradescope's.
VISIBILITY = {
    "visible": "visible",
    "hidden": "after_published",
    "after_due_date": "after_due_date",
    "after_published": "after_published",
}


def results(card: Scorecard) -> dict[str, Any]:
    """The ``results.json`` object for one card."""
    failed = bool(card.grader_error)
    return {
        "score": 0 if failed else card.score,
        "execution_time": round(card.duration_s),
        "output": _summary(card) + (f"\n\nWhat your code printed:\n{card.output}" if card.output else ""),
        "output_format": "text",
        "stdout_visibility": "hidden",
        "tests": [_test(check, number, failed) for check, number in zip(card.checks, _numbers(card))],
    }


def write(card: Scorecard, path: Path) -> None:
    """Write ``results.json`` atomically (Gradescope reads ``/autograder/results/results.json``).

    Unix newlines only: ``json.dumps`` escapes any carriage return inside a message,
    and the text is written with ``newline=""``, so no platform adds one.
    """
    text = json.dumps(results(card), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    write_atomically(path, text)


def _summary(card: Scorecard) -> str:
    if card.grader_error:
        return ("The grader itself failed, so no grade was given for this submission (the 0 is not your score); "
                f"please tell course staff. Detail: {card.grader_error}")
    lines = [f"{card.assignment}: {format_number(card.score)} / {format_number(card.max_score)} points."]
    if card.problem:
        lines.append(f"Your file: {card.problem}")
    lines += [f"{d.exercise}: {d.text}" for d in views.student_view(card).diagnoses]
    return "\n".join(lines)


def _numbers(card: Scorecard) -> list[str]:
    """Stable "E.C" numbers: exercise position, check position within it, both from 1, in card order."""
    exercises: dict[str, int] = {}
    within: dict[str, int] = {}
    numbers = []
    for check in card.checks:
        e = exercises.setdefault(check.exercise, len(exercises) + 1)
        within[check.exercise] = within.get(check.exercise, 0) + 1
        numbers.append(f"{e}.{within[check.exercise]}")
    return numbers


def _test(check: CheckResult, number: str, grader_failed: bool) -> dict[str, Any]:
    output = f"Skipped, not graded: {check.message}" if check.status == "skipped" else check.message
    if check.diagnosis is not None:
        output += f"\nLikely mistake: {check.diagnosis.title}"
    return {
        "name": f"{check.exercise}: {check.id}",
        "name_format": "text",
        "number": number,
        "score": 0 if grader_failed else check.score,
        "max_score": check.max_score,
        "status": "passed" if check.status == "passed" and not grader_failed else "failed",
        "output": output,
        "output_format": "text",
        "tags": [check.exercise, check.status],
        "visibility": VISIBILITY[check.visibility],
    }
