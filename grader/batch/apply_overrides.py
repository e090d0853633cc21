"""Staff overrides applied to cards: pure on one card (``apply``: the card returned to its graded
scores, then each student's latest entry per target applied, or listed for review when its
submission or check changed), and on a course folder (``apply_to_folder``: cards rewritten, the
audit log and ``overrides_review.csv`` written). The entries and their file: ``grader.batch.overrides``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable

from grader.batch.overrides import AUDIT, OVERRIDES, REVIEW, OverrideEntry, Review, audit, load, review_csv, review_line
from grader.scorecard import CheckResult, Override, Scorecard


# ------------------------------------------------------------------ applying (pure)


def graded(card: Scorecard) -> Scorecard:
    """``card`` with every override taken off: the scores the grader gave."""
    if not any(c.override for c in card.checks):
        return card
    delta = 0.0
    checks = []
    for c in card.checks:
        if c.override is not None:
            delta += c.override.was - c.score
            c = replace(c, score=c.override.was, override=None)
        checks.append(c)
    return replace(card, checks=tuple(checks), score=_round(card.score + delta))


def latest(entries: Iterable[OverrideEntry]) -> list[OverrideEntry]:
    """The last entry for each target, in file order: a newer entry supersedes older ones."""
    last: dict[str, tuple[int, OverrideEntry]] = {}
    for i, e in enumerate(entries):
        last[e.target] = (i, e)
    return [e for _, e in sorted(last.values(), key=lambda pair: pair[0])]


def apply(card: Scorecard, entries: Iterable[OverrideEntry], check_fingerprints: dict[str, str] | None
          ) -> tuple[Scorecard, list[OverrideEntry], list[Review]]:
    """``(new_card, applied, needs_review)`` for one student's ``entries`` on their ``card``.

    The card is first returned to its graded scores, so this gives the same result however often it
    runs. ``check_fingerprints`` None: the check definitions are unknown, every entry needs review.
    """
    base = graded(card)
    checks = list(base.checks)
    applied: list[OverrideEntry] = []
    reviews: list[Review] = []
    for e in latest(entries):
        idx = [i for i, c in enumerate(checks) if c.exercise == e.exercise and (e.check is None or c.id == e.check)]
        what = f"check {e.check!r} of exercise {e.exercise!r}" if e.check else f"exercise {e.exercise!r}"
        if not idx:
            reviews.append(Review(e, f"the card has no {what}"))
            continue
        if e.sha256 != base.submission.sha256:
            reviews.append(Review(e, f"the submission changed since the override (sha256 {e.sha256[:12]}... -> "
                                     f"{base.submission.sha256[:12] or 'none'}...)"))
            continue
        current = None if check_fingerprints is None else check_fingerprints.get(e.fingerprint_key)
        if current != e.fingerprint:
            reviews.append(Review(e, f"the {what} changed since the override (points, visibility or the checks' "
                                     "source)"))
            continue
        top = sum(checks[i].max_score for i in idx)
        if e.points > top + 1e-9:
            reviews.append(Review(e, f"{e.points:g} points is more than the {what}'s {top:g}"))
            continue
        shares = _shares(e.points, [checks[i].max_score for i in idx]) if e.check is None else [e.points]
        for i, points in zip(idx, shares):
            c = checks[i]
            was = c.override.was if c.override is not None else c.score  # an exercise entry after a check one
            checks[i] = replace(c, score=points, override=Override(points, was, e.reason, e.by, e.at,
                                                                   "check" if e.check else "exercise"))
        applied.append(e)
    delta = sum(c.score - b.score for c, b in zip(checks, base.checks))
    return replace(base, checks=tuple(checks), score=_round(base.score + delta)), applied, reviews


def _shares(points: float, tops: list[float]) -> list[float]:
    """``points`` spread over checks in proportion to their max; the last takes the rounding."""
    total = sum(tops)
    if total <= 0:
        return [0.0] * len(tops)
    shares = [_round(points * t / total) for t in tops]
    shares[-1] = _round(min(tops[-1], max(0.0, points - sum(shares[:-1]))))
    return shares


def _round(x: float) -> float:
    return round(x, 6)


def changed(old: Scorecard, new: Scorecard) -> list[tuple[CheckResult, CheckResult]]:
    """The checks whose score or override differ between two versions of a card."""
    return [(a, b) for a, b in zip(old.checks, new.checks) if (a.score, a.override) != (b.score, b.override)]


# ------------------------------------------------------------------ a course folder


def _audit_changes(path: Path, student: str, card: Scorecard, new: Scorecard, applied: list[OverrideEntry]) -> None:
    """One audit line per entry whose application changed the card (old -> new: its target's total before
    and after), and one per check whose override no longer applies (``removed``)."""
    moved: dict[OverrideEntry, list[float]] = {}
    for before, after in changed(card, new):
        entry = next((e for e in reversed(applied) if e.exercise == after.exercise
                      and e.check in (None, after.id)), None)
        if entry is not None:
            total = moved.setdefault(entry, [0.0, 0.0])
            total[0] += before.score
            total[1] += after.score
        elif before.override is not None:
            o = before.override
            gone = OverrideEntry(student, after.exercise, after.id, o.points, o.reason, o.by, o.at, "", "")
            audit(path, "removed", gone, before.score, after.score)
    for entry, (old, now_) in moved.items():
        audit(path, "applied", entry, _round(old), _round(now_))


def apply_to_folder(root: Path, cards: dict[str, Path], check_fingerprints: dict[str, str] | None,
                    say: Callable[[str], None] | None = None) -> tuple[dict[str, Scorecard], list[Review]]:
    """Apply ``root/overrides.jsonl`` to each student's card file (rewritten only when it changes), log
    what changed to the audit, write (or remove) ``overrides_review.csv``. Returns the changed cards."""
    from grader import scorecard
    from grader.files import write_atomically

    entries = load(root / OVERRIDES)
    by_student: dict[str, list[OverrideEntry]] = {}
    for e in entries:
        by_student.setdefault(e.student, []).append(e)
    rewritten: dict[str, Scorecard] = {}
    reviews: list[Review] = []
    for student, path in sorted(cards.items()):
        mine = by_student.get(student, [])
        try:
            card = Scorecard.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not mine and not any(c.override for c in card.checks):
            continue
        new, applied, review = apply(card, mine, check_fingerprints)
        reviews += review
        if new == card:
            continue
        scorecard.write(new, path)
        rewritten[student] = new
        _audit_changes(root / AUDIT, student, card, new, applied)
    review_path = root / REVIEW
    if reviews:
        write_atomically(review_path, review_csv(reviews))
        for r in reviews:
            (say or (lambda _: None))(review_line(r))
    else:
        review_path.unlink(missing_ok=True)
    return rewritten, reviews
