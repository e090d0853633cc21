"""``summary.json``: what a class did, for the staff who read it before the grades.

Counts of rows by status, score statistics over graded students, the mean
per exercise, and per configured check (``exercise::test name``, all its
parameters together) the share of graded students who passed it: the
checks most students failed are where the teaching needs work.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from grader.gradebook import ROW_STATUSES, Row


def summarise(assignment_id: str, rows: Sequence[Row], cards: Mapping[str, Path]) -> dict[str, Any]:
    """Plain data: counts, score stats, exercise means and per-check pass rates."""
    graded = [r for r in rows if r.status == "graded"]
    scores = [r.score for r in graded if r.score is not None]
    statuses = Counter(r.status for r in rows)
    passed: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for row in graded:
        card = json.loads(cards[row.student].read_text(encoding="utf-8"))
        outcomes: dict[str, list[str]] = {}
        for check in card["checks"]:
            # One entry per configured check: its parameters (float16, bfloat16...) pass together,
            # and a file that could not run at all lists each check once, unparametrised.
            key = f"{check['exercise']}::{check['id'].split('[', 1)[0]}"
            outcomes.setdefault(key, []).append(check["status"])
        for key, results in outcomes.items():
            if all(r == "skipped" for r in results):
                continue
            seen[key] += 1
            passed[key] += all(r in ("passed", "skipped") for r in results)
    exercise_points: dict[str, list[float]] = {}
    for row in graded:
        for name, points in row.exercises:
            exercise_points.setdefault(name, []).append(points)
    return {
        "assignment": assignment_id,
        "counts": {"students": len(rows), **{s: statuses.get(s, 0) for s in ROW_STATUSES}},
        "score": _stats(scores, graded[0].max_score if graded else None),
        "exercises": {name: round(statistics.fmean(p), 4) for name, p in exercise_points.items()},
        "checks": {key: {"passed": passed[key], "graded": seen[key], "pass_rate": round(passed[key] / seen[key], 4)}
                   for key in seen},
    }


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
