"""What a re-grade changed: which students' scores moved, old -> new, and by which checks.

``grade-all`` re-grades a student when their file or the assignment's
fingerprint (``batch.fingerprint``: checks, points, reference, grader)
changed. Before it overwrites anything it keeps each student's previous
record and per-check points (``snapshot``); once the class is graded,
``compare`` lists the students whose score changed and ``write_csv`` writes
``changes.csv`` (the instructor page's "What the last re-grade changed" reads
it back with ``read_csv``). ``grade-all --dry-run`` prints the same list
(``lines``) and writes nothing.

Everything here but the readers and writers of files (the last section) is pure.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from grader import files
from grader.export.gradebook import Row

FILE_CHANGED = "file changed"
GRADER_CHANGED = "grader changed (fingerprint)"
BOTH = "both"
OVERRIDE = "staff override"
LATE = "late policy"
FORCED = "graded again (--force), same file and grader"
COLUMNS = ("student", "old_score", "new_score", "delta", "checks", "reason")
NOTHING = "no score changed"
FILE_NAME = "changes.csv"
CHECKS_SHOWN = 5  # on the terminal and the page; changes.csv has every check


@dataclass(frozen=True)
class Standing:
    """One student's side of the comparison: the row, the record's key, the card's points per check."""

    row: Row
    key: str = ""  # "sha256:fingerprint" as the record stores it ('' when unknown: an error or missing row)
    checks: Mapping[str, float] | None = None  # "exercise::check id" -> points got; None without a card


@dataclass(frozen=True)
class CheckChange:
    check: str  # "exercise::check id"
    old: float | None  # None: the check was not on the old (new) card
    new: float | None

    def text(self) -> str:
        return f"{self.check}: {number(self.old)}→{number(self.new)}"


@dataclass(frozen=True)
class Change:
    student: str
    old_score: float | None  # None: not graded before (error row), or no score now
    new_score: float | None
    reason: str  # FILE_CHANGED, GRADER_CHANGED or BOTH, else OVERRIDE or FORCED; "+ late policy" when it moved
    checks: tuple[CheckChange, ...] = field(default_factory=tuple)

    @property
    def delta(self) -> float | None:
        if self.old_score is None or self.new_score is None:
            return None
        return round(self.new_score - self.old_score, 6)

    def cells(self) -> dict[str, str]:
        return {"student": self.student, "old_score": number(self.old_score, ""),
                "new_score": number(self.new_score, ""), "delta": signed(self.delta),
                "checks": "; ".join(c.text() for c in self.checks), "reason": self.reason}

    def line(self) -> str:
        """One line for the terminal: ``bob: 120 → 125.5 (+5.5), grader changed (fingerprint); checks...``."""
        delta = f" ({signed(self.delta)})" if self.delta is not None else ""
        text = f"{self.student}: {number(self.old_score)} → {number(self.new_score)}{delta}, {self.reason}"
        shown = [c.text() for c in self.checks[:CHECKS_SHOWN]]
        if len(self.checks) > CHECKS_SHOWN:
            shown.append(f"and {len(self.checks) - CHECKS_SHOWN} more checks (changes.csv lists them all)")
        return text + (f"; {'; '.join(shown)}" if shown else "")


def number(value: float | None, none: str = "none") -> str:
    if value is None:
        return none
    text = f"{round(float(value), 6):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def signed(value: float | None) -> str:
    if value is None:
        return ""
    text = number(value)
    return text if text.startswith("-") or text == "0" else f"+{text}"


# ------------------------------------------------------------------ the comparison (pure)


def card_checks(card: Mapping[str, Any]) -> dict[str, float]:
    """A card's (its JSON's) points per check, keyed ``exercise::id`` (parameters kept: each is a check)."""
    return {f"{c['exercise']}::{c['id']}": float(c["score"]) for c in card.get("checks", ())}


def reason(old_key: str, new_key: str, checks_moved: bool = False, late_moved: bool = False) -> str:
    """Why a student's score moved: the record keys ``sha256:fingerprint`` say whether the file or the
    grader changed; when neither did, a check's points moved only by a staff override (else the
    student was graded again by --force); ``late_moved``: the late policy's rule for them changed
    (a new submission time or extension)."""
    old_sha, _, old_fp = old_key.partition(":")
    new_sha, _, new_fp = new_key.partition(":")
    file = old_sha != new_sha  # one side empty: the file appeared or is gone
    grader = bool(old_fp) and bool(new_fp) and old_fp != new_fp
    if file or grader:
        why = BOTH if file and grader else FILE_CHANGED if file else GRADER_CHANGED
        return f"{why} + {LATE}" if late_moved else why
    if checks_moved:
        return f"{OVERRIDE} + {LATE}" if late_moved else OVERRIDE
    return LATE if late_moved else FORCED


