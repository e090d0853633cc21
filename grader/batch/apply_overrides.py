"""Staff overrides applied to a card (pure): the card returned to its graded scores, then each student's
latest entry per target applied, or listed for review when its submission or check changed; and the
audit events that application makes. The entries and their files: ``grader.batch.overrides``; the stage
that runs this with the late policy over a course folder: ``grader.batch.final``.

Points are decimal, never binary floats: a card's numbers are exact to 6 decimals (``scoring``), so every
sum and share here is done in ``Decimal`` micro-points and an override of 5 stores 5, not 5.000001.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Iterable, Sequence

from grader.batch.overrides import OverrideEntry, Review, target_key
from grader.scorecard import CheckResult, Override, Scorecard
from grader.words import count

MICRO = Decimal("0.000001")  # a card's precision (grader.scoring rounds every number to 6 decimals)
APPLIED, REMOVED, STOPPED = "applied", "removed", "stopped"


def exact(x: float) -> Decimal:
    """A card's number as the decimal it stands for (its shortest repr, at the card's precision)."""
    return Decimal(repr(float(x))).quantize(MICRO)


def _float(d: Decimal) -> float:
    return float(d.quantize(MICRO))


# ------------------------------------------------------------------ applying (pure)


def graded(card: Scorecard) -> Scorecard:
    """``card`` with every override taken off: the scores the grader gave."""
    if not any(c.override for c in card.checks):
        return card
    delta = Decimal(0)
    checks = []
    for c in card.checks:
        if c.override is not None:
            delta += exact(c.override.was) - exact(c.score)
            c = replace(c, score=c.override.was, override=None)
        checks.append(c)
    return replace(card, checks=tuple(checks), score=_float(exact(card.score) + delta))


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
            reviews.append(Review(e, f"the card has no {what}", f"the card has no {what}"))
            continue
        if e.sha256 != base.submission.sha256:
            reviews.append(Review(e, f"the submission changed since the override (sha256 {e.sha256[:12]}... -> "
                                     f"{base.submission.sha256[:12] or 'none'}...)", "the submission changed"))
            continue
        current = None if check_fingerprints is None else check_fingerprints.get(e.fingerprint_key)
        if current != e.fingerprint:
            reviews.append(Review(e, f"the {what} changed since the override (points, visibility or the checks' "
                                     "source)", f"the {what} changed"))
            continue
        top = sum((exact(checks[i].max_score) for i in idx), Decimal(0))
        if exact(e.points) > top:
            reviews.append(Review(e, f"{count(e.points, 'point')} is more than the {what}'s {top:g}",
                                  f"{count(e.points, 'point')} is more than the {what}'s {top:g}"))
            continue
        targets = [checks[i] for i in idx]
        shares = spread(exact(e.points), [exact(c.score) for c in targets], [exact(c.max_score) for c in targets])
        for i, points in zip(idx, shares):
            c = checks[i]
            was = c.override.was if c.override is not None else c.score  # an exercise entry after a check one
            checks[i] = replace(c, score=_float(points), override=Override(
                _float(points), was, e.reason, e.by, e.at, "check" if e.check else "exercise"))
        applied.append(e)
    delta = sum((exact(c.score) - exact(b.score) for c, b in zip(checks, base.checks)), Decimal(0))
    return replace(base, checks=tuple(checks), score=_float(exact(base.score) + delta)), applied, reviews


def spread(points: Decimal, scores: Sequence[Decimal], tops: Sequence[Decimal]) -> list[Decimal]:
    """Scores summing to exactly ``points`` (within ``sum(tops)``), each within 0..its top, moving the fewest.

    Raising the total (``points`` above ``sum(scores)``) fills the checks' missing points in proportion to
    what each misses: a check the student passed has none missing and keeps its points. Lowering it takes
    points off in proportion to what each check earned (a deduction has to come from earned points).
    Shares are whole micro-points: each check gets the floor of its exact share, and the micro-points left
    go one each to the largest remainders (so none passes its top and the sum is exact)."""
    now = sum(scores, Decimal(0))
    delta = points - now
    if delta == 0:
        return list(scores)
    weights = [t - s for s, t in zip(scores, tops)] if delta > 0 else list(scores)
    whole = int(sum(weights, Decimal(0)) / MICRO)
    units = int(abs(delta) / MICRO)
    if whole <= 0:
        return list(scores)
    parts = [divmod(units * int(w / MICRO), whole) for w in weights]
    left = units - sum(q for q, _ in parts)
    bonus = set(sorted((i for i, (_, r) in enumerate(parts) if r), key=lambda i: -parts[i][1])[:left])
    sign = 1 if delta > 0 else -1
    return [s + sign * (q + (i in bonus)) * MICRO for i, (s, (q, _)) in enumerate(zip(scores, parts))]


def changed(old: Scorecard, new: Scorecard) -> list[tuple[CheckResult, CheckResult]]:
    """The checks whose score or override differ between two versions of a card."""
    return [(a, b) for a, b in zip(old.checks, new.checks) if (a.score, a.override) != (b.score, b.override)]


# ------------------------------------------------------------------ the audit (pure)


@dataclass(frozen=True)
class AuditEvent:
    """One line of ``overrides_audit.jsonl``: ``applied`` (the entry changed the card), ``stopped`` (an
    override the student's previous card carried no longer applies: ``why`` says so), ``removed``
    (an override the card carried that no entry stands for any more)."""

    event: str
    entry: OverrideEntry
    old: float
    new: float
    why: str = ""


def _target(check: CheckResult) -> str:
    o = check.override
    return target_key(check.exercise, None if o is not None and o.scope == "exercise" else check.id)


def audit_events(student: str, card: Scorecard, new: Scorecard, applied: Sequence[OverrideEntry],
                 reviews: Sequence[Review], previous: Scorecard) -> list[AuditEvent]:
    """What to log for one card: an ``applied`` line per entry whose application changed ``card`` (its
    target's total before and after), and for each override ``previous`` carried that ``new`` does not,
    ``stopped`` (its entry is under review: the submission or the check changed) or ``removed``."""
    moved: dict[OverrideEntry, list[Decimal]] = {}
    for before, after in changed(card, new):
        entry = next((e for e in reversed(applied) if e.exercise == after.exercise and e.check in (None, after.id)),
                     None)
        if entry is not None:
            total = moved.setdefault(entry, [Decimal(0), Decimal(0)])
            total[0] += exact(before.score)
            total[1] += exact(after.score)
    events = [AuditEvent(APPLIED, e, _float(old), _float(now)) for e, (old, now) in moved.items()]
    still = {(_target(c), c.override) for c in new.checks if c.override is not None}
    lost: dict[str, list[CheckResult]] = {}
    for c in previous.checks:
        if c.override is not None and (_target(c), c.override) not in still:
            lost.setdefault(_target(c), []).append(c)
    if not lost:
        return events
    review = {r.entry.target: r for r in reviews}
    done = {e.target for e in applied}
    now_scores = {(c.exercise, c.id): exact(c.score) for c in new.checks}
    for target, checks in lost.items():
        if target in done and target not in review:
            continue  # a newer entry replaced it: logged as applied
        o = checks[0].override
        assert o is not None
        old = sum((exact(c.score) for c in checks), Decimal(0))
        now = sum((now_scores.get((c.exercise, c.id), Decimal(0)) for c in checks), Decimal(0))
        if target in review:
            r = review[target]
            events.append(AuditEvent(STOPPED, r.entry, _float(old), _float(now),
                                     f"override no longer applies: {r.cause} ({target})"))
        else:
            exercise, _, check = target.partition("/")
            gone = OverrideEntry(student, exercise, check or None, o.points, o.reason, o.by, o.at, "", "")
            events.append(AuditEvent(REMOVED, gone, _float(old), _float(now)))
    return events
