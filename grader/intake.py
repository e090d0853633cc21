"""A class's submissions as LMS downloads come: which file is whose.

The rule that turns a path into a student id (also in the README):

* ``SUBMISSIONS`` is a folder, or a ``.zip`` of one. A zip whose members
  all sit under one top folder is read from inside that folder.
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
"""

from __future__ import annotations

import hashlib
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

SUFFIXES = (".py", ".ipynb")
MAX_ZIP_BYTES = 2 << 30  # uncompressed; a zip bomb stops here
MAX_ZIP_MEMBERS = 100_000


class IntakeError(Exception):
    """SUBMISSIONS cannot be read at all (one line; the CLI's exit 2)."""


@dataclass(frozen=True)
class Entry:
    """One student's submission, or why there is none to grade."""

    student: str
    path: Path | None  # the file to grade; None when ``problem`` says why not
    file: str  # the path as shown in the gradebook, relative to SUBMISSIONS
    problem: str = ""


def discover(submissions: Path, assignment_file: str, unpack_to: Path) -> list[Entry]:
    """Every student found under ``submissions`` (a folder or a zip), sorted by id."""
    root = _root(submissions, unpack_to)
    found: dict[str, list[Path]] = defaultdict(list)
    problems: dict[str, str] = {}
    for child in sorted(root.iterdir()):
        if _ignored(child.name):
            continue
        if child.is_file() and child.suffix in SUFFIXES:
            found[child.stem].append(child)
        elif child.is_dir():
            picked = _pick(child, assignment_file)
            if isinstance(picked, str):
                problems[child.name] = picked
            else:
                found[child.name].append(picked)
    entries = []
    for student in sorted(set(found) | set(problems)):
        files = found.get(student, [])
        shown = [str(f.relative_to(root)) for f in files]
        if len(files) == 1 and student not in problems:
            entries.append(Entry(student, files[0], shown[0]))
        elif len(files) > 1 or (files and student in problems):
            entries.append(Entry(student, None, ", ".join(shown),
                                 f"more than one submission for this student: {', '.join(shown)}; "
                                 "keep one and grade again"))
        else:
            entries.append(Entry(student, None, f"{student}/", problems[student]))
    return entries


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
            archive.extractall(unpack_to)  # zipfile drops absolute paths and '..' parts
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError) as exc:  # corrupt, encrypted, unsupported
        raise IntakeError(f"{submissions}: cannot unpack: {exc}") from None
    tops = [p for p in unpack_to.iterdir() if not _ignored(p.name)]
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else unpack_to


def _pick(folder: Path, assignment_file: str) -> Path | str:
    """The one submission file in a student's folder, or why there is not exactly one."""
    candidates = sorted(
        p for p in folder.rglob("*")
        if p.suffix in SUFFIXES and p.is_file()
        and not any(_ignored(part) for part in p.relative_to(folder).parts)
    )
    stem = Path(assignment_file).stem
    named = [p for p in candidates if p.stem == stem]
    chosen = named or candidates
    shown = ", ".join(str(p.relative_to(folder.parent)) for p in chosen)
    if len(chosen) == 1:
        return chosen[0]
    if not chosen:
        return f"no .py or .ipynb file in {folder.name}/"
    return f"more than one submission for this student: {shown}; keep one and grade again"


def _ignored(name: str) -> bool:
    return name.startswith((".", "_"))


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
