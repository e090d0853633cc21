"""The class roster: who should have submitted, and how each LMS knows them.

A batch files every student under one id (``cards/<id>.json``, the gradebook's
``student``); the Canvas export needs the Canvas user id (and SIS ids, section)
of the same people, and an LMS download names students by its own ids (Canvas
user id, Gradescope SID or email, Moodle participant id, GitHub username). All
of it comes from one CSV, as course staff keep it or as their LMS exports it:

* **Canvas** gradebook export (Grades -> Export): ``Student, ID, SIS User ID,
  SIS Login ID, [Integration ID | Root Account,] Section, <assignments>...``.
  Its second line is ``Points Possible`` (and newer exports may add a line
  such as ``Manual Posting`` with no student); Canvas' ``Test Student``
  (``Student, Test``) is left out. The id is ``SIS Login ID`` where every
  student has one, else ``SIS User ID``, else Canvas' ``ID``. The format is the
  one Canvas' own gradebook import reads back (see ``grader/export/canvas.py``
  and Instructure's guide "How do I export grades in the Gradebook?").
* **Gradescope** roster (Roster -> Download Roster): ``First Name, Last Name,
  SID, Email, Role, Sections...``; staff rows (Instructor, TA, Reader) are left
  out. The id is ``SID`` where every student has one, else ``Email``.
* **Moodle** participants list (Participants -> "Download table data as"
  CSV): ``First name, Last name/Surname, [ID number, Username,] Email address,
  Roles, Groups...``; or the assignment's **grading worksheet** (View all
  submissions -> Download grading worksheet): ``Identifier, Full name, Email
  address, Status, ...`` whose ``Identifier`` is ``Participant 1234567``, the
  participant id Moodle also writes into a download's folder names. The id is
  ``ID number``, else ``Username``, else ``Email address``.
* **GitHub Classroom** roster (classroom_roster.csv): ``identifier,
  github_username, github_id, name``; the id is ``identifier``.
* **A plain CSV**: the id column is the first of ``student``, ``id``,
  ``student_id``, ``login``, ``sis_login_id``, ``email`` there is; optional
  ``name``, ``canvas_id``, ``sis_user_id``, ``sis_login_id``, ``section``,
  ``email``, ``sid``, ``github`` (or ``github_username``; a ``login`` column
  is taken as the GitHub username too).

Header names are matched case-insensitively with surrounding spaces stripped
and an Excel byte-order mark tolerated. Anything else is refused with one line
naming the file, the columns found and the layouts accepted, so a typo never
silently drops a student.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.words import count


FIELDS = ("student", "name", "canvas_id", "sis_user_id", "sis_login_id", "section", "email", "sid", "github",
          "participant")
PLAIN_IDS = ("student", "id", "student_id", "login", "sis_login_id", "email")
STAFF_ROLES = frozenset({"instructor", "ta", "reader", "teacher", "non-editing teacher", "editingteacher", "manager",
                         "course creator", "teaching assistant"})


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
    email: str = ""
    sid: str = ""  # Gradescope's SID (a student number)
    github: str = ""  # GitHub username (GitHub Classroom)
    participant: str = ""  # Moodle's participant id for one assignment (grading worksheet "Participant N")


@dataclass(frozen=True)
class Roster:
    """The entries and how they were read: what the CLI says before grading."""

    entries: tuple[RosterEntry, ...]
    id_column: str  # the header the ids came from, as the file spells it
    source: str  # "Canvas gradebook export", "plain CSV", ...
    left_out: tuple[str, ...] = ()  # rows deliberately not read, in words ("the Points Possible row")

    def line(self) -> str:
        """``roster: 120 students, id column `SIS Login ID` (Canvas gradebook export)``."""
        text = f"roster: {count(len(self.entries), 'student')}, id column `{self.id_column}` ({self.source})"
        return text + (f"; left out: {', '.join(self.left_out)}" if self.left_out else "")


@dataclass(frozen=True)
class _Format:
    """One LMS's export: the headers that recognise it and where each field comes from."""

    source: str
    signature: tuple[str, ...]  # lower-case headers that must all be there
    ids: tuple[str, ...]  # candidate id columns, the first filled on every student row wins
    fields: dict[str, tuple[str, ...]] = field(default_factory=dict)  # field -> headers joined with a space
    either: tuple[str, ...] = ()  # at least one of these must be there too

    def matches(self, headers: set[str]) -> bool:
        return set(self.signature) <= headers and (not self.either or bool(headers & set(self.either)))


