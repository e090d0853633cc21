"""A class's submissions as LMS downloads come: which file is whose, and when it came in.

``SUBMISSIONS`` is a folder, or a ``.zip`` of one. A zip whose members all sit
under one top folder is read from inside that folder. Its layout (Canvas,
Gradescope, Moodle, GitHub Classroom or a folder per student) is recognised or
given (``--layout``); ``grader.batch.lms`` reads each one and says where each format
was taken from. The rule for a plain folder (also in the README):

* Each entry at the top of that folder is one student:
  - a file ``alice.py`` or ``alice.ipynb`` -> student ``alice`` (the file
    name without its suffix);
  - a folder ``alice/`` -> student ``alice``; inside it (searched at any
    depth) the submission is the file named like the assignment's
    (``attention.py`` or ``attention.ipynb``), or else the only ``.py`` /
    ``.ipynb`` file there is.
* Names starting with ``.`` or ``_`` (``__MACOSX``, ``.ipynb_checkpoints``,
  ``__pycache__``) and files of other types are not submissions.
* Never a silent pick: two candidate files for one student (``alice.py``
  and ``alice.ipynb``, ``alice.py`` and ``alice/``, two ``.py`` files in a
  folder without one named like the assignment's) make an ``error`` row that
  lists them, and so does a folder with no candidate at all.

With a roster, an LMS's ids (Canvas user id, Gradescope SID or email, Moodle
participant id, GitHub username) are mapped to the roster's; a submission the
roster does not know is an ``error`` row that says so, never dropped. In a plain
folder the name is the id, so such a student is graded and named in a note.
"""

from __future__ import annotations

import hashlib
import zipfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader import links
from grader.batch import lms
from grader.links import Link
from grader.batch.roster import RosterEntry
from grader.words import count, plural

SUFFIXES = lms.SUFFIXES
MAX_ZIP_BYTES = 2 << 30  # uncompressed; a zip bomb stops here
MAX_ZIP_MEMBERS = 100_000
SHOWN = 10  # names listed in one note before "and N more"


class IntakeError(Exception):
    """SUBMISSIONS cannot be read at all (one line; the CLI's exit 2)."""


@dataclass(frozen=True)
class Handin:
    """One student's submission, or why there is none to grade."""

    student: str
    path: Path | None  # the file to grade; None when ``problem`` says why not
    file: str  # the path as shown in the gradebook, relative to SUBMISSIONS
    problem: str = ""
    submitted_at: str = ""  # ISO 8601 from the LMS, '' when the download does not say
    late: bool | None = None  # the LMS's own late flag, None when it has none


@dataclass(frozen=True)
class Intake:
    """What a download held: its layout, a row-to-be per student, and what to tell staff once."""

    layout: str
    entries: list[Handin]
    notes: list[str] = field(default_factory=list)  # one line each: unknown files, times not kept, ...

    def line(self) -> str:
        """``submissions: Canvas download, 41 students``."""
        layout = per_student(self.entries) if self.layout == "folders" else lms.LAYOUT_NAMES[self.layout]
        return f"submissions: {layout}, {count(len(self.entries), 'student')}"


def per_student(entries: list[Handin]) -> str:
    """What a plain folder held, as it is: "a file per student", "a folder per student", or both (the layout's
    one name, "a folder per student", was wrong for a folder of files)."""
    kinds = {"folder" if "/" in e.file.strip("/") else "file" for e in entries if e.file}
    return f"a {' or '.join(sorted(kinds)) or 'folder'} per student"


def discover(submissions: Path, assignment_file: str, unpack_to: Path) -> list[Handin]:
    """Every student found under ``submissions`` (a folder or a zip), sorted by id."""
    return scan(submissions, assignment_file, unpack_to).entries


def scan(submissions: Path, assignment_file: str, unpack_to: Path, roster: Sequence[RosterEntry] | None = None,
         layout: str | None = None) -> Intake:
    """Every student under ``submissions``, sorted by id, mapped to ``roster`` ids when there is one.

    ``layout`` (one of ``lms.LAYOUTS``) forces how the download is read;
    None recognises it. Raises IntakeError with one line.
    """
    root = _lms_root(_root(submissions, unpack_to))
    chosen = layout or lms.detect(root, frozenset(r.student for r in roster or ()))
    refused = {top: (found[0].path, links.message(found)) for top, found in _linked(submissions, root, unpack_to).items()}
    try:
        download = lms.read(chosen, root, assignment_file, refused)
    except lms.LayoutError as exc:
        raise IntakeError(f"{submissions}: {exc}") from None
    entries, notes = _assign(download, roster)
    if not entries and not roster:  # nothing to grade: a header-only gradebook would read as a graded class
        left = f" ({count(len(download.unknown), 'entry')} left out: {_listed(download.unknown)})" if download.unknown else ""
        raise IntakeError(f"{submissions}: no submission found{left}; nothing graded; give the folder or .zip that "
                          f"holds the class's files, or add --roster to record every student as missing")
    if download.unknown:
        unknown = len(download.unknown)
        notes.insert(0, f"{count(unknown, 'entry')} {plural(unknown, 'is')} not {lms.LAYOUT_NAMES[chosen]} submissions, "
                        f"left out: {_listed(download.unknown)}")
    return Intake(chosen, entries, [*download.notes, *notes])


