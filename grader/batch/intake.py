"""A class's submissions as LMS downloads come: which file is whose, and when it came in.

``SUBMISSIONS`` is a folder, or a ``.zip`` of one. A zip whose members all sit
under one top folder is read from inside that folder. Its layout (Canvas,
Gradescope, Moodle, GitHub Classroom or a folder per student) is recognised or
given (``--layout``); ``grader.coursedata.lms`` reads each one and says where each format
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
from grader.coursedata import lms, unzip
from grader.coursedata.lms_files import NotGraded
from grader.links import Link
from grader.coursedata.roster import RosterEntry
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
    not_graded: list[NotGraded] = field(default_factory=list)  # each upload or zip member left ungraded, and why

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
    unpacked = _unpack(submissions, unpack_to)
    root = _lms_root(unpack_to.joinpath(*unpacked.root_parts) if unpacked else submissions)
    chosen = layout or lms.detect(root, frozenset(r.student for r in roster or ()))
    refused = {top: (found[0].path, links.message(found)) for top, found in _linked(root, unpack_to, unpacked).items()}
    for top, problem in _clashed(unpacked, root, unpack_to).items():
        refused.setdefault(top, problem)
    try:
        download = lms.read(chosen, root, assignment_file, refused)
    except lms.LayoutError as exc:
        raise IntakeError(f"{submissions}: {exc}") from None
    entries, notes = _assign(download, roster)
    if not entries and not roster:  # nothing to grade: a header-only gradebook would read as a graded class
        left = f" ({count(len(download.unknown), 'entry')} left out: {_listed(download.unknown)})" if download.unknown else ""
        refused = len(unpacked.refused) if unpacked else 0
        refusals = f"; {count(refused, 'zip member')} refused: {_listed([r.file for r in unpacked.refused])}" \
            if unpacked and unpacked.refused else ""
        raise IntakeError(f"{submissions}: no submission found{left}{refusals}; nothing graded; give the folder or "
                          f".zip that holds the class's files, or add --roster to record every student as missing")
    if download.unknown:
        unknown = len(download.unknown)
        notes.insert(0, f"{count(unknown, 'entry')} {plural(unknown, 'is')} not {lms.LAYOUT_NAMES[chosen]} submissions, "
                        f"left out: {_listed(download.unknown)}")
    return Intake(chosen, entries, [*download.notes, *notes],
                  [*(unpacked.refused if unpacked else ()), *_not_graded(download, roster)])


def _not_graded(download: lms.Download, roster: Sequence[RosterEntry] | None) -> list[NotGraded]:
    """Every student's uploads that were passed over, with whose they are (the roster's id when it
    knows them); one entry per file, however many students share it (a Gradescope group)."""
    whose: dict[tuple[str, str], list[str]] = {}
    for found in download.found:
        matched = lms.match(found, roster) if roster is not None else None
        student = matched.student if isinstance(matched, RosterEntry) else found.fallback
        for item in found.unused:
            names = whose.setdefault((item.file, item.why), [])
            if student not in names:
                names.append(student)
    return [NotGraded(file, why, ", ".join(names)) for (file, why), names in whose.items()]


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


def _unpack(submissions: Path, unpack_to: Path) -> unzip.Unpacked | None:
    """A zip unpacked into ``unpack_to`` member by member (``grader.coursedata.unzip``); None for a folder."""
    if submissions.is_dir():
        return None
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
            return unzip.unpack(archive, unpack_to)
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError) as exc:  # corrupt, encrypted, unsupported
        raise IntakeError(f"{submissions}: cannot unpack: {exc}") from None


def _under_root(parts: tuple[str, ...], root: Path, unpack_to: Path) -> tuple[str, ...] | None:
    """A zip path as seen from the folder the class is read from; None when it is outside it."""
    top = root.relative_to(unpack_to).parts  # the one top folder (and Gradescope's export folder), if any
    if parts[:len(top)] != top or len(parts) <= len(top):
        return None
    return parts[len(top):]


def _linked(root: Path, unpack_to: Path, unpacked: unzip.Unpacked | None) -> dict[str, list[Link]]:
    """Every symbolic link in the class, by the top-level entry it is in or is (``grader.links``): the
    layout reader (``grader.coursedata.lms``) gives whoever that entry belongs to an error row naming the link, and
    reads nothing of it. Links under ignored names are never read, so skipped."""
    if unpacked is None:
        found = [(tuple(link.path.split("/")), link) for link in links.find_links(root, skip=lms.ignored)]
    else:  # a zip's link members were never made: their paths come from the zip
        found = [(seen, link) for link in unpacked.links
                 if (seen := _under_root(tuple(link.path.split("/")), root, unpack_to)) is not None]
    by_top: dict[str, list[Link]] = defaultdict(list)
    for parts, link in found:
        if any(lms.ignored(part) for part in parts):
            continue
        by_top[parts[0]].append(Link("/".join(parts), link.target))
    return by_top


def _clashed(unpacked: unzip.Unpacked | None, root: Path, unpack_to: Path) -> dict[str, tuple[str, str]]:
    """The top-level entries where zip members clashed (``grader.coursedata.unzip``): whoever they belong to
    gets an error row saying so, as nothing of what clashed was unpacked."""
    clashed: dict[str, tuple[str, str]] = {}
    for parts, why in (unpacked.clashes.items() if unpacked else ()):
        seen = _under_root(parts, root, unpack_to)
        if seen is not None and not any(lms.ignored(part) for part in seen):
            clashed.setdefault(seen[0], ("/".join(seen), why))
    return clashed


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
