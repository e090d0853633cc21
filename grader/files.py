"""Files: written so that a reader, a crash or Ctrl-C never leaves half of one, and hashed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

TMP_PREFIX = ".tmp-"
_CHUNK = 1 << 20


def sha256(path: Path) -> str:
    """The file's sha256, read in chunks (a hidden-check bundle or a notebook may be large)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` beside ``path`` first, then rename it into place (atomic on POSIX)."""
    tmp = path.with_name(f"{TMP_PREFIX}{os.getpid()}-{path.name}")
    try:
        tmp.write_text(text, encoding="utf-8", newline="")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def remove_leftovers(folder: Path) -> None:
    """Delete temporary files an interrupted writer left in ``folder``."""
    for leftover in folder.glob(f"{TMP_PREFIX}*"):
        leftover.unlink(missing_ok=True)
