"""Which worksheet row is which graded student, and what each row gets (``grader export moodle``).

A worksheet row is a student of GRADED when the student's id is the one
grade-all gives that row when the worksheet is its roster (``ID number``, else
``Username``, else ``Email address``: ``grader.coursedata.roster``), or when the
student's file came from that participant's folder of Moodle's "Download all
submissions" (``Jane Doe_1234567_assignsubmission_file_/``: the participant id
is in the name, ``grader.coursedata.lms_readers``). Only ``graded`` students get a
grade; ``error`` and ``missing`` students, and rows GRADED does not know, are
left as Moodle wrote them, and every one of them is named in a note (the
command prints the notes on stderr), as is a graded student the worksheet
does not list.

The comment a student reads in Moodle: the score line (and the late rule, if a
penalty was taken) and the top diagnosis of the student's view of the card
(``views.student_view``: a mistake only hidden checks revealed is not named),
else, for a zero, why it is one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from grader.coursedata.lms_readers import MOODLE_ENTRY
from grader.coursedata.roster import RosterError, load_roster
from grader.coursedata import moodle_worksheet as worksheet
from grader.export import moodle, views
from grader.export.gradebook import Row, zero_reason
from grader.export.gradebook_csv import format_number
from grader.scorecard import Scorecard
from grader.scoring import UNNAMED_ID
from grader.words import count, plural

DECIMALS = 5  # assign_grades.grade keeps five decimals


class PlanError(ValueError):
    """GRADED and the worksheet cannot be put together (one line)."""


def upload(sheet: worksheet.Worksheet, rows: Sequence[Row], cards: Mapping[str, Scorecard], out: Path,
           scale: bool = False) -> list[str]:
    """Write the filled worksheet to ``out``; the notes for stderr, one line each."""
    matched = participants(sheet, rows)
    grades = {}
    for pid, row in matched.items():
        if row.status == "graded":
            grades[pid] = grade_of(row, cards.get(row.student), sheet.maximum, scale)
    if not grades and any(r.status == "graded" for r in rows):
        raise PlanError(f"{sheet.path}: none of the graded students is on this worksheet (matched by ID number, "
                        "Username or Email address, or by the participant id of a Moodle download): is it this "
                        "assignment's worksheet?")
    filled, locked = moodle.fill(sheet, grades)
    worksheet.write(sheet, filled, out)
    return _notes(sheet, rows, matched, grades, locked)


def participants(sheet: worksheet.Worksheet, rows: Sequence[Row]) -> dict[str, Row]:
    """Participant id -> GRADED's row, for the worksheet's participants GRADED knows."""
    on_sheet = {sheet.participant(r) for r in sheet.rows}
    by_student = {r.student: r for r in rows}
    found: dict[str, Row] = {}
    try:
        entries = load_roster(sheet.path).entries
    except RosterError:  # not readable as a roster (blind marking hides the names): the download's ids remain
        entries = ()
    for entry in entries:
        if entry.participant in on_sheet and entry.student in by_student:
            found[entry.participant] = by_student[entry.student]
    placed = {r.student for r in found.values()}
    for row in rows:
        pid = download_participant(row.file)
        if pid in on_sheet and pid not in found and row.student not in placed:
            found[pid] = row
            placed.add(row.student)
    return found


def download_participant(file: str) -> str:
    """The participant id in a Moodle download's entry name on the file's path, else ''."""
    for part in PurePosixPath(file).parts:
        match = MOODLE_ENTRY.match(part)
        if match:
            return match["id"]
    return ""


def grade_of(row: Row, card: Scorecard | None, maximum: float, scale: bool) -> moodle.Grade:
    """The points Moodle gets for a graded row, on the worksheet's maximum, and the comment."""
    assert row.score is not None and row.max_score is not None  # a graded row has both
    ours = row.max_score
    if not math.isclose(ours, maximum, rel_tol=0, abs_tol=1e-9):
        if not scale:
            raise PlanError(f"GRADED's maximum is {format_number(ours)} {plural(ours, 'point')} but the worksheet's Maximum grade "
                            f"is {format_number(maximum)}: set the Moodle assignment's maximum grade to "
                            f"{format_number(ours)}, or pass --scale to write each score x "
                            f"{format_number(maximum)}/{format_number(ours)}")
        if ours <= 0:
            raise PlanError(f"{row.student}: a maximum of {format_number(ours)} {plural(ours, 'point')} cannot be scaled")
    points = row.score * maximum / ours if scale else row.score
    points = min(max(round(points, DECIMALS), 0.0), maximum)
    line = f"Autograder score: {format_number(row.score)} / {format_number(ours)} {plural(ours, 'point')}"
    if scale and points != row.score:
        line += f" ({format_number(points)} / {format_number(maximum)} in Moodle)"
    lines = [line]
    if row.penalty:
        lines.append(f"Late: {row.late_rule} (before it: {format_number(row.raw_score)})")
    if card is not None:  # a zero explained by the checks only when they scored 0 (not a cutoff's: the late line)
        lines.append(top_diagnosis(card) or (zero_reason(views.student_view(card)) if card.score == 0 else ""))
    return moodle.Grade(points, moodle.comment(lines))


