"""The class gradebook as one CSV: a line per student, a column per exercise.

For course staff and spreadsheets, not for an LMS (see ``canvas.py``). A
score cell is empty, never 0, unless the student was graded: ``missing`` and
``error`` rows say why in ``status`` and ``message``, so a grader failure is
never read as a zero. RFC 4180 quoting (the csv module's default dialect,
CRLF line ends), UTF-8 without a byte-order mark.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

from grader.files import write_atomically
from grader.export.gradebook import Row

LEADING = ("student", "file", "sha256", "score", "max_score")
TRAILING = ("status", "message")
# After the existing columns, so readers by position keep working: ``score`` is the final score (after the late
# policy), ``raw_score`` the card's, ``penalty`` the points taken off, ``lateness`` hours late, ``late_rule`` why.
LATE = ("raw_score", "penalty", "lateness", "late_rule")


def header(exercises: Sequence[str], late: bool = False) -> list[str]:
    """Column names, in file order; the late-policy columns last, only where a policy was applied."""
    return [*LEADING, *exercises, *TRAILING, *(LATE if late else ())]


def write(rows: Sequence[Row], exercises: Sequence[str], path: Path, late: bool | None = None) -> None:
    """Write ``rows`` in the order given, atomically, so a reader never sees half a gradebook.

    ``exercises`` names the per-exercise columns and their order; a graded row's
    points for an exercise it does not list are left empty, and exercises not
    named are not written. ``late`` (default: whether any row had a late policy applied) adds the
    ``LATE`` columns; a course without deadlines gets the same file as before them.
    """
    late = any(r.late_rule for r in rows) if late is None else late
    names = header(exercises, late)
    if len(set(names)) != len(names):
        raise ValueError(f"gradebook columns must be unique; exercises {list(exercises)} clash with {names}")
    buffer = io.StringIO(newline="")
    out = csv.writer(buffer)
    out.writerow(names)
    for row in rows:
        graded = row.status == "graded"
        points = dict(row.exercises) if graded else {}
        cells = [
            spreadsheet_safe(row.student), spreadsheet_safe(row.file), row.sha256,
            format_number(row.score) if graded else "",
            format_number(row.max_score) if graded else "",
            *(format_number(points.get(e)) for e in exercises),
            row.status, spreadsheet_safe(row.message),
        ]
        out.writerow(cells if not late else [
            *cells,
            format_number(row.raw_score if row.raw_score is not None else row.score) if graded else "",
            format_number(row.penalty) if graded else "",
            format_number(row.lateness) if graded else "",
            spreadsheet_safe(row.late_rule),
        ])
    write_atomically(path, buffer.getvalue())


def spreadsheet_safe(text: str) -> str:
    """Text a spreadsheet will not run as a formula (CSV injection): names come from student files.

    A cell starting with ``= + - @`` (or a tab or CR) gets a leading ``'``, as
    OWASP advises; every other cell is written as it is.
    """
    return f"'{text}" if text.startswith(("=", "+", "-", "@", "\t", "\r")) else text


def format_number(x: float | None) -> str:
    """Shortest exact decimal without exponent (132.5, 0, 12); '' for None.

    ``format(x, 'g')`` would round to 6 digits and switch to ``1e-06`` style,
    which spreadsheets and Canvas' importer do not all read back as numbers.
    """
    if x is None:
        return ""
    if not math.isfinite(x):
        raise ValueError(f"not a finite score: {x!r}")
    return format(Decimal(repr(float(x) + 0.0)).normalize(), "f")  # + 0.0 turns -0.0 into 0.0
