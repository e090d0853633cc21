"""What reading a download yields (``Found``, ``Download``) and the pieces every layout shares:
which top-level entries count, and picking a student's one submission file, never silently."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SUFFIXES = (".py", ".ipynb")
CANVAS_RESUBMITTED = re.compile(r"^(?P<base>.+)-(?P<n>\d+)$")


class LayoutError(Exception):
    """A download that claims a layout but cannot be read as one (one line)."""


@dataclass(frozen=True)
class NotGraded:
    """An upload (or zip member) that is not graded, and which file was graded instead and why.

    Never dropped in silence: each is one line on stderr and an entry of summary.json's ``not_graded``
    (``grader.batch.run``), so staff see the older attempt or second file a student may have meant."""

    file: str  # as the download names it, relative to its root (a zip member: its name in the zip)
    why: str
    student: str = ""  # whose upload it is, once the roster is applied; '' when nobody's (a refused zip member)

    def line(self) -> str:
        """``not graded: <file> (<student>): <why>``, one line."""
        whose = f" ({self.student})" if self.student else ""
        return " ".join(f"not graded: {self.file}{whose}: {self.why}".split())


@dataclass(frozen=True)
class Found:
    """One submission in a download, before the roster says whose it is."""

    who: tuple[tuple[str, str], ...]  # how the LMS names the student, most trusted first: ("canvas_id", "12345")
    label: str  # the student as the LMS shows them, for messages: "Canvas user 12345 (doejane)"
    fallback: str  # the id used when there is no roster
    path: Path | None  # the file to grade; None when ``problem`` says why not
    file: str  # as shown in the gradebook, relative to the download's root
    problem: str = ""
    submitted_at: str = ""  # ISO 8601, '' when the download does not say
    late: bool | None = None  # the LMS's own late flag, None when the download has none
    unused: tuple[NotGraded, ...] = ()  # this student's other uploads, not graded: which was, and why


@dataclass(frozen=True)
class Download:
    layout: str
    found: tuple[Found, ...]
    unknown: tuple[str, ...] = ()  # top-level names that are no submission of this layout
    notes: tuple[str, ...] = ()  # what the download could not give, once each


Refused = dict[str, tuple[str, str]]  # top-level name -> (the file to show, why it is not read): links


def ignored(name: str) -> bool:
    """``__MACOSX``, ``.ipynb_checkpoints``, ``.git``, ``__pycache__``: never a submission."""
    return name.startswith((".", "_"))


def _tops(root: Path, refused: Refused) -> list[Path]:
    """The top-level entries, sorted, ignored names left out; a refused one (a zip's link member, never
    unpacked) is listed whether or not it is on disk."""
    names = {c.name for c in root.iterdir()} | set(refused)
    return [root / name for name in sorted(names) if not ignored(name)]


def _stem(path: Path) -> str:
    return path.stem if path.is_file() else path.name


def pick(folder: Path, stem: str) -> Path | str:
    """The one submission file in a folder, or why there is not exactly one (``pick_all``'s first half)."""
    return pick_all(folder, stem)[0]


def pick_all(folder: Path, stem: str) -> tuple[Path | str, tuple[NotGraded, ...]]:
    """The one submission file in a folder, or why there is not exactly one, and the other ``.py`` /
    ``.ipynb`` files it was chosen over.

    Searched at any depth; the file named like the assignment's wins, else the
    only ``.py`` / ``.ipynb`` file there is. Never a silent pick.
    """
    candidates = sorted(
        p for p in folder.rglob("*")
        if p.suffix in SUFFIXES and p.is_file()
        and not any(ignored(part) for part in p.relative_to(folder).parts)
    )
    named = [p for p in candidates if p.stem == stem]
    chosen = named or candidates
    picked = _one(chosen, [str(p.relative_to(folder.parent)) for p in chosen], f"in {folder.name}/")
    if isinstance(picked, str):
        return picked, ()
    graded = picked.relative_to(folder.parent)
    return picked, tuple(NotGraded(str(p.relative_to(folder.parent)),
                                   f"{graded} is graded instead: it is named like the assignment's ({stem})")
                         for p in candidates if p != picked)


def _one(chosen: list[Path], shown: list[str], where: str) -> Path | str:
    """The single file chosen, else why there is not exactly one (never a silent pick)."""
    if len(chosen) == 1:
        return chosen[0]
    if not chosen:
        return f"no .py or .ipynb file {where}"
    return f"more than one submission for this student: {', '.join(shown)}; keep one and grade again"


def _found(who: tuple[tuple[str, str], ...], label: str, fallback: str, root: Path, where: str,
           picked: Path | str, submitted_at: str = "", late: bool | None = None,
           unused: tuple[NotGraded, ...] = ()) -> Found:
    """A student's entry: the picked file, or the problem and ``where`` (the folder or first file) it was seen."""
    if isinstance(picked, str):
        return Found(who, label, fallback, None, where, picked, submitted_at, late, unused)
    return Found(who, label, fallback, picked, str(picked.relative_to(root)), "", submitted_at, late, unused)


def _found_in_folder(who: tuple[tuple[str, str], ...], label: str, fallback: str, root: Path, folder: Path,
                     picked: tuple[Path | str, tuple[NotGraded, ...]] | Path | str, submitted_at: str = "",
                     late: bool | None = None) -> Found:
    """``picked``: ``pick_all``'s answer (the other files said), or a problem found before picking."""
    file, unused = picked if isinstance(picked, tuple) else (picked, ())
    return _found(who, label, fallback, root, f"{folder.relative_to(root)}/", file, submitted_at, late, unused)


def _pick_flat(files: list[tuple[Path, str]], stem: str, resubmissions: bool
               ) -> tuple[Path | str, tuple[NotGraded, ...]]:
    """One student's submission among flat files ``(path, original name)``, and every other upload of
    theirs with why it is not graded.

    The original named like the assignment wins (Canvas' ``attention-2.py`` is
    ``attention.py`` uploaded a third time: the highest ``-N`` is the latest),
    else the only ``.py`` / ``.ipynb``; anything else is a problem naming the files.
    """
    latest: dict[tuple[str, str], tuple[int, Path]] = {}
    base_of: dict[Path, tuple[str, str]] = {}
    for path, original in files:
        suffix = Path(original).suffix
        if suffix not in SUFFIXES:
            continue
        base, n = Path(original).stem, 0
        again = CANVAS_RESUBMITTED.match(base) if resubmissions else None
        if again:
            base, n = again["base"], int(again["n"])
        key = base_of[path] = (base, suffix)
        if key not in latest or n > latest[key][0]:
            latest[key] = (n, path)
    named = {k: v for k, v in latest.items() if k[0] == stem}
    chosen = sorted(v[1] for v in (named or latest).values())
    picked = _one(chosen, [p.name for p in chosen], f"among {', '.join(p.name for p, _ in files)}")
    return picked, tuple(_why_not(path, base_of.get(path), latest, picked, stem)
                         for path, _ in files if path != picked and (path not in chosen or len(chosen) < 2))


def _why_not(path: Path, key: tuple[str, str] | None, latest: dict[tuple[str, str], tuple[int, Path]],
             picked: Path | str, stem: str) -> NotGraded:
    """Why one flat upload is not graded, naming the file that is (if any)."""
    graded = f"; {picked.name} is graded" if isinstance(picked, Path) else "; nothing of this student is graded"
    if key is None:
        return NotGraded(path.name, f"not a .py or .ipynb file{graded}")
    if latest[key][1] != path:
        newest = latest[key][1]
        if newest == picked:
            return NotGraded(path.name, f"an older upload of {''.join(key)}; the latest, {newest.name}, is graded")
        return NotGraded(path.name, f"an older upload of {''.join(key)} (the latest is {newest.name}){graded}")
    return NotGraded(path.name, f"not named like the assignment's ({stem}){graded}")


def _flat_found(who: tuple[tuple[str, str], ...], label: str, fallback: str, root: Path, first: Path,
                picked: tuple[Path | str, tuple[NotGraded, ...]], late: bool | None = None) -> Found:
    file, unused = picked
    return _found(who, label, fallback, root, str(first.relative_to(root)), file, "", late, unused)
