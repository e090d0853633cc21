"""The terminal table: one line per check, grouped by exercise, totals last.

Each thing is said once: a file-level problem (``card.problem``) at the top, with
the checks it kept from running counted in one line when it stopped them all, a
known mistake (``card.diagnoses``) above its exercise's failed checks, a
message every failed check of an exercise shares under the exercise's line,
and the GPU-only checks this machine cannot run in one line at the end.
"""

from __future__ import annotations

import textwrap

from grader.scorecard import CheckResult, ExerciseDiagnosis, NotebookReport, Scorecard, by_exercise
from grader.words import count, plural

SYMBOL = {"passed": "PASS", "failed": "FAIL", "error": "ERR ", "timeout": "TIME", "skipped": "SKIP"}
SEE_DIAGNOSIS = "(likely mistake: see above)"


def render(card: Scorecard, width: int = 100, show_passed: bool = True) -> str:
    """A readable table for instructors and students; failures carry their message."""
    lines = [f"{card.assignment} — {card.submission.file}"]
    if card.grader_error:
        lines.append(f"GRADER ERROR (not a grade): {card.grader_error}")
    if card.problem:
        lines += _wrap(f"PROBLEM: {card.problem}", width, "", "  ")
    stopped = stopped_by_problem(card)
    if stopped is not None:
        lines += _wrap(f"all {count(stopped[1], 'check')}: {stopped[0]}", width, "", "  ")
        lines.append("")
        lines += [f"{exercise}  {sum(c.score for c in checks):g}/{sum(c.max_score for c in checks):g}"
                  for exercise, checks in by_exercise(card.checks)]
    else:
        for exercise, checks in by_exercise(card.checks):
            lines += _exercise_lines(exercise, checks, card, width, show_passed)
    skipped = [c for c in card.checks if c.status == "skipped"]
    if skipped:
        lines.append("")
        lines += _wrap(skipped_note(card, skipped), width, "", "  ")
    for f in card.flags:
        lines.append(f"\nFLAG line {f.line}: {f.message}")
    if card.notebook is not None:
        lines += notebook_lines(card.notebook, width)
    lines.append(f"\nscore: {card.score:g} / {card.max_score:g}")
    if card.late:  # the late policy grade-all applied (grader.deadlines)
        late = card.late
        lines.append(f"late policy: {late['raw_score']:g} - {late['penalty_points']:g} ({late['penalty_percent']:g}%) "
                     f"= {late['final_score']:g} final")
        lines += _wrap(f"{late['rule']} [{late['policy']}]", width, "  ", "    ")
    return "\n".join(lines) + "\n"


def _exercise_lines(exercise: str, checks: list[CheckResult], card: Scorecard, width: int,
                    show_passed: bool) -> list[str]:
    shown = [c for c in checks if c.status != "passed" or show_passed or c.override is not None]
    if not shown:
        return []
    got, top = sum(c.score for c in checks), sum(c.max_score for c in checks)
    lines = [f"\n{exercise}  {got:g}/{top:g}"]
    whole = exercise_override(checks)
    if whole is not None:
        lines += _wrap(whole, width, "  ", "    ")
    for named in diagnoses_of(card, exercise):
        lines += _wrap(named.text, width, "  ", "    ")
    shared = shared_message(checks)
    if shared:
        failed = sum(c.status not in ("passed", "skipped") for c in checks)
        lines += _wrap(f"all {failed} failed checks: {shared}", width, "  ", "    ")
    for c in shown:
        lines.append(f"  {SYMBOL[c.status]} {c.score:>5g}/{c.max_score:<5g} {c.id}")
        if c.override is not None and c.override.scope != "exercise":
            lines += _wrap(override_line(c), width - 8, "        ", "        ")
        if c.status in ("passed", "skipped"):
            continue
        message = "" if shared else c.message
        if c.diagnosis is not None:
            message = f"{message} {SEE_DIAGNOSIS}".strip()
        if message:
            lines += _wrap(message, width - 8, "        ", "        ")
    return lines


def override_line(check: CheckResult) -> str:
    """The one line that says staff set this check's score, from what, and why."""
    o = check.override
    assert o is not None
    return f"OVERRIDE {o.was:g} -> {o.points:g} by {o.by}: {o.reason}"


def exercise_override(checks: list[CheckResult]) -> str | None:
    """The one line for an exercise whose total staff set (``--exercise``), said once above its checks."""
    spread = [c for c in checks if c.override is not None and c.override.scope == "exercise"]
    if not spread:
        return None
    o = spread[0].override
    assert o is not None
    was, now = sum(c.override.was for c in spread if c.override), sum(c.score for c in spread)
    return f"OVERRIDE exercise total {round(was, 6):g} -> {round(now, 6):g} by {o.by}: {o.reason}"


def diagnoses_of(card: Scorecard, exercise: str) -> list[ExerciseDiagnosis]:
    """The known mistakes said once for ``exercise``."""
    return [d for d in card.diagnoses if d.exercise == exercise]


def shared_message(checks: list[CheckResult]) -> str | None:
    """The message every failed check of an exercise has, when there are several ("not attempted",
    the reference to a file-level problem): a reader needs it once, not under each check."""
    failed = [c for c in checks if c.status not in ("passed", "skipped")]
    messages = {c.message for c in failed}
    if len(failed) > 1 and len(messages) == 1 and not any(c.diagnosis for c in failed):
        return messages.pop() or None
    return None


def stopped_by_problem(card: Scorecard) -> tuple[str, int] | None:
    """(the message, how many checks) when a file-level problem kept every check from running (a file that
    cannot load): said once, not once per check. None when any check ran."""
    ran = [c for c in card.checks if c.status != "skipped"]
    messages = {c.message for c in ran}
    if not card.problem or not ran or len(messages) != 1 or any(
            c.status == "passed" or c.diagnosis or c.override for c in ran):
        return None
    return messages.pop(), len(ran)


def skipped_note(card: Scorecard, skipped: list[CheckResult]) -> str:
    """One line for the skipped checks (GPU only, where this machine has no CUDA): the same on every card."""
    counted = sum(c.max_score for c in skipped)
    points = ("they add 0 to the total" if not counted
              else f"their {count(counted, 'point')} {plural(counted, 'stays', 'stay')} in the total")
    reason = str(card.environment.get("not_checked") or skipped[0].message or "not run here")
    return f"NOT CHECKED ({len(skipped)}): {reason}; {points}."


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, max(width - len(rest), 20), initial_indent=first, subsequent_indent=rest) or [first]


def notebook_lines(nb: NotebookReport, width: int) -> list[str]:
    """What of the notebook did not count, cell by cell, so a student sees why."""
    lines = [f"\nNOTEBOOK: {count(nb.cells, 'cell')}, {nb.code_cells} with code; "
             f"{count(len(nb.failed), 'cell')} not run, "
             f"{count(len(nb.dropped), 'statement')} not run when grading"]
    for note in nb.failed:
        lines += textwrap.wrap(f"cell {note.cell}, line {note.line}: {note.reason} ({note.code})", width - 2,
                               initial_indent="  FAILED ", subsequent_indent="         ")
    for note in nb.dropped:
        lines += textwrap.wrap(f"cell {note.cell}, line {note.line}: `{note.code}` - {note.reason}", width - 2,
                               initial_indent="  skipped ", subsequent_indent="          ")
    return lines
