"""The terminal table: one line per check, grouped by exercise, totals last."""

from __future__ import annotations

import textwrap

from grader.scorecard import NotebookReport, Scorecard

SYMBOL = {"passed": "PASS", "failed": "FAIL", "error": "ERR ", "timeout": "TIME", "skipped": "SKIP"}


def render(card: Scorecard, width: int = 100, show_passed: bool = True) -> str:
    """A readable table for instructors and students; failures carry their message."""
    lines = [f"{card.assignment} — {card.submission.file}"]
    if card.grader_error:
        lines.append(f"GRADER ERROR (not a grade): {card.grader_error}")
    exercise = None
    for c in card.checks:
        if c.status == "passed" and not show_passed:
            continue
        if c.exercise != exercise:
            exercise = c.exercise
            got = sum(x.score for x in card.checks if x.exercise == exercise)
            top = sum(x.max_score for x in card.checks if x.exercise == exercise)
            lines.append(f"\n{exercise}  {got:g}/{top:g}")
        lines.append(f"  {SYMBOL[c.status]} {c.score:>5g}/{c.max_score:<5g} {c.id}")
        if c.message and c.status != "passed":
            lines += textwrap.wrap(c.message, width - 8, initial_indent="        ", subsequent_indent="        ")
    for f in card.flags:
        lines.append(f"\nFLAG line {f.line}: {f.message}")
    if card.notebook is not None:
        lines += notebook_lines(card.notebook, width)
    lines.append(f"\nscore: {card.score:g} / {card.max_score:g}")
    return "\n".join(lines) + "\n"


def notebook_lines(nb: NotebookReport, width: int) -> list[str]:
    """What of the notebook did not count, cell by cell, so a student sees why."""
    lines = [f"\nNOTEBOOK: {nb.cells} cells, {nb.code_cells} with code; {len(nb.failed)} cells not run, "
             f"{len(nb.dropped)} statements not run when grading"]
    for note in nb.failed:
        lines += textwrap.wrap(f"cell {note.cell}, line {note.line}: {note.reason} ({note.code})", width - 2,
                               initial_indent="  FAILED ", subsequent_indent="         ")
    for note in nb.dropped:
        lines += textwrap.wrap(f"cell {note.cell}, line {note.line}: `{note.code}` - {note.reason}", width - 2,
                               initial_indent="  skipped ", subsequent_indent="          ")
    return lines
