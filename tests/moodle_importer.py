"""Moodle's "Upload grading worksheet", restated as a checker: what it would do with a file.

Written from Moodle's own code (github.com/moodle/moodle), independently of
``grader/coursedata/moodle_worksheet.py`` and ``grader/export/moodle.py``, so
the tests can run an upload through the rules instead of through our own
reading of them. No Moodle code is copied; each
rule cites the file and function it comes from. ``Moodle`` is what the server
holds before the upload (per participant: the grade, when it was last
modified, whether grading is disabled, the feedback comment); ``upload``
returns what it would hold after, and why each row it skipped was skipped.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

# mod/assign/lang/en/assign.php and lang/en/moodle.php: the English strings the importer compares headers with.
# importgradeslib.php init(): get_string('gradenoun') / get_string('grade'), get_string('recordid', 'assign'),
# get_string('lastmodifiedgrade', 'assign'); next(): get_string('hiddenuser', 'assign') is 'Participant '.
GRADE, IDENTIFIER, MODIFIED, HIDDEN_USER = "Grade", "Identifier", "Last modified (grade)", "Participant "
# assignfeedback_comments get_editor_fields(): the comments' column is named after the plugin, 'Feedback comments'.
FEEDBACK = "Feedback comments"
DELIMITERS = {"comma": ",", "semicolon": ";", "colon": ":", "tab": "\t"}  # csvlib.class.php get_delimiter()
USERDATE = "%A, %d %B %Y, %I:%M %p"  # langconfig strftimedatetime, as gradingtable.php col_timemarked() writes it


class Refused(Exception):
    """Moodle shows an error page and imports nothing (``csvemptyfile``, ``csvweirdcolumns``,
    ``invalidgradeimport``)."""


@dataclass
class Held:
    """One participant's state in Moodle before the upload."""

    grade: float | None = None  # assign_grades.grade; None: no grade record at all
    modified: int = 0  # assign_grades.timemodified (Unix seconds)
    disabled: bool = False  # assign::grading_disabled(): locked or overridden in the gradebook
    feedback: str = ""


@dataclass
class Moodle:
    """An assignment out of ``maximum`` points, its participants by participant id, the uploader's language."""

    maximum: float
    participants: dict[str, Held]
    decsep: str = "."  # langconfig 'decsep' of the uploading teacher's language


@dataclass
class Result:
    grades: dict[str, float] = field(default_factory=dict)  # participant -> the grade Moodle now holds (changed)
    feedback: dict[str, str] = field(default_factory=dict)  # participant -> the comment Moodle now holds (changed)
    skipped: dict[str, str] = field(default_factory=dict)  # participant -> why its grade was not taken


def upload(data: bytes, moodle: Moodle, *, encoding: str = "utf-8", separator: str = "comma",
           ignore_modified: bool = False) -> Result:
    """What Moodle does with ``data`` uploaded with these form options."""
    header, rows = read_csv(data, encoding, separator)
    # importgradeslib.php init(): a column is found by == against the English string (the last one wins);
    # without Identifier, Grade and Last modified (grade) the import is refused (locallib.php: invalidgradeimport).
    index = {name: i for i, name in enumerate(header)}
    if not {IDENTIFIER, GRADE, MODIFIED} <= set(index):
        raise Refused("invalidgradeimport")
    result = Result()
    for row in rows:
        # importgradeslib.php next(): the participant id is what follows strlen('Participant '); rows of
        # unknown participants are passed over silently.
        pid = row[index[IDENTIFIER]][len(HIDDEN_USER):]
        held = moodle.participants.get(pid)
        if held is None:
            continue
        grade = unformat_float(row[index[GRADE]], moodle.decsep)
        modified = strtotime(row[index[MODIFIED]])
        # locallib.php process_import_grades(): "Do not count the seconds when comparing modified dates".
        stale = held.grade is not None and held.modified > modified + 60
        why = skip_reason(held, grade, stale, ignore_modified, moodle.maximum)
        if why:
            result.skipped[pid] = why
        else:
            assert grade is not None
            result.grades[pid] = grade
        # process_import_grades(): feedback is written whenever the row is not stale (even if the grade was
        # skipped), and only when it differs from what is held. importgradeslib.php next() reads a feedback
        # column only when its index is not empty(): a feedback column first in the file is never read.
        if (ignore_modified or not stale) and index.get(FEEDBACK):
            new = row[index[FEEDBACK]]
            if new != held.feedback:
                result.feedback[pid] = new
    return result


def skip_reason(held: Held, grade: float | None, stale: bool, ignore_modified: bool, maximum: float) -> str:
    """locallib.php process_import_grades(): the checks, in the importer's order; '' when the grade is taken."""
    if held.grade is not None and held.grade == grade:
        return "grade not modified"
    if grade is None or grade < 0:
        return "grade has no value"
    if not ignore_modified and stale:
        return "grade has been modified in Moodle since the download"
    if held.disabled:
        return "grade is locked"
    if grade > maximum:
        return "out of range"
    return ""


def read_csv(data: bytes, encoding: str, separator: str) -> tuple[list[str], list[list[str]]]:
    """lib/csvlib.class.php csv_import_reader::load_csv_content()."""
    text = data.decode(encoding)  # core_text::convert($content, $encoding, 'utf-8')
    text = text.removeprefix("\ufeff")  # core_text::trim_utf8_bom()
    text = re.sub(r"\r\n?", "\n", text).strip()  # "Fix mac/dos newlines", then trim() the whole content
    records = [r for r in csv.reader(io.StringIO(text), delimiter=DELIMITERS[separator], quotechar='"') if r]
    if not records:  # fgetcsv skips a blank line (one null field); nothing left: csvemptyfile
        raise Refused("csvemptyfile")
    header, rows = records[0], records[1:]
    if any(len(r) != len(header) for r in rows):  # "check to make sure that the data columns match up"
        raise Refused("csvweirdcolumns")
    return header, rows


def unformat_float(text: str, decsep: str) -> float | None:
    """lib/moodlelib.php unformat_float(): trimmed, '' is null, spaces (thousands) removed, the language's
    decimal separator made '.', then PHP's (float) cast, which reads the longest numeric prefix (else 0)."""
    text = text.strip()
    if text == "":
        return None
    text = text.replace(" ", "").replace(decsep, ".")
    prefix = re.match(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", text)
    return float(prefix.group(0)) if prefix else 0.0


def strtotime(text: str) -> int:
    """PHP strtotime() of what gradingtable.php col_timemarked() writes (userdate(), or '-' when there is no
    grade): Unix seconds, and false (0 in the comparison) for what it cannot read. The fixtures' times are UTC."""
    try:
        return int(datetime.strptime(text.strip(), USERDATE).replace(tzinfo=timezone.utc).timestamp())
    except ValueError:
        return 0


def held_as_downloaded(data: bytes, decsep: str = ".") -> dict[str, Held]:
    """The participants of a worksheet as Moodle held them when it wrote it (gradingtable.php: the grade,
    ``format_float``'d; col_timemarked(); col_gradecanbechanged() 'Yes'/'No'; the comment's text)."""
    header, rows = read_csv(data, "utf-8", "comma")
    at = {name: i for i, name in enumerate(header)}
    held = {}
    for row in rows:
        grade = unformat_float(row[at[GRADE]], decsep)
        held[row[at[IDENTIFIER]][len(HIDDEN_USER):]] = Held(
            grade=grade, modified=strtotime(row[at[MODIFIED]]),
            disabled=row[at["Grade can be changed"]] == "No", feedback=row[at[FEEDBACK]] if FEEDBACK in at else "")
    return held
