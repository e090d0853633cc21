"""``summary.json``: what a class did, for the staff who read it before the grades.

Counts of rows by status, score statistics and a histogram over graded
students, the mean per exercise, and per configured check (``exercise::test
name``, all its parameters together) the share of graded students who passed
it: the checks most students failed are where the teaching needs work. Then
the same question from the other side: which known mistakes (diagnoses) and
which failure messages came up most, counted in students, so one lecture
slide can answer the twenty students who made the same mistake.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from grader.coursedata.lms_files import NotGraded
from grader.export.gradebook import ROW_STATUSES, Row

HISTOGRAM_BINS = 10
TOP_FAILURES = 20
FAILED = ("failed", "error", "timeout")
_NUMBER = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def summarise(assignment_id: str, rows: Sequence[Row], cards: Mapping[str, Path],
              warnings: Sequence[str] = (), not_graded: Sequence[NotGraded] = ()) -> dict[str, Any]:
    """Plain data: counts, score stats and histogram, exercise means, per-check pass rates,
    the most common diagnoses and failure messages, the run's warnings (``grader.batch.fallbacks``:
    what the grader did instead of what staff may have meant, kept beside the numbers they affect), and
    ``not_graded``: each upload or zip member that was passed over (``{file, student, why}``), so an
    older attempt or a refused member is on record beside the grades it did not make."""
    graded = [r for r in rows if r.status == "graded"]
    scores = [r.score for r in graded if r.score is not None]
    max_score = graded[0].max_score if graded else None
    statuses = Counter(r.status for r in rows)
    passed: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    mistakes = _Mistakes()
    failures = _Tally()
    for row in graded:  # sorted by student: the example kept for each group is the same in every run and merge
        card = json.loads(cards[row.student].read_text(encoding="utf-8"))
        outcomes: dict[str, list[str]] = {}
        for check in card["checks"]:
            # One entry per configured check: its parameters (float16, bfloat16...) pass together,
            # and a file that could not run at all lists each check once, unparametrised.
            key = _check_key(check)
            outcomes.setdefault(key, []).append(check["status"])
        for key, results in outcomes.items():
            if all(r == "skipped" for r in results):
                continue
            seen[key] += 1
            passed[key] += all(r in ("passed", "skipped") for r in results)
        mistakes.add_diagnoses(*_diagnoses(card))
        failures.add_card(_failures(card))
    exercise_points: dict[str, list[float]] = {}
    for row in graded:
        for name, points in row.exercises:
            exercise_points.setdefault(name, []).append(points)
    return {
        "assignment": assignment_id,
        "counts": {"students": len(rows), **{s: statuses.get(s, 0) for s in ROW_STATUSES}},
        "score": _stats(scores, max_score),
        "histogram": histogram(scores, max_score),
        "exercises": {name: round(statistics.fmean(p), 4) for name, p in exercise_points.items()},
        "checks": {key: {"passed": passed[key], "graded": seen[key], "pass_rate": round(passed[key] / seen[key], 4)}
                   for key in seen},
        "diagnoses": [{"id": d_id, "title": title, "exercise": _where(mistakes.exercises[d_id]), "count": count}
                      for (d_id,), count, title in mistakes.most_common()],
        "failures": [{"exercise": exercise, "check": check, "message": example, "pattern": pattern, "count": count}
                     for (exercise, check, pattern), count, example in failures.most_common()[:TOP_FAILURES]],
        "warnings": list(warnings),
        "not_graded": [{"file": n.file, "student": n.student, "why": n.why}  # the same order in every run and merge
                       for n in sorted(not_graded, key=lambda n: (n.student, n.file, n.why))],
    }


def normalise_message(message: str) -> str:
    """A failure message with every run of digits as ``N`` and whitespace collapsed.

    The same mistake prints different numbers for different students (the
    largest error, a shape, a row index); without the numbers, their
    messages group together.
    """
    return _SPACE.sub(" ", _NUMBER.sub("N", message)).strip()


def histogram(scores: Sequence[float], max_score: float | None,
              bins: int = HISTOGRAM_BINS) -> dict[str, list[float] | list[int]]:
    """``bins`` equal bins over ``0..max_score``: ``edges`` (bins + 1) and ``counts`` (bins).

    A bin holds ``edges[i] <= score < edges[i + 1]``; the last one also holds
    full marks. The counts sum to the number of graded students.
    """
    if max_score is None or max_score <= 0:
        return {"edges": [0.0, float(max_score or 0.0)], "counts": [len(scores)] if scores else []}
    width = max_score / bins
    counts = [0] * bins
    for score in scores:
        counts[min(bins - 1, max(0, int(score / width)))] += 1
    return {"edges": [round(i * width, 4) for i in range(bins + 1)], "counts": counts}


class _Tally:
    """Students per group, each student counted once per group, with the first example seen."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, ...]] = Counter()
        self.examples: dict[tuple[str, ...], str] = {}

    def add_card(self, groups: Sequence[tuple[tuple[str, ...], str]]) -> None:
        for key in dict(groups):  # a student counts once per group
            self.counts[key] += 1
        for key, example in groups:
            self.examples.setdefault(key, example)

    def most_common(self) -> list[tuple[tuple[str, ...], int, str]]:
        """By count, most first; ties in key order, so the list is the same in every run."""
        return [(key, count, self.examples[key])
                for key, count in sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))]


