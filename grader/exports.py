"""``grader export FORMAT CARDS... --out FILE``: cards graded earlier, in another format.

Each format is a small module in ``grader/export/``; this only reads the
cards (the student id is a card's file name, as ``grade-all`` writes them)
and picks the module.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from grader.export import canvas, gradebook_csv, gradescope, html, junit
from grader.gradebook import exercise_scores, row_from_card
from grader.roster import read_roster
from grader.scorecard import Scorecard


class ExportError(Exception):
    """Cards that cannot be exported as asked (one line; the CLI's exit 2)."""


def load_cards(paths: Sequence[Path]) -> list[tuple[str, Scorecard]]:
    """``(student id, card)`` pairs; every card must be valid and of one assignment."""
    cards = []
    for path in paths:
        try:
            card = Scorecard.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except OSError as exc:
            raise ExportError(f"cannot read {path}: {exc.strerror or exc}") from None
        except (ValueError, TypeError, KeyError) as exc:  # not JSON, or not the card's schema
            raise ExportError(f"{path} is not a scorecard: {exc}") from None
        cards.append((path.stem, card))
    assignments = sorted({card.assignment for _, card in cards})
    if len(assignments) > 1:
        raise ExportError(f"the cards are from different assignments ({', '.join(assignments)}); export one at a time")
    return cards


def export(fmt: str, card_paths: Sequence[Path], out: Path, *, roster: Path | None = None,
           title: str | None = None, view: str = "student") -> None:
    """Write ``card_paths`` as ``fmt`` to ``out`` (html: a folder, one ``<student>.html`` per card)."""
    cards = load_cards(card_paths)
    if fmt == "html":
        write_pages(cards, out, view)
    elif fmt == "gradescope":
        if len(cards) != 1:
            raise ExportError(f"gradescope: results.json holds one submission; {len(cards)} cards given")
        gradescope.write(cards[0][1], out)
    elif fmt == "junit":
        junit.write(cards, out)
    else:
        rows = [row_from_card(student, card, card.submission.file, str(path))
                for (student, card), path in zip(cards, card_paths)]
        if fmt == "gradebook":
            exercises = [name for name, _ in exercise_scores(cards[0][1])]
            gradebook_csv.write(rows, exercises, out)
        elif fmt == "canvas":
            if roster is None:
                raise ExportError("canvas: --roster is needed (its canvas_id column gives Canvas' student ids)")
            points = max(card.max_score for _, card in cards)
            try:
                canvas.write(rows, read_roster(roster), title or cards[0][1].assignment, points, out)
            except ValueError as exc:
                raise ExportError(f"canvas: {exc}") from None
        else:
            raise ExportError(f"unknown format {fmt!r}")


def write_pages(cards: Sequence[tuple[str, Scorecard]], out: Path, view: str) -> None:
    """One feedback page per card, ``out/<student>.html``; two cards of one name would overwrite each other."""
    students = [student for student, _ in cards]
    twice = sorted({s for s in students if students.count(s) > 1})
    if twice:
        raise ExportError(f"html: two cards are named {twice[0]!r}; each page is named after its card's file")
    if out.exists() and not out.is_dir():
        raise ExportError(f"html: --out {out} is a file; give a folder for the pages")
    out.mkdir(parents=True, exist_ok=True)
    for student, card in cards:
        html.write(card, out / f"{student}.html", view=view)
