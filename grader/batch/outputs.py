"""What grade-all and merge write once every card is final (``grader.batch.final``): gradebook.csv,
summary.json, the cohort views and batch.json, each drawn once from the final rows and cards."""

from __future__ import annotations

import json
from collections.abc import Sequence

from grader import files
from grader.batch import cohort, similarity, summary
from grader.coursedata.lms_files import NotGraded
from grader.export import gradebook_csv
from grader.export.gradebook import Row
from grader.version import __version__
from grader.batch.layout import Layout


def write_outputs(layout: Layout, assignment_id: str, exercises: Sequence[str], rows: list[Row], fp: str,
                  complete: bool = True, similarity_threshold: float = similarity.DEFAULT_THRESHOLD,
                  check_fingerprints: dict[str, str] | None = None, warnings: Sequence[str] = (),
                  not_graded: Sequence[NotGraded] = ()) -> None:
    """The views of the final rows: gradebook.csv, summary.json, the cohort views (plots, similarity.json,
    reports/_index.html: ``grader.batch.cohort``, never a failure), and batch.json once every student is done.

    ``batch.json`` says which assignment, checks and grader made the cards, and each check's
    fingerprint (what an override is pinned to); ``merge`` refuses a folder without one (a shard that did not finish).
    ``warnings``: what the run fell back on (``grader.batch.fallbacks``), and ``not_graded``: the uploads
    and zip members passed over (``grader.batch.intake``), both kept in summary.json.
    """
    gradebook_csv.write(rows, exercises, layout.root / "gradebook.csv")
    cards = {r.student: layout.root / r.card for r in rows if r.status == "graded"}
    summarised = summary.summarise(assignment_id, rows, cards, warnings, not_graded)  # grader.batch.fallbacks
    files.write_atomically(layout.root / "summary.json", json.dumps(summarised, indent=2) + "\n")
    if not complete:
        cohort.clear(layout.root)  # an interrupted run stops fast; the run that finishes draws them
        return
    cohort.write(layout.root, summarised, rows, similarity_threshold)
    files.write_atomically(layout.manifest, json.dumps(
        {"assignment": assignment_id, "exercises": list(exercises), "fingerprint": fp, "grader": __version__,
         "check_fingerprints": check_fingerprints}, indent=2) + "\n")