FORMATS = (
    _Format("Canvas gradebook export", ("student", "id", "sis user id", "sis login id"),
            ("sis login id", "sis user id", "id"),
            {"name": ("student",), "canvas_id": ("id",), "sis_user_id": ("sis user id",),
             "sis_login_id": ("sis login id",), "section": ("section",)}),
    _Format("Gradescope roster", ("first name", "last name", "sid", "email"), ("sid", "email"),
            {"name": ("first name", "last name"), "email": ("email",), "sid": ("sid",), "section": ("sections",)}),
    _Format("Moodle grading worksheet", ("identifier", "full name", "email address"),
            ("id number", "username", "email address"),
            {"name": ("full name",), "email": ("email address",), "participant": ("identifier",)}),
    _Format("Moodle participants list", ("first name", "email address"), ("id number", "username", "email address"),
            {"name": ("first name", "last name", "surname"), "email": ("email address",), "section": ("groups",)},
            either=("last name", "surname")),
    _Format("GitHub Classroom roster", ("identifier", "github_username"), ("identifier",),
            {"name": ("name",), "github": ("github_username",)}),
)
PLAIN_FIELDS = {"name": ("name",), "canvas_id": ("canvas_id",), "sis_user_id": ("sis_user_id",),
                "sis_login_id": ("sis_login_id",), "section": ("section",), "email": ("email",), "sid": ("sid",),
                "github": ("github",), "participant": ("participant",)}
GITHUB_ALIASES = ("github", "github_username", "login")
ACCEPTED = ("a Canvas gradebook export (Student, ID, SIS User ID, SIS Login ID, Section), a Gradescope roster "
            "(First Name, Last Name, SID, Email), a Moodle participants list (First name, Last name, Email address) "
            "or grading worksheet (Identifier, Full name, Email address), a GitHub Classroom roster (identifier, "
            "github_username), or a CSV with a column " + ", ".join(PLAIN_IDS))


def read_roster(path: Path) -> list[RosterEntry]:
    """Entries in file order (see ``load_roster``)."""
    return list(load_roster(path).entries)


def load_roster(path: Path) -> Roster:
    """The roster in ``path``, whichever of the layouts above it is.

    Blank lines are skipped; an empty or duplicated id is refused with its
    line number, as is an id that could not be a file name (``cards/<id>.json``).
    """
    records = _records(path)
    if not records:
        raise RosterError(f"{path}: empty roster: no header line (expected {ACCEPTED})")
    (_, header), body = records[0], records[1:]
    columns = _header_columns(path, header)
    fmt = next((f for f in FORMATS if f.matches(set(columns))), None)
    if fmt is None:
        return _plain(path, header, columns, body)
    return _lms(path, header, columns, body, fmt)


def _records(path: Path) -> list[tuple[int, list[str]]]:
    """``(line number, cells)`` of every non-blank CSV record."""
    reader = csv.reader(io.StringIO(_read_text(path), newline=""))
    out: list[tuple[int, list[str]]] = []
    previous_end = 0
    try:
        for record in reader:
            line, previous_end = previous_end + 1, reader.line_num
            if any(cell.strip() for cell in record):
                out.append((line, record))
    except csv.Error as exc:
        raise RosterError(f"{path}: line {reader.line_num}: not valid CSV: {exc}") from exc
    return out


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
    """Lower-cased header -> column index; a named column twice is refused (which one would count?)."""
    columns: dict[str, int] = {}
    for index, raw in enumerate(header):
        key = raw.strip().lower()
        if not key:
            continue
        if key in columns:
            raise RosterError(f"{path}: header: column {key!r} appears twice")
        columns[key] = index
    return columns


def _plain(path: Path, header: list[str], columns: dict[str, int], body: list[tuple[int, list[str]]]) -> Roster:
    id_key = next((k for k in PLAIN_IDS if k in columns), None)
    if id_key is None:
        found = ", ".join(repr(h.strip()) for h in header if h.strip())
        raise RosterError(f"{path}: unknown roster layout: no 'student' column or other id column "
                          f"(found {found}); accepted: {ACCEPTED}")
    fields = dict(PLAIN_FIELDS)
    fields["github"] = tuple(k for k in GITHUB_ALIASES if k in columns)[:1]
    entries = _entries(path, body, columns, id_key, fields)
    return Roster(tuple(entries), header[columns[id_key]].strip(), "plain CSV")


