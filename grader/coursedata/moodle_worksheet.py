"""Moodle's grading worksheet as a file: read as Moodle's importer reads it, written back as Moodle wrote it.

An instructor downloads the assignment's worksheet (View all submissions ->
Download grading worksheet); ``grader export moodle`` fills it in
(``grader/export/moodle.py``, ``moodle_plan.py``) and writes it back for
Moodle's "Upload grading worksheet". The rules of the file are the importer's,
read from moodle/moodle (``mod/assign/feedback/offline/``:
``importgradeslib.php`` ``assignfeedback_offline_grade_importer::init``/``next``,
``locallib.php`` ``process_import_grades``; the download is
``mod/assign/gradingtable.php``; the CSV reading ``lib/csvlib.class.php``
``csv_import_reader::load_csv_content``); ``tests/moodle_importer.py`` restates
them as a checker the tests run every upload through:

* The importer finds its columns by their exact English header: ``Identifier``
  (``Participant 1234567``: the number after the word is the participant id),
  ``Grade`` and ``Last modified (grade)``; without all three the upload is
  refused. ``Feedback comments`` is read where the comments plugin is on.
  A worksheet downloaded in another language has other headers: refused here,
  with the advice to download it in English.
* Every line must have as many cells as the header (else Moodle refuses the
  whole file); a UTF-8 byte-order mark is dropped; the separator is chosen in
  the upload form (the download's is a comma; one saved with semicolons or
  tabs is written back with the same, and said).
* ``Maximum grade`` (``Maximum Grade`` in older versions) is read as
  ``format_float`` writes it in any language; a worksheet for a scale (a
  ``Scale`` column) takes no points and is refused.

Course data, not an export: the same worksheet is also a class list
(``roster.py`` reads it as one).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from grader.files import write_atomically
from grader.words import count

IDENTIFIER, GRADE, MODIFIED = "Identifier", "Grade", "Last modified (grade)"  # the importer's own three
FEEDBACK = "Feedback comments"
CAN_CHANGE = "Grade can be changed"
MAXIMUM = "maximum grade"  # matched case-insensitively: the importer never reads it
SCALE = "Scale"
FULL_NAME = "Full name"
PARTICIPANT = re.compile(r"^Participant (\d+)$")
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}


class WorksheetError(ValueError):
    """A file that is not a Moodle grading worksheet we can fill (one line, naming the file)."""


@dataclass(frozen=True)
class Worksheet:
    """A worksheet as read: its header and rows cell for cell, and what writing it back must keep."""

    path: Path
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]  # blank lines left out, as Moodle's reader leaves them out
    delimiter: str
    bom: bool
    maximum: float

    def index(self, name: str) -> int | None:
        """The column named exactly ``name`` (the importer's matching), else None."""
        return self.header.index(name) if name in self.header else None

    def participant(self, row: Sequence[str]) -> str:
        match = PARTICIPANT.match(row[self.header.index(IDENTIFIER)])
        return match.group(1) if match else ""

    def who(self, row: Sequence[str]) -> str:
        """``Participant 1234567 (Jane Doe)``: how a row is named in a message."""
        name = self.index(FULL_NAME)
        label = row[self.header.index(IDENTIFIER)]
        return f"{label} ({row[name]})" if name is not None and row[name].strip() else label


def read_worksheet(path: Path) -> Worksheet:
    """The worksheet in ``path``, or WorksheetError saying in one line why Moodle's importer (or we) would
    not take it."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise WorksheetError(f"{path}: cannot read the worksheet: {exc.strerror or exc}") from None
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise WorksheetError(f"{path}: line {line}: not UTF-8 (download the worksheet again, or save it as "
                             "'CSV UTF-8')") from None
    delimiter = _delimiter(text)
    try:
        records = [(n, r) for n, r in _records(text, delimiter) if any(cell.strip() for cell in r)]
    except csv.Error as exc:
        raise WorksheetError(f"{path}: not valid CSV: {exc}") from None
    if not records:
        raise WorksheetError(f"{path}: empty file: not a Moodle grading worksheet")
    header = tuple(records[0][1])
    _check_header(path, header)
    rows = []
    for line, record in records[1:]:
        if len(record) != len(header):
            raise WorksheetError(f"{path}: line {line}: {count(len(record), 'cell')}, the header has {len(header)}: "
                                 "Moodle refuses the whole file")
        if not PARTICIPANT.match(record[header.index(IDENTIFIER)]):
            raise WorksheetError(f"{path}: line {line}: Identifier {record[header.index(IDENTIFIER)]!r} is not "
                                 "'Participant <number>'")
        rows.append(tuple(record))
    return Worksheet(path, header, tuple(rows), delimiter, bom, _maximum(path, header, rows))


def _delimiter(text: str) -> str:
    """The separator that makes ``Identifier`` a header cell (the download's comma when none does)."""
    first = text.split("\n", 1)[0]
    for delimiter in DELIMITERS:
        if IDENTIFIER in next(csv.reader([first], delimiter=delimiter), []):
            return delimiter
    return ","


def _records(text: str, delimiter: str) -> list[tuple[int, list[str]]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    out, previous = [], 0
    for record in reader:
        out.append((previous + 1, record))
        previous = reader.line_num
    return out


def _check_header(path: Path, header: tuple[str, ...]) -> None:
    """The importer's three columns, spelled as it matches them; a scale worksheet refused."""
    for name in (IDENTIFIER, GRADE, MODIFIED):
        if name in header:
            if header.count(name) > 1:
                raise WorksheetError(f"{path}: column {name!r} appears twice: which one would Moodle read?")
            continue
        near = [h for h in header if h.strip().lower() == name.lower()]
        if near:
            raise WorksheetError(f"{path}: column {near[0]!r} must read {name!r} exactly: Moodle's importer "
                                 "matches its English header letter for letter")
        found = ", ".join(repr(h) for h in header if h.strip()) or "none"
        raise WorksheetError(f"{path}: not a Moodle grading worksheet: no {name!r} column (found {found}); "
                             "download it from the assignment's View all submissions -> Download grading "
                             "worksheet, with Moodle's language set to English")
    if SCALE in header and not any(h.strip().lower() == MAXIMUM for h in header):
        raise WorksheetError(f"{path}: the assignment is graded on a scale (a 'Scale' column): points cannot "
                             "be uploaded to it; grade it out of points in Moodle")


def _maximum(path: Path, header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> float:
    """The one ``Maximum grade`` of every row (``format_float`` of the assignment's grade)."""
    column = next((i for i, h in enumerate(header) if h.strip().lower() == MAXIMUM), None)
    if column is None:
        raise WorksheetError(f"{path}: no 'Maximum grade' column: the grades could not be checked against "
                             "the assignment's maximum; download the worksheet again")
    values = {row[column].strip() for row in rows}
    if not values:
        raise WorksheetError(f"{path}: the worksheet lists no participant")
    if len(values) > 1:
        raise WorksheetError(f"{path}: 'Maximum grade' differs between rows ({', '.join(sorted(values))})")
    text = values.pop()
    value = parse_number(text)
    if value is None or value <= 0:
        raise WorksheetError(f"{path}: 'Maximum grade' is {text!r}: the assignment takes no points")
    return value


def parse_number(text: str) -> float | None:
    """A number as ``format_float`` writes it in any language (``100.00``, ``100,00``); None if not one."""
    cleaned = text.strip().replace(" ", "").replace("\u00a0", "")
    if cleaned.count(",") == 1 and "." not in cleaned:
        cleaned = cleaned.replace(",", ".")
    if not re.fullmatch(r"\d+(\.\d+)?", cleaned):
        return None
    return float(cleaned)


def write(sheet: Worksheet, rows: Sequence[Sequence[str]], path: Path) -> None:
    """The worksheet back, atomically: its header, separator and byte-order mark as they came."""
    buffer = io.StringIO(newline="")
    out = csv.writer(buffer, delimiter=sheet.delimiter, lineterminator="\r\n")
    out.writerow(sheet.header)
    out.writerows(rows)
    write_atomically(path, ("\ufeff" if sheet.bom else "") + buffer.getvalue())
