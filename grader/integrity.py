"""Integrity of a student repository: are the files the course protects as they were released?

A student repository graded where it is pushed (``grader ci``) holds the very
files that judge it: the workflow that runs the grader, the visible checks,
the kit's configuration and recorded values, the encrypted hidden checks.
Editing any of them could turn a failing submission into a passing one, so
the release lists them with their sha256 in ``.grader/integrity.json``::

    {"version": 1, "files": {"relative/path": "<sha256>", ...}}

``write_manifest`` is the release's side (it runs where the course is
built); ``verify`` is the CI's side. A hash in a file the student controls
proves nothing against a determined student (they can rewrite the manifest
too); what it does is make every accidental or casual edit visible, and stop
the job from passing on it. The grade that counts is course staff's
``grader grade-all``, which never reads a repository's checks, configuration
or workflow at all: it grades the submission file alone with the course's
own package.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Iterable

from grader.files import sha256, write_atomically

VERSION = 1
MANIFEST = ".grader/integrity.json"  # relative to the repository root


class IntegrityError(ValueError):
    """The release asked to protect a file that cannot be protected (missing, or outside the root)."""


def manifest_bytes(hashes: dict[str, str]) -> bytes:
    """The manifest's one encoding: the release writes it from bytes in memory, ``write_manifest`` from a folder."""
    return (json.dumps({"version": VERSION, "files": dict(sorted(hashes.items()))}, indent=1, sort_keys=True)
            + "\n").encode()


def write_manifest(root: Path, files: Iterable[str]) -> None:
    """Write ``<root>/.grader/integrity.json`` listing ``files`` (paths relative to ``root``, ``/``-separated).

    Raises IntegrityError for a path that is absolute, leaves ``root`` or is
    not a regular file: a manifest that names what it cannot hash would make
    every student's run fail, so the release stops instead.
    """
    hashes: dict[str, str] = {}
    for rel in files:
        path = _inside(root, rel)
        if path is None:
            raise IntegrityError(f"cannot protect {rel!r}: not a relative path inside {root}")
        if not path.is_file() or path.is_symlink():
            raise IntegrityError(f"cannot protect {rel!r}: no such regular file in {root}")
        hashes[PurePosixPath(rel).as_posix()] = sha256(path)
    if MANIFEST in hashes:
        raise IntegrityError(f"the manifest cannot list itself ({MANIFEST})")
    target = root / MANIFEST
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(target, manifest_bytes(hashes).decode())


def verify(root: Path, manifest: Path) -> list[str]:
    """The protected files that are changed or missing, sorted; ``[]`` when all are as released.

    A manifest that is missing, unreadable, not JSON, of another version or
    with an entry that is not a relative path inside ``root`` proves nothing
    about any file: the answer is then the manifest itself (its path relative
    to ``root`` when it lies inside, else as given), so that every protected
    file counts as unverifiable rather than as verified. A protected file
    replaced by a symbolic link counts as changed even if it points at the
    released bytes: the link could later point anywhere.
    """
    entries = _entries(manifest)
    if entries is None:
        return [_shown(root, manifest)]
    changed = []
    for rel, expected in entries.items():
        path = _inside(root, rel)
        if path is None:
            return [_shown(root, manifest)]
        try:
            if path.is_symlink() or not path.is_file() or sha256(path) != expected:
                changed.append(rel)
        except OSError:
            changed.append(rel)  # unreadable now: cannot be shown to be the released file
    return sorted(changed)


def _entries(manifest: Path) -> dict[str, str] | None:
    """The manifest's ``files`` map, or None when it cannot be trusted to say anything."""
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("files"), dict):
        return None
    files = data["files"]
    if not all(isinstance(k, str) and isinstance(v, str) and len(v) == 64 for k, v in files.items()):
        return None
    return files


def _inside(root: Path, rel: str) -> Path | None:
    """``root / rel`` when ``rel`` is a plain relative path that stays inside ``root``; else None."""
    pure = PurePosixPath(rel)
    if not rel or pure.is_absolute() or "\\" in rel or any(part in ("", ".", "..") for part in rel.split("/")):
        return None
    return root.joinpath(*pure.parts)


def _shown(root: Path, manifest: Path) -> str:
    try:
        return manifest.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(manifest)
