"""Writing files so that a reader, a crash or Ctrl-C never leaves half of one."""

from __future__ import annotations

import os
from pathlib import Path

TMP_PREFIX = ".tmp-"


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