def top_diagnosis(card: Scorecard) -> str:
    """The first named mistake a student may read, else the first property that broke; '' when none."""
    seen = views.student_view(card).diagnoses
    named = [d for d in seen if d.id != UNNAMED_ID] or list(seen)
    return f"{named[0].exercise}: {named[0].text}" if named else ""


def _notes(sheet: worksheet.Worksheet, rows: Sequence[Row], matched: Mapping[str, Row], grades: Mapping[str, moodle.Grade],
           locked: Sequence[str]) -> list[str]:
    """What the upload leaves as Moodle had it, and what it replaces, in lines for stderr."""
    by_pid = {sheet.participant(r): r for r in sheet.rows}
    notes = []
    for pid, row in matched.items():
        if row.status == "error":
            why = " ".join(row.message.split())
            notes.append(f"moodle: {row.student} left as Moodle has it (error: {why}); their Moodle grade is "
                         "unchanged")
    for pid in locked:
        notes.append(f"moodle: {matched[pid].student} left as Moodle has it: the worksheet says the grade cannot "
                     "be changed (locked or overridden in the gradebook)")
    missing = sorted(r.student for r in matched.values() if r.status == "missing")
    if missing:
        notes.append(f"moodle: {len(missing)} with nothing submitted left as Moodle has them: {', '.join(missing)}")
    unknown = [sheet.who(r) for pid, r in by_pid.items() if pid not in matched]
    if unknown:
        notes.append(f"moodle: {count(len(unknown), 'worksheet row')} GRADED does not know left as Moodle has them: "
                     f"{', '.join(unknown)}")
    placed = {r.student for r in matched.values()}
    absent = sorted(r.student for r in rows if r.status == "graded" and r.student not in placed)
    if absent:
        notes.append(f"moodle: graded but not on the worksheet, so not in the upload: {', '.join(absent)}")
    replaced = _replaced(sheet, by_pid, matched, grades, locked)
    if replaced:
        notes.append(f"moodle: {count(len(replaced), 'grade')} already on the worksheet replaced: {', '.join(replaced)}")
    if sheet.index(worksheet.FEEDBACK) is None:
        notes.append(f"moodle: the worksheet has no {worksheet.FEEDBACK!r} column (feedback comments are off for this "
                     "assignment): grades only")
    if sheet.delimiter != ",":
        notes.append(f"moodle: the worksheet is {worksheet.DELIMITERS[sheet.delimiter]}-separated: choose that "
                     "separator in Moodle's upload form")
    return notes



def _replaced(sheet: worksheet.Worksheet, by_pid: Mapping[str, tuple[str, ...]], matched: Mapping[str, Row],
              grades: Mapping[str, moodle.Grade], locked: Sequence[str]) -> list[str]:
    """``bob (6.00 -> 7.5)`` for every row whose grade on the worksheet our upload changes."""
    at = sheet.header.index(worksheet.GRADE)
    out = []
    for pid, grade in grades.items():
        before = by_pid[pid][at].strip()
        if pid in locked or not before:
            continue
        if worksheet.parse_number(before) != grade.points:
            out.append(f"{matched[pid].student} ({before} -> {format_number(grade.points)})")
    return out
