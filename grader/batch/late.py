"""The late policy (``grader.deadlines``) applied to grade-all's rows on every run, and by ``merge``
again from what each shard recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from grader import deadlines, files
from grader.config import AssignmentConfig
from grader.export.gradebook import Row, zero_reason
from grader.scorecard import Scorecard
from grader.batch.layout import Layout, read_record, write_record
from grader.batch.reports import redraw_reports, write_report

if TYPE_CHECKING:
    from grader.batch.run import BatchOptions


def apply_late(row: Row, assignment: AssignmentConfig, options: BatchOptions, layout: Layout) -> Row:
    """A graded row under the assignment's late policy (``grader.deadlines``), on every run.

    The raw score is the card's (checks and staff overrides), so applying it again changes nothing:
    ``score`` becomes the final score and ``raw_score`` the card's; the card gets (or updates) its
    ``late`` section, and the student's report is drawn again when it changed."""
    policy = assignment.deadline
    if policy is None or row.status != "graded":
        return row
    card = read_card(layout, row.student)
    raw = card.score if card is not None else row.raw_score if row.raw_score is not None else row.score or 0.0
    when = options.submitted_at.get(row.student) or options.submitted_at_all or row.submitted_at or None
    result = deadlines.apply(policy, when, row.student, options.extensions, raw)
    return _with_late(row, card, raw, result.to_dict(raw, policy), layout, options)


def reapply_recorded_late(row: Row, layout: Layout) -> Row:
    """``merge``: the late policy each shard applied, again on the card's raw score (which an override
    may have changed). The penalty's percent depends on the time only, so it carries over as recorded."""
    card = read_card(layout, row.student) if row.status == "graded" else None
    if card is None or not card.late:
        return row
    return _with_late(row, card, card.score, deadlines.rescore(card.late, card.score), layout, None)


def _with_late(row: Row, card: Scorecard | None, raw: float, section: dict[str, Any], layout: Layout,
               options: BatchOptions | None) -> Row:
    """``row`` with the late ``section``'s numbers; the card (and its reports) rewritten when it changed."""
    final = float(section["final_score"])
    if final == 0 and raw != 0:
        message = str(section["rule"])  # the policy made the zero: say so, as every zero is explained
    else:
        message = zero_reason(card) if card is not None and raw == 0 else row.message if card is None else ""
    new = replace(row, score=final, raw_score=raw, penalty=float(section["penalty_points"]),
                  lateness=section["lateness_hours"], late_rule=str(section["rule"]), message=message)
    if card is not None and card.late != section:
        from grader import scorecard

        card = replace(card, late=section)
        files.write_atomically(layout.card(row.student), scorecard.to_valid_json(card))
        if options is not None and options.report is not None:
            write_report(layout, row.student, card, options.view, options.report)
        else:
            redraw_reports(layout, row.student, card)
    return new


def read_card(layout: Layout, student: str) -> Scorecard | None:
    try:
        return Scorecard.from_dict(json.loads(layout.card(student).read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def reapply_late(layout: Layout, rows: list[Row], late: Callable[[Row], Row]) -> None:
    """The late policy again after the staff overrides changed cards (``rows`` in place, and their records)."""
    for i, row in enumerate(rows):
        new = late(row)
        if new != row:
            rows[i] = new
            old = read_record(layout, row.student)
            write_record(layout, new, old[1] if old else "")
