"""Moodle's grading worksheet, filled in: the way back for ``grader export moodle``.

An instructor downloads the assignment's worksheet (View all submissions ->
Download grading worksheet), ``grader export moodle GRADED --worksheet ws.csv
--out upload.csv`` writes it back with ``Grade`` and ``Feedback comments``
filled for the graded students, and Moodle's "Upload grading worksheet" takes
it. Every other cell is written as Moodle wrote it. Reading and writing the
file, with the importer's rules for it, is ``grader/coursedata/moodle_worksheet.py``;
what goes into the cells follows the importer too (``tests/moodle_importer.py``
restates it as a checker the tests run every upload through):

* A grade is read with ``unformat_float``: the user's decimal separator becomes
  ``.``, so a grade written with ``.`` reads the same in every language; it is
  always written so. An empty grade is skipped, as is one above the assignment's
  maximum or below 0, one equal to the grade Moodle holds, and one whose
  student Moodle will not let be graded (``Grade can be changed`` = ``No``:
  locked or overridden in the gradebook). Those rows are left exactly as they
  came and named.
* ``Last modified (grade)`` is compared with the grade Moodle holds: a row
  whose grade changed in Moodle after the download (more than 60 s later) is
  skipped, grade and feedback, unless "Ignore modified" is ticked. It is never
  rewritten here, so that protection stays.
* Feedback comments are stored as HTML (``assignfeedback_comments``,
  ``FORMAT_HTML``): ours is escaped, a paragraph per line, after any comment
  course staff wrote; an earlier export's paragraphs are replaced, not repeated.

``Maximum grade`` must equal GRADED's maximum: a grade on another scale would
be silently wrong, so a difference is refused unless ``scale`` asks for score x
worksheet maximum / our maximum (``moodle_plan.py``).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from grader.coursedata.moodle_worksheet import CAN_CHANGE, FEEDBACK, GRADE, Worksheet
from grader.export.gradebook_csv import format_number
from grader.words import clip, code_spans

MARKER = "<p>Autograder score: "  # how an earlier export's comment is found again
COMMENT_CHARS = 600


@dataclass(frozen=True)
class Grade:
    """What goes into one participant's row: points on Moodle's scale and our comment (HTML)."""

    points: float
    comment: str


def comment(lines: Sequence[str]) -> str:
    """Our feedback comment as Moodle stores comments (HTML): one escaped paragraph per line, each `span` in
    backticks (how messages mark code) shown as code, as on the report page."""
    kept = [clip(" ".join(line.split()), COMMENT_CHARS) for line in lines if line.strip()]
    return "".join(f"<p>{code_spans(html.escape(line, quote=False))}</p>" for line in kept)


def merged_comment(existing: str, ours: str) -> str:
    """Ours after whatever course staff wrote; an earlier export's part (from ``MARKER`` on) is replaced."""
    at = existing.find(MARKER)
    kept = existing if at < 0 else existing[:at]
    return kept + ours if kept.strip() else ours


def fill(sheet: Worksheet, grades: Mapping[str, Grade]) -> tuple[list[tuple[str, ...]], list[str]]:
    """The rows with ``grades`` (by participant id) written in, and the participants left as they were because
    Moodle would not let their grade change."""
    grade_at, feedback_at, change_at = sheet.index(GRADE), sheet.index(FEEDBACK), sheet.index(CAN_CHANGE)
    assert grade_at is not None  # read_worksheet checked it
    rows, locked = [], []
    for row in sheet.rows:
        grade = grades.get(sheet.participant(row))
        if grade is None:
            rows.append(row)
            continue
        if grade.points < 0 or grade.points > sheet.maximum:
            raise ValueError(f"{grade.points} is outside 0..{sheet.maximum}, which Moodle would skip")
        if change_at is not None and row[change_at].strip().lower() == "no":
            locked.append(sheet.participant(row))
            rows.append(row)
            continue
        cells = list(row)
        cells[grade_at] = format_number(grade.points)
        if feedback_at is not None:
            cells[feedback_at] = merged_comment(row[feedback_at], grade.comment)
        rows.append(tuple(cells))
    return rows, locked