def check_changes(old: Mapping[str, float] | None, new: Mapping[str, float] | None) -> tuple[CheckChange, ...]:
    """The checks whose points differ, in the new card's order (then those only on the old card)."""
    if old is None or new is None:
        return ()
    out = [CheckChange(k, old.get(k), v) for k, v in new.items() if old.get(k) is None or abs(old[k] - v) > 1e-9]
    out += [CheckChange(k, v, None) for k, v in old.items() if k not in new]
    return tuple(out)


def _score(row: Row) -> float | None:
    return row.score if row.status == "graded" else None


def compare(old: Mapping[str, Standing], new: Mapping[str, Standing],
            notes: Mapping[str, Sequence[str]] | None = None) -> list[Change]:
    """The students whose score changed between two gradings, by student id.

    Only students in both: a first grading changes nobody's score, and a
    student no longer in the plan (another shard) is not this run's.
    A student whose row lost its score (graded -> error or missing) or
    gained one counts, with the missing side empty. ``notes``: what else a
    student's reason says, after ``; `` (``grader.batch.final``: "override no
    longer applies: the submission changed (target)"), so a score an override
    stopped holding up is never explained as the file alone.
    """
    changes = []
    for student in sorted(set(old) & set(new)):
        before, after = old[student], new[student]
        a, b = _score(before.row), _score(after.row)
        if a is None and b is None:
            continue
        if a is not None and b is not None and abs(a - b) <= 1e-9:
            continue
        new_key = after.key or (f"{after.row.sha256}:" if after.row.sha256 else "")
        old_key = before.key or (f"{before.row.sha256}:" if before.row.sha256 else "")
        moved = check_changes(before.checks, after.checks)
        late = (before.row.late_rule or "") != (after.row.late_rule or "")
        why = "; ".join([reason(old_key, new_key, bool(moved), late), *(notes or {}).get(student, ())])
        changes.append(Change(student, a, b, why, moved))
    return changes


def lines(changes: Sequence[Change], compared: bool = True) -> list[str]:
    """What to print: one line per change, or one line saying nothing changed."""
    if not compared:
        return ["no earlier grading in --out to compare with: no score changed"]
    if not changes:
        return [NOTHING]
    return [f"{len(changes)} score(s) changed:", *(f"  {c.line()}" for c in changes)]


# ------------------------------------------------------------------ files


def read_card_checks(path: Path) -> dict[str, float] | None:
    try:
        return card_checks(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def snapshot(students: Iterable[str], read_record: Callable[[str], tuple[Row, str] | None]) -> dict[str, Standing]:
    """The previous grading of ``students`` from their records (read before they are overwritten)."""
    out = {}
    for student in students:
        found = read_record(student)
        if found is not None:
            out[student] = Standing(*found)
    return out


def with_cards(before: Mapping[str, Standing], wanted: Callable[[str], bool],
               card: Callable[[str], Path]) -> dict[str, Standing]:
    """``before`` with the points per check of the ``wanted`` students' cards (read before they are rewritten)."""
    return {s: replace(g, checks=read_card_checks(card(s))) if g.row.card and wanted(s) else g
            for s, g in before.items()}


def csv_text(changes: Sequence[Change]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, COLUMNS, lineterminator="\n")
    writer.writeheader()
    for change in changes:
        writer.writerow({k: _safe(v) for k, v in change.cells().items()})
    return buffer.getvalue()


def _safe(cell: str) -> str:
    """No cell starts a spreadsheet formula (a student id could); a signed delta is a number, kept."""
    if cell[:1] in ("=", "@", "\t", "\r") or (cell[:1] in ("+", "-") and not _is_number(cell)):
        return "'" + cell
    return cell


def _unsafe(cell: str) -> str:
    """``_safe`` undone (the page shows the student id as it is, autoescaped)."""
    return cell[1:] if cell[:1] == "'" and _safe(cell[1:]) == cell else cell


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def write_csv(changes: Sequence[Change], path: Path) -> None:
    files.write_atomically(path, csv_text(changes))


def read_csv(path: Path) -> list[dict[str, str]] | None:
    """``changes.csv``'s rows as dicts (for the instructor page); None when there is none."""
    try:
        with path.open(newline="", encoding="utf-8") as f:
            return [{k: _unsafe(v) for k, v in row.items()} for row in csv.DictReader(f)]
    except OSError:
        return None
