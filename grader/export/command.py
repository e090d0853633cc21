"""``grader export FORMAT CARDS... --out FILE``: cards graded earlier, in another format.

Each format is a small module in ``grader/export/``; this only reads the
cards (the student id is a card's file name, as ``grade-all`` writes them)
and picks the module.

``canvas`` also takes a ``grade-all`` output folder instead of cards: its
``records/`` hold a row for every student, ``error`` and ``missing`` ones
included, which cards alone cannot tell (an error student has no card, and
would read as a student with no row: an empty cell). From a folder, error
students are left out of the file exactly as the gradebook leaves their score
empty, so Canvas keeps whatever grade it holds; ``export`` returns them so
the command can name them.

``moodle`` takes cards or a grade-all folder the same way, and the instructor's
grading worksheet (``--worksheet``): it writes the worksheet back with the
graded students' grades and comments (``moodle.py``, ``moodle_plan.py``;
the worksheet file itself: ``grader/coursedata/moodle_worksheet.py``).
``export`` returns the lines the command prints on stderr: who was left out,
and why.

A grade-all folder is the batch's output, and the batch stands on this package
(its gradebook rows): so the caller passes the folder's reader (``grade_all``;
the CLI gives ``grader.batch.layout.read_folder``) and nothing here imports
``grader.batch``. Without a reader a folder is refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Callable

from grader.coursedata import moodle_worksheet
from grader.export import canvas, gradebook_csv, gradescope, html, junit
from grader.export.gradebook import Row, exercise_scores, row_from_card
from grader.coursedata.roster import read_roster
from grader.scorecard import Scorecard
from grader.words import count


class ExportError(Exception):
    """Cards that cannot be exported as asked (one line; the CLI's exit 2)."""


GradeAllReader = Callable[[Path], tuple[list[Row], str]]
"""A grade-all output folder -> every student's row and the assignment id; raises ``ValueError`` (one line)
when the folder is not one or cannot be read."""


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
           title: str | None = None, view: str = "student", config: Path | None = None,
           worksheet: Path | None = None, scale: bool = False, grade_all: GradeAllReader | None = None) -> list[str]:
    """Write ``card_paths`` as ``fmt`` to ``out`` (html and pytest-json: a folder, one file per card).

    Returns lines for the command to print on stderr: the students a canvas or moodle file leaves as the
    LMS has them (an ``error`` row is no grade), and why.
    """
    folders = [p for p in card_paths if p.is_dir()]
    if folders:
        if fmt not in ("canvas", "moodle") or len(card_paths) != 1:
            raise ExportError(f"{folders[0]} is a folder: only canvas and moodle take a grade-all output folder "
                              "(alone); give the other formats card files")
        rows, assignment = batch_rows(folders[0], grade_all)
        if fmt == "moodle":
            return export_moodle(rows, batch_cards(folders[0], rows), out, worksheet, scale)
        return _canvas_notes(export_canvas_from_batch(folders[0], rows, assignment, out, roster, title))
    cards = load_cards(card_paths)
    if fmt == "moodle":
        rows = [row_from_card(student, card, card.submission.file, str(path))
                for (student, card), path in zip(cards, card_paths)]
        return export_moodle(rows, dict(cards), out, worksheet, scale)
    if fmt == "html":
        write_pages(cards, out, view)
    elif fmt == "pytest-json":
        write_pytest_reports(cards, out, view)
    elif fmt == "gradescope":
        if len(cards) != 1:
            raise ExportError(f"gradescope: results.json holds one submission; {count(len(cards), 'card')} given")
        gradescope.write(cards[0][1], out, gradescope_visibility(cards[0][1].assignment, config))
    elif fmt == "junit":
        junit.write(cards, out)
    else:
        rows = [row_from_card(student, card, card.submission.file, str(path))
                for (student, card), path in zip(cards, card_paths)]
        if fmt == "gradebook":
            exercises = [name for name, _ in exercise_scores(cards[0][1])]
            gradebook_csv.write(rows, exercises, out)
        elif fmt == "canvas":
            points = max(card.max_score for _, card in cards)
            return _canvas_notes(write_canvas(rows, out, roster, title or cards[0][1].assignment, points))
        else:
            raise ExportError(f"unknown format {fmt!r}")
    return []


def gradescope_visibility(assignment: str, config: Path | None) -> dict[str, str]:
    """The Gradescope visibility per ours for ``assignment``: its ``gradescope_visibility`` in ``config``
    (which must know it), else in the course's own config when that knows it, else the default."""
    from grader.config import DEFAULT_CONFIG, ConfigError, load_config

    path = config or DEFAULT_CONFIG
    try:
        known = load_config(path).assignments
    except ConfigError as exc:
        raise ExportError(str(exc)) from None
    if assignment not in known:
        if config is not None:
            raise ExportError(f"gradescope: {config} has no assignment {assignment!r}, the cards'")
        return gradescope.visibility_map()
    try:
        return gradescope.visibility_map(dict(known[assignment].gradescope_visibility))
    except ValueError as exc:
        raise ExportError(f"{path}: {exc}") from None


