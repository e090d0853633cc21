"""What grade-all writes once the cards are in: the staff overrides applied, the late policy again, then
gradebook.csv, summary.json, the cohort views and batch.json."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace

from grader import files
from grader.batch import apply_overrides, cohort, similarity, summary
from grader.export import gradebook_csv
from grader.export.gradebook import Row, row_from_card
from grader.version import __version__
from grader.batch.layout import Layout, read_record, write_record
from grader.batch.reports import redraw_reports
from grader.batch.late import reapply_late, reapply_recorded_late


def write_outputs(layout: Layout, assignment_id: str, exercises: Sequence[str], rows: list[Row], fp: str,
                  complete: bool = True, similarity_threshold: float = similarity.DEFAULT_THRESHOLD,
                  check_fingerprints: dict[str, str] | None = None, say: Callable[[str], None] | None = None,
                  late: Callable[[Row], Row] | None = None,
                  finished: Callable[[list[Row]], None] | None = None, warnings: Sequence[str] = ()) -> None:
    """The views of the rows: gradebook.csv, summary.json, the cohort views (plots, similarity.json,
    reports/_index.html: ``grader.batch.cohort``, never a failure), and batch.json once every student is done.

    First the staff overrides (``grader.batch.overrides``) are applied to the finished cards: the cards,
    their records and pages, and ``rows`` (in place) then carry them, before anything reads a score.
    ``batch.json`` says which assignment, checks and grader made the cards, and each check's
    fingerprint (what an override is pinned to); ``merge`` refuses a folder without one (a shard that did not finish).
    """
    overrides_onto_cards(layout, rows, check_fingerprints, say)
    reapply_late(layout, rows, late or (lambda row: reapply_recorded_late(row, layout)))
    if finished is not None:  # grade_all: changes.csv, from the final rows, before the page that shows it
        finished(rows)
    gradebook_csv.write(rows, exercises, layout.root / "gradebook.csv")
    cards = {r.student: layout.root / r.card for r in rows if r.status == "graded"}
    summarised = summary.summarise(assignment_id, rows, cards, warnings)  # grader.batch.fallbacks
    files.write_atomically(layout.root / "summary.json", json.dumps(summarised, indent=2) + "\n")
    if not complete:
        cohort.clear(layout.root)  # an interrupted run stops fast; the run that finishes draws them
        return
    cohort.write(layout.root, summarised, rows, similarity_threshold)
    files.write_atomically(layout.manifest, json.dumps(
        {"assignment": assignment_id, "exercises": list(exercises), "fingerprint": fp, "grader": __version__,
         "check_fingerprints": check_fingerprints}, indent=2) + "\n")


def overrides_onto_cards(layout: Layout, rows: list[Row], check_fingerprints: dict[str, str] | None,
                     say: Callable[[str], None] | None) -> None:
    """``overrides.jsonl`` onto the graded cards (raw cards: before any late penalty on the rows); a changed
    card's row (in ``rows``), record and HTML page follow it. Entries that no longer match are listed for review."""
    graded = {r.student: layout.root / r.card for r in rows if r.status == "graded" and r.card}
    rewritten, _ = apply_overrides.apply_to_folder(layout.root, graded, check_fingerprints, say)
    for i, row in enumerate(rows):
        card = rewritten.get(row.student)
        if card is None:
            continue
        new = row_from_card(row.student, card, row.file, row.card)
        rows[i] = replace(row, score=new.score, exercises=new.exercises, message=new.message)
        old = read_record(layout, row.student)
        write_record(layout, rows[i], old[1] if old else "")
        redraw_reports(layout, row.student, card)