def _lms(path: Path, header: list[str], columns: dict[str, int], body: list[tuple[int, list[str]]],
         fmt: _Format) -> Roster:
    rows, left_out = _students_only(columns, body, fmt)
    if not rows:
        raise RosterError(f"{path}: {fmt.source} with no student in it")
    id_key = next((k for k in fmt.ids if k in columns and all(_cell(r, columns[k]) for _, r in rows)), None)
    if id_key is None:
        tried = " or ".join(repr(k) for k in fmt.ids if k in columns)
        raise RosterError(f"{path}: {fmt.source}: no id column filled in for every student ({tried}); "
                          "fill it in or give a plain CSV with a 'student' column")
    entries = _entries(path, rows, columns, id_key, fmt.fields)
    if fmt.source == "Moodle grading worksheet":
        entries = [_with_participant(e) for e in entries]
    return Roster(tuple(entries), header[columns[id_key]].strip(), fmt.source, tuple(left_out))


def _students_only(columns: dict[str, int], body: list[tuple[int, list[str]]],
                   fmt: _Format) -> tuple[list[tuple[int, list[str]]], list[str]]:
    """The rows that are students: not Canvas' Points Possible or Test Student rows, not staff."""
    rows: list[tuple[int, list[str]]] = []
    left_out: list[str] = []
    staff = 0
    for line, record in body:
        if fmt.source == "Canvas gradebook export":
            student, canvas_id = _cell(record, columns["student"]), _cell(record, columns["id"])
            if student == "Points Possible":
                left_out.append(f"the Points Possible row (line {line})")
                continue
            if not student and not canvas_id:  # "Manual Posting" / "Muted" lines: assignment settings, no one
                left_out.append(f"a line with no student (line {line})")
                continue
            if student in ("Student, Test", "Test Student"):
                left_out.append(f"Canvas' Test Student (line {line})")
                continue
        role_key = next((k for k in ("role", "roles") if k in columns), None)
        if role_key is not None and _is_staff(_cell(record, columns[role_key])):
            staff += 1
            continue
        rows.append((line, record))
    if staff:
        left_out.append(f"{staff} staff")
    return rows, left_out


def _is_staff(roles: str) -> bool:
    """Every role listed (Moodle lists several, comma-separated) is a staff role."""
    names = [r.strip().lower() for r in roles.split(",") if r.strip()]
    return bool(names) and all(n in STAFF_ROLES for n in names)


def _entries(path: Path, rows: Sequence[tuple[int, list[str]]], columns: dict[str, int], id_key: str,
             fields: dict[str, tuple[str, ...]]) -> list[RosterEntry]:
    entries: list[RosterEntry] = []
    first_line: dict[str, int] = {}
    for line, record in rows:
        student = _cell(record, columns[id_key])
        if not student:
            raise RosterError(f"{path}: line {line}: empty student id")
        if student in first_line:
            raise RosterError(f"{path}: lines {first_line[student]} and {line}: student {student!r} appears twice")
        _check_id(path, line, student)
        first_line[student] = line
        values = {name: " ".join(_cell(record, columns[h]) for h in headers if h in columns).strip()
                  for name, headers in fields.items()}
        entries.append(RosterEntry(student, **{k: " ".join(v.split()) if k == "name" else v
                                              for k, v in values.items() if v}))
    return entries


def _check_id(path: Path, line: int, student: str) -> None:
    """An id names files (``cards/<id>.json``): no path separator, no leading dot."""
    if "/" in student or "\\" in student or "\0" in student or student.startswith("."):
        raise RosterError(f"{path}: line {line}: student id {student!r} cannot name a file "
                          "(no '/', '\\' or leading '.')")


def _with_participant(entry: RosterEntry) -> RosterEntry:
    """Moodle's ``Participant 1234567`` -> ``1234567`` (the word is translated; the number is what counts)."""
    found = re.search(r"(\d+)\s*$", entry.participant)
    return replace(entry, participant=found.group(1) if found else "")


def _cell(record: list[str], index: int) -> str:
    return record[index].strip() if index < len(record) else ""
