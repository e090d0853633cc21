"""The class roster: who should have submitted, and how the LMS knows them.

A batch matches submissions to ``student`` ids; the Canvas export needs the
Canvas user id (and SIS ids, section) of the same people. Both come from one
small CSV kept by course staff, read here and refused with one line naming
the file and the problem, so a typo never silently drops a student.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

FIELDS = ("student", "name", "canvas_id", "sis_user_id", "sis_login_id", "section")


class RosterError(Exception):
    """The roster cannot be used; the message is one line naming the file."""

    def __init__(self, message: str) -> None:
        super().__init__(message.replace("\r", "\\r").replace("\n", "\\n"))


@dataclass(frozen=True)
class RosterEntry:
    student: str  # the id submissions are filed under
    name: str = ""
    canvas_id: str = ""  # Canvas' numeric user id (the ``ID`` column of a Canvas gradebook export)
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""


def read_roster(path: Path) -> list[RosterEntry]:
    """Entries in file order. The header must have a ``student`` column; other known columns are optional.

    Header names are matched case-insensitively with surrounding spaces stripped;
    unknown columns are ignored (a Canvas export has many). Blank lines are skipped.
    """
    text = _read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    columns: dict[str, int] | None = None
    entries: list[RosterEntry] = []
    first_line: dict[str, int] = {}
    previous_end = 0
    try:
        for record in reader:
            line, previous_end = previous_end + 1, reader.line_num
            if not any(cell.strip() for cell in record):
                continue
            if columns is None:
                columns = _header_columns(path, record)
                continue
            values = {f: _cell(record, i) for f, i in columns.items()}
            student = values["student"]
            if not student:
                raise RosterError(f"{path}: line {line}: empty student id")
            if student in first_line:
                raise RosterError(f"{path}: lines {first_line[student]} and {line}: student {student!r} appears twice")
            first_line[student] = line
            entries.append(RosterEntry(**values))
    except csv.Error as exc:
        raise RosterError(f"{path}: line {reader.line_num}: not valid CSV: {exc}") from exc
    if columns is None:
        raise RosterError(f"{path}: empty roster: no header line with a 'student' column")
    return entries


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RosterError(f"{path}: cannot read the roster: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8-sig")  # Excel writes a byte-order mark; tolerate it
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise RosterError(f"{path}: line {line}: not UTF-8 (save the roster as 'CSV UTF-8')") from exc


def _header_columns(path: Path, header: list[str]) -> dict[str, int]:
    """Known field -> column index; refuses a header without ``student`` or with a field twice."""
    columns: dict[str, int] = {}
    for index, raw in enumerate(header):
        key = raw.strip().lower()
        if key not in FIELDS:
            continue
        if key in columns:
            raise RosterError(f"{path}: header: column {key!r} appears twice")
        columns[key] = index
    if "student" not in columns:
        found = ", ".join(repr(h.strip()) for h in header)
        raise RosterError(f"{path}: header has no 'student' column (found {found})")
    return columns


def _cell(record: list[str], index: int) -> str:
    return record[index].strip() if index < len(record) else ""
