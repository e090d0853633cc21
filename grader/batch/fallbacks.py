"""What grade-all did instead of what staff may have meant: each fallback said, never silent.

A grader that quietly falls back (an id in the extensions file that is nobody's, a student whose
submission time nobody knows, Canvas's LATE flag on an assignment without a late policy, a course
secret dropped between two runs, no course secret at all) gives a gradebook that looks right and is
not. Each such case is one warning line on stderr, ``grader: warning: <what>; <what the grader did
instead>; <how to fix it>``, the prefix every line the grader writes has, and the same text (without
the prefix) in
``summary.json``'s ``warnings``. The one fallback that would make a run mislead by its very
output, a ``--dry-run`` without the secret the graded cards were made with, is refused instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from grader import seeds
from grader.batch.intake import SHOWN, Handin
from grader.config import AssignmentConfig

PREFIX = "grader: warning: "


def _listed(names: Sequence[str]) -> str:
    more = len(names) - SHOWN
    return ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def line(text: str) -> str:
    """A warning as stderr shows it: one line, the prefix first."""
    return PREFIX + " ".join(text.split())


def unmatched_ids(extensions: Mapping[str, Any], times: Mapping[str, Any], students: set[str]) -> list[str]:
    """The extensions and ``--submitted-at-csv`` rows whose id is no student's: ignored, so said (a typo
    there would otherwise cost a student their extension without a word)."""
    out = []
    for what, rows, effect in (("the extensions CSV", extensions, "their extensions are not applied"),
                               ("--submitted-at-csv", times, "their times are not used")):
        strangers = sorted(set(rows) - students)
        if strangers:
            out.append(f"{what} names {len(strangers)} id(s) that match no student: {_listed(strangers)}; "
                       f"{effect}; correct them to the roster's ids (or the submissions' names)")
    return out


def unknown_times(plan: Sequence[Handin], assignment: AssignmentConfig, times: Mapping[str, Any],
                  time_for_all: Any) -> list[str]:
    """Students with a file but no submission time under a late policy: graded as on time, so said."""
    if assignment.deadline is None or time_for_all:
        return []
    unknown = [e.student for e in plan if e.path is not None and not times.get(e.student) and not e.submitted_at]
    if not unknown:
        return []
    where = "not in --submitted-at-csv, " if times else ""
    return [f"no submission time for {len(unknown)} student(s): {_listed(unknown)} ({where}no --submitted-at, "
            f"none in the download); graded as on time; give their times in --submitted-at-csv "
            f"(student,submitted_at) or --submitted-at"]


def ignored_late_flags(plan: Sequence[Handin], assignment: AssignmentConfig) -> list[str]:
    """The LMS marked submissions late (Canvas's ``LATE_``) but the assignment has no late policy."""
    flagged = [e.student for e in plan if e.late]
    if assignment.deadline is not None or not flagged:
        return []
    return [f"the download marks {len(flagged)} submission(s) late: {_listed(flagged)}; the flag is ignored "
            f"because no deadline policy is set (no penalty; kept in records/); add a deadline: to assignment "
            f"{assignment.id!r} in assignments.yaml to apply one"]


def seeded_before(out: Path) -> bool:
    """Whether the cards in ``out`` were graded with per-student hidden inputs (a course secret): one card
    says it for all, as every student of a run with a secret gets a seed of their own."""
    for card in sorted((out / "cards").glob("*.json")) if (out / "cards").is_dir() else ():
        try:
            seed = json.loads(card.read_text(encoding="utf-8"))["environment"]["input_seed"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        return bool(seed)
    return False


def secret_dropped(out: Path, dry_run: bool, secret: bytes | None) -> list[str]:
    """No course secret now, where the last run in ``out`` had one.

    A ``--dry-run`` is refused (SecretError, exit 2): it would re-grade the class on the shared inputs
    and compare those scores with the per-student ones, and "no score changed" would then be about the
    wrong grading. A real run is warned: it re-grades everyone on shared inputs, which may be meant."""
    if secret or not seeded_before(out):
        return []
    if dry_run:
        raise seeds.SecretError(f"--dry-run without the course secret: the cards in {out} were graded with "
                                f"per-student hidden inputs, and this run would grade on shared ones; set "
                                f"{seeds.SECRET_ENV} or --course-secret-file as the last run did")
    return [f"no course secret, but the cards in {out} were graded with per-student hidden inputs; every "
            f"student is re-graded on the shared inputs; set {seeds.SECRET_ENV} or --course-secret-file as the "
            f"last run did, unless dropping the secret is meant"]


def no_secret(out: Path, secret: bytes | None) -> list[str]:
    """No course secret at all: every student's hidden checks get the same inputs, so one student's card
    (or a hard-coded answer) passes for everyone; only a note inside each card said so. One warning, with
    the command that makes a secret; ``secret_dropped`` speaks instead where the last run had one."""
    if secret or seeded_before(out):
        return []
    return [f"no course secret ({seeds.SECRET_ENV}, --course-secret-file or course_secret_file: in "
            f"assignments.yaml): the hidden checks' inputs are the same for every student; make one once per "
            f"course with `{seeds.MAKE_SECRET_FILE}` and pass --course-secret-file {seeds.SECRET_FILE_EXAMPLE} "
            f"to every grade-all of the course (docs/instructors.md: \"The course secret\")"]


def said(found: Sequence[Handin], plan: Sequence[Handin], roster: Sequence[Any] | None,
         assignment: AssignmentConfig, options: Any, secret: bytes | None) -> list[str]:
    """Every fallback of this run, as warning texts (without the prefix); each is also said on stderr
    through ``options.say``. ``found``: every student of the download (all shards), ``plan``: this run's."""
    students = {e.student for e in found} | {r.student for r in roster or ()}
    texts = [*secret_dropped(options.out, False, secret), *no_secret(options.out, secret),
             *unmatched_ids(options.extensions, options.submitted_at, students),
             *unknown_times(plan, assignment, options.submitted_at, options.submitted_at_all),
             *ignored_late_flags(plan, assignment)]
    texts = [" ".join(t.split()) for t in texts]
    if options.say is not None:
        for text in texts:
            options.say(line(text))
    return texts
