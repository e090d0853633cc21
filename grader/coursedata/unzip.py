"""A class's ``.zip`` unpacked member by member: each to a file of its own, never onto another's.

Why not ``ZipFile.extractall``: it quietly rewrites a hostile name into a harmless-looking one
(``../alice.py`` and ``/alice.py`` both become ``alice.py``), so a zip holding ``alice.py`` and
``../alice.py`` unpacked the second over the first and alice was graded on someone else's file;
``../../evil.py`` became a student called ``evil``. Here every member's name is read as a path
(``\\`` as a separator too, as Windows tools write it) and:

* a path that leaves the class's folder (a ``..`` part), or starts at a root (``/x``, ``C:\\x``,
  ``\\\\server\\x``), is refused: written nowhere, one ``NotGraded`` line naming it;
* members that land on the same file (``alice.py`` and ``./alice.py``, a name given twice, a file
  where another member needs a folder) are all refused: which one is the student's cannot be told,
  so none replaces another, and whoever that file belongs to gets an error row (``clashes``);
* a symbolic link member is never made (``grader.links``: its student gets an error row).

Each file is created anew (``O_EXCL``), so nothing already unpacked is ever replaced.
"""

from __future__ import annotations

import re
import shutil
import zipfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from grader import links
from grader.coursedata.lms_files import NotGraded, ignored
from grader.links import Link

WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")
WRITTEN_NOWHERE = "refused, written nowhere (nobody's file is replaced)"

Parts = tuple[str, ...]


@dataclass
class Unpacked:
    """What unpacking left: the folder to read the class from (inside the one top folder, if any),
    the refused members, the link members by path, and the paths several members claimed."""

    root_parts: Parts = ()
    refused: list[NotGraded] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    clashes: dict[Parts, str] = field(default_factory=dict)  # path -> why nothing was unpacked there


def member_parts(name: str) -> Parts | str:
    """The relative path a member's ``name`` unpacks to, or why it is refused (a ``..`` part, a root)."""
    text = name.replace("\\", "/")
    if text.startswith("/"):
        return "a zip member with an absolute path"
    if WINDOWS_DRIVE.match(text):
        return "a zip member with a Windows drive path"
    parts = tuple(p for p in text.split("/") if p not in ("", "."))
    if ".." in parts:
        return "a zip member whose path leaves the class's folder ('..')"
    return parts


def unpack(archive: zipfile.ZipFile, to: Path) -> Unpacked:
    """Every member of ``archive`` that is safe and alone at its path, written under ``to``."""
    done = Unpacked()
    files: dict[Parts, list[zipfile.ZipInfo]] = defaultdict(list)
    folders: set[Parts] = set()  # every folder a member needs
    made: set[Parts] = set()  # the folders the zip holds as members of their own
    for info in archive.infolist():
        parts = member_parts(info.filename)
        shown = links.printable(info.filename)
        if isinstance(parts, str):
            done.refused.append(NotGraded(shown, f"{parts}: {WRITTEN_NOWHERE}"))
        elif parts:  # "./" alone names the zip's own top: nothing to unpack
            folders.update(parts[:i] for i in range(1, len(parts)))
            if info.filename.replace("\\", "/").endswith("/"):
                folders.add(parts)
                made.add(parts)
            else:
                files[parts].append(info)
    for parts, infos in files.items():
        if len(infos) > 1 or parts in folders:
            _clash(done, parts, infos, parts in folders)
        elif links.zip_member_is_link(infos[0]):
            done.links.append(_link(archive, infos[0], parts))
        else:
            _write(archive, infos[0], to.joinpath(*parts))
    for parts in sorted(made - set(files)):
        to.joinpath(*parts).mkdir(parents=True, exist_ok=True)  # an empty folder is a student with no file
    done.root_parts = _top_folder(set(files), folders)
    return done


def _clash(done: Unpacked, parts: Parts, infos: list[zipfile.ZipInfo], folder_too: bool) -> None:
    path = "/".join(parts)
    names = [links.printable(i.filename) for i in infos]
    what = (f"{len(infos)} zip members unpack to {path} ({', '.join(names)})" if len(infos) > 1
            else f"zip member {names[0]} is a file where other members need a folder {path}/")
    if folder_too and len(infos) > 1:
        what += ", and other members need a folder there"
    done.clashes[parts] = f"{what}: none of them is graded; keep one and grade again"
    for name in names:
        done.refused.append(NotGraded(name, f"{what}: {WRITTEN_NOWHERE}"))


def _link(archive: zipfile.ZipFile, info: zipfile.ZipInfo, parts: Parts) -> Link:
    with archive.open(info) as fh:
        target = fh.read(links.ZIP_TARGET_BYTES).decode("utf-8", "replace")
    return Link(links.printable("/".join(parts)), links.printable(target))


def _write(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path) -> None:
    """One member's bytes, in a file made anew: ``x`` mode fails rather than replace anything."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with archive.open(info) as source, target.open("xb") as sink:
        shutil.copyfileobj(source, sink)


def _top_folder(files: set[Parts], folders: set[Parts]) -> Parts:
    """The one folder every member sits under (ignored names aside), read from the members' own paths:
    what was refused still counts, so a class folder is never mistaken for the one student left in it."""
    tops = {p[0] for p in files | folders if not ignored(p[0])}
    top = next(iter(tops)) if len(tops) == 1 else ""
    return (top,) if top and (top,) in folders and (top,) not in files else ()