def _assign(download: lms.Download, roster: Sequence[RosterEntry] | None) -> tuple[list[Handin], list[str]]:
    """Group what was found by roster id: one entry per student, an error where a group has two."""
    groups: dict[str, list[lms.Found]] = defaultdict(list)
    refused: list[Handin] = []
    off_roster: list[str] = []
    for found in download.found:
        matched = lms.match(found, roster) if roster is not None else None
        if matched is None or isinstance(matched, RosterEntry):
            groups[matched.student if matched else found.fallback].append(found)
        elif download.layout == "folders":  # the name is the id staff chose: grade it, say so
            groups[found.fallback].append(found)
            off_roster.append(found.fallback)
        else:
            refused.append(Handin(found.fallback, None, found.file, matched, found.submitted_at, found.late))
    entries = [_entry(student, items) for student, items in groups.items()]
    taken = {e.student for e in entries}
    entries += [e for e in refused if e.student not in taken]
    entries += [Handin(e.student, None, e.file, f"{e.problem} (and another submission is filed under this id)")
                for e in refused if e.student in taken]
    notes = [f"not on the roster, graded under their own names: {_listed(sorted(set(off_roster)))}"] if off_roster else []
    return sorted(entries, key=lambda e: e.student), notes


def _entry(student: str, items: list[lms.Found]) -> Handin:
    if len(items) == 1:
        one = items[0]
        return Handin(student, one.path, one.file, one.problem, one.submitted_at, one.late)
    shown = ", ".join(f.file for f in items)
    return Handin(student, None, shown, f"more than one submission for this student: {shown}; keep one and grade again")


def _listed(names: Sequence[str]) -> str:
    more = len(names) - SHOWN
    return ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def _lms_root(root: Path) -> Path:
    """A folder holding just a Gradescope export's ``assignment_<id>_export/`` is read from inside it."""
    children = [c for c in root.iterdir() if not lms.ignored(c.name)]
    if len(children) == 1 and (children[0] / lms.GRADESCOPE_METADATA).is_file():
        return children[0]
    return root


def _root(submissions: Path, unpack_to: Path) -> Path:
    if submissions.is_dir():
        return submissions
    if not submissions.exists():
        raise IntakeError(f"cannot read {submissions}: no such file or folder")
    if not zipfile.is_zipfile(submissions):
        raise IntakeError(f"{submissions} is neither a folder nor a .zip of submissions")
    try:
        with zipfile.ZipFile(submissions) as archive:
            members = archive.infolist()
            if len(members) > MAX_ZIP_MEMBERS or sum(m.file_size for m in members) > MAX_ZIP_BYTES:
                raise IntakeError(f"{submissions}: too large to unpack (over {MAX_ZIP_MEMBERS} files "
                                  f"or {MAX_ZIP_BYTES >> 30} GiB)")
            # zipfile drops absolute paths and '..' parts; a link member is never made (``_linked`` reports it)
            archive.extractall(unpack_to, members=links.regular_members(members))
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError) as exc:  # corrupt, encrypted, unsupported
        raise IntakeError(f"{submissions}: cannot unpack: {exc}") from None
    tops = [p for p in unpack_to.iterdir() if not lms.ignored(p.name)]
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else unpack_to


def _linked(submissions: Path, root: Path, unpack_to: Path) -> dict[str, list[Link]]:
    """Every symbolic link in the class, by the top-level entry it is in or is (``grader.links``): the
    layout reader (``grader.batch.lms``) gives whoever that entry belongs to an error row naming the link, and
    reads nothing of it. Links under ignored names are never read, so skipped."""
    if submissions.is_dir():
        found = links.find_links(root, skip=lms.ignored)
        top: tuple[str, ...] = ()
    else:
        found = _zip_links(submissions)
        top = root.relative_to(unpack_to).parts  # the one top folder the zip is read from, if any
    by_top: dict[str, list[Link]] = defaultdict(list)
    for link in found:
        parts = tuple(link.path.split("/"))
        if top and parts[:len(top)] == top and len(parts) > len(top):
            parts = parts[len(top):]
            link = Link("/".join(parts), link.target)
        if any(lms.ignored(part) for part in parts):
            continue
        by_top[parts[0]].append(link)
    return by_top


def _zip_links(submissions: Path) -> list[Link]:
    """The zip's link members (``_root`` has opened it once already, so only a rare failure is left)."""
    try:
        with zipfile.ZipFile(submissions) as archive:
            return links.zip_links(archive, archive.infolist())
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError) as exc:  # encrypted, unsupported
        raise IntakeError(f"{submissions}: cannot unpack: {exc}") from None


def in_shard(student: str, shard: tuple[int, int]) -> bool:
    """Shard ``k`` of ``n`` (0-based): a stable hash of the id, the same on every machine and run."""
    k, n = shard
    return int.from_bytes(hashlib.sha256(student.encode()).digest()[:8], "big") % n == k


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` with 0 <= K < N; raises ValueError with a one-line reason."""
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"--shard {text!r}: expected K/N, e.g. 0/4") from None
    if not 0 <= k < n:
        raise ValueError(f"--shard {text!r}: K must satisfy 0 <= K < N (shards are numbered from 0)")
    return k, n
