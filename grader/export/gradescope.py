"""A scorecard as Gradescope's autograder ``results.json``.

Format: Gradescope's "Autograder Specifications"
(https://gradescope-autograders.readthedocs.io/en/latest/specs/; its source is
``docs/specs.md`` in github.com/gradescope/autograder_samples), checked in
this project's tests against ``tests/data/gradescope_results.schema.json``.

Mapping, and why:

* Top-level ``score`` is the card's score: Gradescope takes it over the sum of
  the tests. Gradescope has no top-level maximum - the assignment's points are
  set in Gradescope (the card's ``max_score``; README, Gradescope, says it per assignment).
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
* ``visibility``: a setting, ``gradescope_visibility`` in assignments.yaml
  (``defaults`` or per assignment; ``grader.config``), maps each of our
  visibilities to one of Gradescope's four. Default: ``visible`` ->
  ``visible``, ``hidden`` -> ``after_published``, ``after_due_date`` and
  ``after_published`` unchanged. Its effect on the total, per the
  specification's "Controlling Test Case Visibility": "If test cases are
  hidden, students will not be able to see their total score" - so while any
  test is not yet shown (an ``after_published`` test until grades are
  published, an ``after_due_date`` one until the (late) due date), the
  student sees no total at all; only when every test is ``visible`` is the
  total shown at once. ``hidden`` tests are never shown (the specification's
  earlier text said they did not hide the total, being meant for tests worth
  no points; its current text makes no such exception). No top-level
  ``visibility`` is written: the per-test values decide.
* What a student may read (the same rule as ``grader ci`` and the HTML
  report's student view, ``views.student_view``): a test whose check is not
  ``visible`` in assignments.yaml shows only its exercise, status and points:
  its name becomes ``hidden check N`` and its output a neutral sentence,
  whatever Gradescope visibility it maps to, because its message quotes the
  hidden inputs and is shown to the student once the test is. The staff read
  every message in the autograder's stdout (the scorecard table).
* A known mistake (``card.diagnoses``) is explained once, in the top-level
  ``output`` (only those a visible check shows: the top is seen at once); each
  diagnosed visible test's ``output`` ends with a short line naming it. A
  file-level problem (``card.problem``) is said once at the top too.
* Text formats are ``text`` throughout: messages are shown verbatim, never
  rendered as HTML or Markdown.
* Top-level ``output`` (always visible to the student) = a summary line, the
  file's problem and the visible diagnoses; what the student's code printed
  only when every check of the card is ``visible``. The printed output is one
  stream for the whole grading: once a hidden check has called the code, a
  submission that prints its arguments would show that check's inputs, so
  then a sentence says where to see it instead (``grader check``, which runs
  the visible checks only). ``stdout_visibility`` = ``hidden``: the
  autograder's own stdout is for staff.
* A card with ``grader_error``: ``score`` 0, every test 0, and the output says
  the grader failed and no grade was given, so it is never mistaken for a 0
  earned by the code; the error's detail only when no check is hidden (it may
  quote one), else it is in the staff's stdout.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from grader.export import views
from grader.export.gradebook_csv import format_number
from grader.files import write_atomically
from grader.scorecard import CheckResult, Scorecard
from grader.words import plural

# Gradescope's test visibilities (the specification's "Controlling Test Case Visibility").
GRADESCOPE_VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
# Our visibility (grader/schema/assignments.schema.json) -> Gradescope's, unless assignments.yaml's
# ``gradescope_visibility`` says otherwise for some of them.
VISIBILITY = {
    "visible": "visible",
    "hidden": "after_published",
    "after_due_date": "after_due_date",
    "after_published": "after_published",
}
PRINTED_NOT_SHOWN = ("What your code printed is not shown here: it printed it while hidden checks called it, so it "
                     "could show their inputs. Run `grader check` on your file to see what it prints under the "
                     "visible checks.")
ERROR_DETAIL_TO_STAFF = "the detail is in the autograder's output for course staff"


def visibility_map(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """``VISIBILITY`` with assignments.yaml's ``gradescope_visibility`` applied; ValueError on a name
    Gradescope or assignments.yaml does not know (the config schema refuses them first)."""
    mapping = dict(VISIBILITY)
    for ours, theirs in (overrides or {}).items():
        if ours not in VISIBILITY:
            raise ValueError(f"gradescope_visibility: {ours!r} is not a visibility of assignments.yaml "
                             f"(known: {', '.join(VISIBILITY)})")
        if theirs not in GRADESCOPE_VISIBILITIES:
            raise ValueError(f"gradescope_visibility: {theirs!r} is not a Gradescope visibility "
                             f"(known: {', '.join(GRADESCOPE_VISIBILITIES)})")
        mapping[ours] = theirs
    return mapping


def results(card: Scorecard, visibility: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The ``results.json`` object for one card; ``visibility``: ``visibility_map``'s (default: ``VISIBILITY``)."""
    mapping = visibility_map(visibility)
    # Every field comes from the student's view (same checks, same order, same visibilities; hidden ones
    # masked, no seed of the hidden inputs): results.json is what the student reads.
    shown = views.student_view(card)
    failed = bool(shown.grader_error)
    return {
        "score": 0 if failed else shown.final_score,
        "execution_time": round(shown.duration_s),
        "output": _top_output(shown),
        "output_format": "text",
        "stdout_visibility": "hidden",
        "tests": [_test(check, number, failed, mapping[check.visibility])
                  for check, number in zip(shown.checks, _numbers(shown))],
    }


def write(card: Scorecard, path: Path, visibility: Mapping[str, str] | None = None) -> None:
    """Write ``results.json`` atomically (Gradescope reads ``/autograder/results/results.json``).

    Unix newlines only: ``json.dumps`` escapes any carriage return inside a message,
    and the text is written with ``newline=""``, so no platform adds one.
    """
    text = json.dumps(results(card, visibility), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    write_atomically(path, text)


def _any_hidden(card: Scorecard) -> bool:
    return any(views.is_hidden(c) for c in card.checks)


def _top_output(card: Scorecard) -> str:
    """The summary; the printed output only when no hidden check ran (see the module's docstring).
    ``card`` is the student's view: a masked check keeps its visibility, so ``_any_hidden`` still knows."""
    if not card.output:
        return _summary(card)
    if _any_hidden(card):
        return f"{_summary(card)}\n\n{PRINTED_NOT_SHOWN}"
    return f"{_summary(card)}\n\nWhat your code printed:\n{card.output}"


def _summary(card: Scorecard) -> str:
    """The top output's first lines, from the student's view (its diagnoses are only the visible ones)."""
    if card.grader_error:
        detail = ERROR_DETAIL_TO_STAFF if _any_hidden(card) else f"Detail: {card.grader_error}"
        return ("The grader itself failed, so no grade was given for this submission (the 0 is not your score); "
                f"please tell course staff. {detail}")
    lines = [f"{card.assignment}: {format_number(card.final_score)} / {format_number(card.max_score)} "
             f"{plural(card.max_score, 'point')}."]
    if card.problem:
        lines.append(f"Your file: {card.problem}")
    lines += [f"{d.exercise}: {d.text}" for d in card.diagnoses]
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


def _test(check: CheckResult, number: str, grader_failed: bool, visibility: str) -> dict[str, Any]:
    """One test from the student view of a check (a hidden one is already masked)."""
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
        "visibility": visibility,
    }
