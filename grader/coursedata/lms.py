"""Bulk downloads as LMSs write them: which layout a download is, and whose each submission is.

``grade-all --layout`` names the layout; otherwise :func:`detect` recognises it from the
download itself, in this order: ``gradescope``, ``moodle``, ``canvas``, ``classroom``, else
``folders``.  Each layout's reader, with where its format was taken from, is in
``lms_readers.py``; what a reader yields and the file picking they share is in ``lms_files.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from grader.coursedata.lms_files import (
    SUFFIXES,
    Download,
    Found,
    LayoutError,
    Refused,
    _stem,
    ignored,
    pick,
)
from grader.coursedata.lms_readers import (
    CANVAS_FILE,
    GRADESCOPE_METADATA,
    READERS,
    _moodle_entry,
    _slug,
    head_time,
    iso_time,
)
from grader.coursedata.roster import RosterEntry

__all__ = ["GRADESCOPE_METADATA", "LAYOUTS", "LAYOUT_NAMES", "SUFFIXES", "Download", "Found", "LayoutError",
           "Refused", "detect", "head_time", "ignored", "iso_time", "match", "pick", "read"]

LAYOUTS = ("canvas", "gradescope", "moodle", "classroom", "folders")
LAYOUT_NAMES = {"canvas": "Canvas download", "gradescope": "Gradescope export", "moodle": "Moodle download",
                "classroom": "GitHub Classroom repositories", "folders": "a folder per student"}


def detect(root: Path, roster_ids: frozenset[str] = frozenset()) -> str:
    """The layout of the download at ``root``, from what each LMS writes and nothing else does."""
    children = [c for c in root.iterdir() if not ignored(c.name)]
    if (root / GRADESCOPE_METADATA).is_file():
        return "gradescope"
    if any(_moodle_entry(c.name) for c in children):
        return "moodle"
    files = [c for c in children if c.is_file()]
    if files and len(files) == len(children) and 2 * sum(bool(CANVAS_FILE.match(f.name)) for f in files) > len(files):
        return "canvas"
    if roster_ids and 2 * sum(_stem(c) in roster_ids for c in children) >= len(children):
        return "folders"  # the names are the roster's ids: staff laid the folders out themselves
    dirs = [c for c in children if c.is_dir()]
    if dirs and len(dirs) == len(children) and (any((d / ".git").exists() for d in dirs) or _slug([d.name for d in dirs])):
        return "classroom"
    return "folders"


def read(layout: str, root: Path, assignment_file: str, refused: Refused | None = None) -> Download:
    """Every submission under ``root`` read as ``layout`` (one of ``LAYOUTS``).

    A top-level entry in ``refused`` (one holding a symbolic link, ``grader.links``)
    is never read: whoever it belongs to gets its problem instead.
    """
    if layout not in READERS:
        raise LayoutError(f"unknown layout {layout!r}; one of {', '.join(LAYOUTS)}")
    return READERS[layout](root, Path(assignment_file).stem, refused or {})


# ------------------------------------------------------------------ matching to the roster


def match(found: Found, roster: Sequence[RosterEntry]) -> RosterEntry | str:
    """The roster student a submission belongs to, or why there is none.

    The LMS's names for the student are tried most trusted first; the first
    that names exactly one roster student decides, one naming several is
    refused rather than guessed.
    """
    for kind, value in found.who:
        hits = [e for e in roster if _same(kind, value, e)]
        if kind == "repo" and hits:  # the longest username that ends the folder's name is the one meant
            longest = max(len(e.github) for e in hits)
            hits = [e for e in hits if len(e.github) == longest]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            names = ", ".join(e.student for e in hits)
            return f"{found.label} matches more than one roster student by {kind} ({names}); fix the roster"
    return f"{found.label} is not on the roster; add them to it (or grade without --roster)"


def _same(kind: str, value: str, entry: RosterEntry) -> bool:
    folded = value.casefold()
    if kind == "student":
        return entry.student == value
    if kind == "canvas_id":
        return entry.canvas_id == value
    if kind == "sid":
        return value in (entry.sid, entry.sis_user_id, entry.student)
    if kind == "email":
        return folded in (entry.email.casefold(), entry.student.casefold())
    if kind == "participant":
        return entry.participant == value
    if kind == "name":
        return bool(entry.name) and _name_key(entry.name) == _name_key(value)
    if kind == "github":
        return folded in (entry.github.casefold(), entry.student.casefold())
    if kind == "repo":
        return bool(entry.github) and folded.endswith("-" + entry.github.casefold())
    raise ValueError(f"unknown kind of student id {kind!r}")


def _name_key(name: str) -> str:
    return " ".join(name.casefold().split())