def write_canvas(rows: Sequence[Row], out: Path, roster: Path | None, title: str, points: float) -> list[Row]:
    """The Canvas import file; the error rows it leaves out (Canvas keeps their grade)."""
    if roster is None:
        raise ExportError("canvas: --roster is needed (its canvas_id column gives Canvas' student ids)")
    try:
        canvas.write(rows, read_roster(roster), title, points, out)
    except ValueError as exc:
        raise ExportError(f"canvas: {exc}") from None
    return [r for r in rows if r.status == "error"]


def _canvas_notes(left_out: Sequence[Row]) -> list[str]:
    """As the gradebook, an error is no score: Canvas keeps what it holds."""
    return [f"canvas: {row.student} left out (error: {' '.join(row.message.split())}); their Canvas grade is "
            "unchanged" for row in left_out]


def export_moodle(rows: Sequence[Row], cards: dict[str, Scorecard], out: Path, worksheet: Path | None,
                  scale: bool) -> list[str]:
    """Moodle's grading worksheet filled with the graded rows' grades and comments; the notes to print."""
    from grader.export import moodle_plan

    if worksheet is None:
        raise ExportError("moodle: --worksheet is needed (the assignment's grading worksheet, downloaded from "
                          "View all submissions -> Download grading worksheet)")
    try:
        return moodle_plan.upload(moodle_worksheet.read_worksheet(worksheet), rows, cards, out, scale)
    except (moodle_worksheet.WorksheetError, moodle_plan.PlanError) as exc:
        raise ExportError(f"moodle: {exc}") from None


def batch_cards(folder: Path, rows: Sequence[Row]) -> dict[str, Scorecard]:
    """The graded rows' cards in a grade-all folder, by student (a record's card that is gone: refused)."""
    cards = {}
    for row in rows:
        if row.status == "graded" and row.card:
            (_, card), = load_cards([folder / row.card])
            cards[row.student] = card
    return cards


def export_canvas_from_batch(folder: Path, rows: Sequence[Row], assignment: str, out: Path, roster: Path | None,
                             title: str | None) -> list[Row]:
    """Canvas from a grade-all folder's records: every student's row, errors included."""
    graded = [r for r in rows if r.status == "graded" and r.max_score is not None]
    if not graded:
        raise ExportError(f"canvas: {folder} has no graded student: nothing to give Canvas points possible from")
    return write_canvas(rows, out, roster, title or assignment, max(r.max_score or 0.0 for r in graded))


def batch_rows(folder: Path, grade_all: GradeAllReader | None) -> tuple[list[Row], str]:
    """Every row of a grade-all output folder and its assignment, read by the caller's ``grade_all``."""
    if grade_all is None:
        raise ExportError(f"{folder} is a folder, and this caller reads no grade-all output folder; give card files")
    try:
        return grade_all(folder)
    except ValueError as exc:
        raise ExportError(str(exc)) from None


def write_pytest_reports(cards: Sequence[tuple[str, Scorecard]], out: Path, view: str) -> None:
    """One pytest-json-report file per card, ``out/<student>.report.json``. Its module imports pytest (~0.1 s),
    which no other format needs: imported here."""
    from grader.export import pytest_json

    _write_each(cards, out, "pytest-json", "reports", lambda card, path: pytest_json.write(card, path, view=view),
                ".report.json")


def _one_per_name(cards: Sequence[tuple[str, Scorecard]], fmt: str) -> None:
    students = [student for student, _ in cards]
    twice = sorted({s for s in students if students.count(s) > 1})
    if twice:
        raise ExportError(f"{fmt}: two cards are named {twice[0]!r}; each file is named after its card's file")


def write_pages(cards: Sequence[tuple[str, Scorecard]], out: Path, view: str) -> None:
    """One feedback page per card, ``out/<student>.html``."""
    _write_each(cards, out, "html", "pages", lambda card, path: html.write(card, path, view=view), ".html")


def _write_each(cards: Sequence[tuple[str, Scorecard]], out: Path, fmt: str, what: str,
                write: Callable[[Scorecard, Path], None], suffix: str) -> None:
    """One file per card in the folder ``out``, named after its card: two cards of one name would overwrite
    each other, and a file where the folder should be is refused, each in one line."""
    _one_per_name(cards, fmt)
    if out.exists() and not out.is_dir():
        raise ExportError(f"{fmt}: --out {out} is a file; give a folder for the {what}")
    out.mkdir(parents=True, exist_ok=True)
    for student, card in cards:
        write(card, out / f"{student}{suffix}")
