"""Canvas LMS "Import" gradebook CSV: one assignment column for the roster's Canvas students.

The layout is the one Canvas' own gradebook export writes and its importer
reads. Sources: Canvas' importer in instructure/canvas-lms
(``app/models/gradebook_importer.rb``, the upload step
``process_gradebook_upload`` and its fixtures such as
``spec/fixtures/gradebooks/basic_course_with_sis_login_id.csv``); the
user-facing guide is Canvas' "How do I import grades in the Gradebook?"::

    Student,ID,SIS User ID,SIS Login ID,Section,<assignment title>
    Points Possible,,,,,<points possible>
    "Lovelace, Ada",1234,s001,ada@uni.example,Sec A,132.5

* ``Student`` - a display name (the roster's ``name``, else the student id).
  Canvas matches a line by ``ID`` first, then ``SIS User ID``, then
  ``SIS Login ID``, and only then by this name.
* ``ID`` - the Canvas user id (roster ``canvas_id``). Roster students without
  one are left out: Canvas could only guess who they are.
* ``SIS User ID``, ``SIS Login ID``, ``Section`` - from the roster, may be empty.
  The importer looks for these five columns first, in this order.
* ``<assignment title>`` - scores in points, as on the card. Canvas matches a
  header ``Title (1234)`` to assignment id 1234, else a column whose title is
  exactly this text, else it proposes to create a new assignment. Pass
  ``"Title (ID)"`` to be sure which assignment is updated. A title Canvas
  would not read as an assignment (one of the five columns above, or one
  containing ``Final Score`` and the other computed columns) is refused.
* ``Points Possible`` - the second line, which Canvas' export writes and its
  importer recognises by that first cell. Canvas uses it as the points of an
  assignment the import creates; it does not change an existing assignment.

An ``error`` row (the grader failed, two files, an unreadable file) gets no
line at all: Canvas only touches the students a file lists, so a grade that
is already there stays, and a grader error never becomes a 0 or a blank.
A ``missing`` student (nothing submitted) or one with no row gets an empty
cell: "no score" to Canvas. For a student without a grade in Canvas that
changes nothing; for one who already has a grade, Canvas' importer counts
blank-versus-grade as a change and lists it on the review page it shows
before anything is saved (``no_change_to_value?`` in the importer) - review
that page.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from grader.export.gradebook_csv import format_number
from grader.files import write_atomically
from grader.export.gradebook import Row
from grader.coursedata.roster import RosterEntry

STUDENT_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
POINTS_POSSIBLE = "Points Possible"
# Canvas' importer drops any column whose header contains one of these (its computed, read-only columns).
READ_ONLY_COLUMNS = ("Current Score", "Current Points", "Current Grade", "Final Score", "Final Points",
                     "Final Grade", "Override Score", "Override Grade", "Override Status")


def header(assignment_title: str) -> list[str]:
    """Column names, in file order."""
    return [*STUDENT_COLUMNS, assignment_title]


def write(rows: Sequence[Row], roster: Sequence[RosterEntry], assignment_title: str, points_possible: float,
          path: Path) -> None:
    """Write the import file for one assignment, atomically; one line per roster student with a canvas_id."""
    if not assignment_title.strip():
        raise ValueError("the Canvas assignment title is empty")
    if assignment_title in STUDENT_COLUMNS or any(name in assignment_title for name in READ_ONLY_COLUMNS):
        raise ValueError(f"Canvas would not read {assignment_title!r} as an assignment column: rename it")
    in_canvas = [entry for entry in roster if entry.canvas_id]
    if not in_canvas:
        raise ValueError("no roster entry has a canvas_id: add the Canvas user ids (the ID column of a Canvas "
                         "gradebook export) to the roster")
    by_student: dict[str, Row] = {}
    for row in rows:
        if row.student in by_student:
            raise ValueError(f"two gradebook rows for student {row.student!r}")
        by_student[row.student] = row

    buffer = io.StringIO(newline="")
    out = csv.writer(buffer)
    out.writerow(header(assignment_title))
    out.writerow([POINTS_POSSIBLE, "", "", "", "", format_number(points_possible)])
    for entry in in_canvas:
        row = by_student.get(entry.student)
        if row is not None and row.status == "error":
            continue  # leave whatever grade Canvas holds: an error is not a grade
        score = format_number(row.score) if row is not None and row.status == "graded" else ""
        out.writerow([entry.name or entry.student, entry.canvas_id, entry.sis_user_id, entry.sis_login_id,
                      entry.section, score])
    write_atomically(path, buffer.getvalue())