def _check_key(check: Mapping[str, Any]) -> str:
    return f"{check['exercise']}::{_check_name(check)}"


def _check_name(check: Mapping[str, Any]) -> str:
    return str(check["id"]).split("[", 1)[0]


class _Mistakes(_Tally):
    """Students per known mistake, and per mistake which exercise showed it to how many students.

    One mistake fails checks of several exercises (a wrong softmax breaks
    ``attention`` and ``multi_head_attention`` too): it counts once per
    student, under the first exercise in the card's order that showed it,
    the one the others build on.
    """

    def __init__(self) -> None:
        super().__init__()
        self.exercises: dict[str, Counter[str]] = {}

    def add_diagnoses(self, groups: Sequence[tuple[tuple[str, ...], str]], exercises: Mapping[str, str]) -> None:
        self.add_card(groups)
        for mistake, exercise in exercises.items():
            self.exercises.setdefault(mistake, Counter())[exercise] += 1


def _where(exercises: Counter[str]) -> str:
    """The exercise most students' cards showed the mistake in first (ties: by name)."""
    return min(exercises.items(), key=lambda item: (-item[1], item[0]))[0]


def _diagnoses(card: Mapping[str, Any]) -> tuple[list[tuple[tuple[str, ...], str]], dict[str, str]]:
    """``((mistake id,), title)`` for every diagnosed check of a card, and the first exercise showing each."""
    found = [((c["diagnosis"]["id"],), c["diagnosis"]["title"]) for c in card["checks"] if c.get("diagnosis")]
    first: dict[str, str] = {}
    for c in card["checks"]:
        if c.get("diagnosis"):
            first.setdefault(c["diagnosis"]["id"], c["exercise"])
    return found, first


def _failures(card: Mapping[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    """``((exercise, check, normalised message), message)`` for every check that did not pass.

    One message that every check of an exercise failed with ("not attempted")
    counts once, as check ``*``; one that every check of the card failed with
    (a syntax error: the file could not run) counts once, as exercise and
    check ``*``. Otherwise one broken file would fill the top of the list.
    """
    if card.get("problem"):  # the file itself could not run: the card says why once
        return [(("*", "*", normalise_message(card["problem"])), card["problem"])]
    ran = [c for c in card["checks"] if c["status"] != "skipped"]
    if _one_message(ran):
        return [(("*", "*", normalise_message(ran[0]["message"])), ran[0]["message"])]
    found = []
    exercises: dict[str, list[Mapping[str, Any]]] = {}
    for check in ran:
        exercises.setdefault(check["exercise"], []).append(check)
    for exercise, checks in exercises.items():
        if _one_message(checks):
            found.append(((exercise, "*", normalise_message(checks[0]["message"])), checks[0]["message"]))
            continue
        found += [((exercise, _check_name(c), normalise_message(c["message"])), c["message"])
                  for c in checks if c["status"] in FAILED]
    return found


def _one_message(checks: Sequence[Mapping[str, Any]]) -> bool:
    """More than one check, all failed, all with the same message (numbers aside)."""
    return (len(checks) > 1 and all(c["status"] in FAILED for c in checks)
            and len({normalise_message(c["message"]) for c in checks}) == 1)


def _stats(scores: list[float], max_score: float | None) -> dict[str, float | None]:
    if not scores:
        return {"mean": None, "median": None, "min": None, "max": None, "max_score": max_score}
    return {
        "mean": round(statistics.fmean(scores), 4),
        "median": round(statistics.median(scores), 4),
        "min": min(scores),
        "max": max(scores),
        "max_score": max_score,
    }
