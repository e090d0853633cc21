"""Symbolic links in submissions: found, named and refused, never followed.

Why: a submission is the student's own file. A link named ``attention.py`` that
points at the grader's ``solutions/attention.py`` would be graded as the
student's work (full marks), and a link to ``/etc/passwd`` or to any file
outside the class would be read, hashed and quoted back. A repository cloned
with git and a zip unpacked with ``unzip`` both keep links (a zip member is a
link when the Unix mode in its ``external_attr`` says so), so every place that
picks or reads a submission asks here first: ``grade-all``'s intake, ``grader
ci``'s targets and ``load_submission`` itself (the Gradescope runner, standard
library only, carries its own copy of the rule).

Hard links are not refused: a hard link is the file itself (the same inode,
the same content), not a pointer that is resolved when it is read, and only
whoever wrote the submission folder can make one.
"""

from __future__ import annotations

import errno
import os
import stat
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

ADVICE = "submissions are never read through links: submit the file itself"
SHOWN_CHARS = 200  # of a link's target in a message: it is the student's text, kept to one short line
ZIP_TARGET_BYTES = 4096  # a zip link's target is its member's content; more than a path never matters
# Windows has none of O_NOFOLLOW, O_NONBLOCK, O_CLOEXEC, O_DIRECTORY (a student's `grader check` there: there
# ``open_file`` looks for a link before it opens), and opens in text mode without O_BINARY (CRLF rewritten).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO cannot hang us
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_READ_FLAGS = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | getattr(os, "O_BINARY", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC


@dataclass(frozen=True)
class Link:
    """One symbolic link: where it is (as reports name it) and what it points to (as written in it)."""

    path: str  # '/'-separated, relative to the folder searched (or as given)
    target: str  # printable, at most SHOWN_CHARS

    def describe(self) -> str:
        return f"{self.path} is a symbolic link (to {self.target})"


class LinkRefused(Exception):
    """A submission (or a folder on the way to it) is a symbolic link: not read, and said why in one line."""

    def __init__(self, link: Link, advice: str = ADVICE) -> None:
        super().__init__(message([link], advice))
        self.link = link


def message(found: Sequence[Link], advice: str = ADVICE) -> str:
    """One line for course staff and students: the first link, how many more, and what to do."""
    more = len(found) - 1
    others = f", and {more} more link{'s' if more > 1 else ''}" if more else ""
    return f"{found[0].describe()}{others}; {advice}"


def printable(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` on one line: a link's target or name is whatever its author wrote, newlines included."""
    shown = "".join(c if c.isprintable() else "?" for c in text)
    return shown if len(shown) <= limit else shown[:limit - 3] + "..."


def target_of(path: Path | str, dir_fd: int | None = None) -> str | None:
    """What the link at ``path`` points to (printable), or None when ``path`` is not a link (or is gone)."""
    try:
        return printable(os.readlink(path, dir_fd=dir_fd))
    except OSError:  # EINVAL: not a link; ENOENT: gone. Either way there is no link to name.
        return None


def find_links(folder: Path, skip: Callable[[str], bool] = lambda name: False) -> list[Link]:
    """Every symbolic link under ``folder`` (to a file, to a folder, dangling), sorted, none followed.

    ``os.walk`` does not enter linked folders, and each name is checked with
    ``lstat``, so nothing outside ``folder`` is ever listed or read. Names for
    which ``skip(name)`` is true (``__MACOSX``, ``.git``) are not searched:
    the callers never read what is under them either. ``folder`` itself may
    be a link: it is the caller's choice of where to look, not a submission.
    """
    found = []
    for top, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if not skip(name)]  # a linked folder is listed, never entered
        for name in [*folders, *names]:
            path = Path(top) / name
            if not skip(name) and path.is_symlink():
                found.append(Link(printable(path.relative_to(folder).as_posix()), target_of(path) or "?"))
    return sorted(found, key=lambda link: link.path)


def links_on_path(root: Path, rel: Path) -> list[Link]:
    """The links among ``root / rel`` and the folders between it and ``root`` (``root`` itself not checked)."""
    found = []
    path = root
    for i, part in enumerate(rel.parts):
        path = path / part
        target = target_of(path)
        if target is not None:
            found.append(Link(printable(Path(*rel.parts[:i + 1]).as_posix()), target))
            break  # what lies past a link is the link's target: never looked at
    return found


def zip_member_is_link(info: zipfile.ZipInfo) -> bool:
    """Whether a zip member is a symbolic link: Unix ``unzip`` makes it one when the file mode kept in the
    high 16 bits of ``external_attr`` says S_IFLNK (its content is then the target). Checked whatever
    ``create_system`` says, so a zip that claims another system cannot slip one through."""
    return stat.S_ISLNK(info.external_attr >> 16)


def open_file(path: Path, under: Path | None = None) -> BinaryIO:
    """``path`` opened for reading, refusing any link, with no gap between the check and the read.

    The last component is opened with ``O_NOFOLLOW``, so a link there fails
    the open itself (LinkRefused names it); checking first and opening after
    would let a link be swapped in between. With ``under`` (a folder above
    ``path``, e.g. the class folder), every folder from there down is opened
    the same way, one ``openat`` at a time, so a link in a parent folder is
    refused too. Only a regular file is read: a folder or a FIFO is an
    OSError, as the caller's other read failures are.
    """
    if under is None:
        if not _NOFOLLOW and (target := target_of(str(path), None)) is not None:
            raise LinkRefused(Link(printable(str(path)), target))  # no O_NOFOLLOW (Windows): looked at first
        fd = _open_at(None, str(path), _READ_FLAGS, str(path))
    else:
        parts = path.relative_to(under).parts
        if not parts:
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        dir_fd = os.open(under, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
        try:
            for i, part in enumerate(parts[:-1]):
                inner = _open_at(dir_fd, part, _DIR_FLAGS, Path(*parts[:i + 1]).as_posix())
                os.close(dir_fd)
                dir_fd = inner
            fd = _open_at(dir_fd, parts[-1], _READ_FLAGS, Path(*parts).as_posix())
        finally:
            os.close(dir_fd)
    return _regular(fd, path)


def _open_at(dir_fd: int | None, name: str, flags: int, shown: str) -> int:
    """``os.open`` that turns "it is a link" (ELOOP on Linux, EMLINK on BSD, ENOTDIR...) into LinkRefused."""
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError:
        target = target_of(name, dir_fd)
        if target is not None:
            raise LinkRefused(Link(printable(shown), target)) from None
        raise


def _regular(fd: int, path: Path) -> BinaryIO:
    """The descriptor as a blocking binary file when it is a regular file; else closed and an OSError."""
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        code = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
        raise OSError(code, os.strerror(code) if code == errno.EISDIR else "not a regular file", str(path))
    if _NONBLOCK:
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")
