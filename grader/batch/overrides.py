"""Staff overrides: a check's (or an exercise's) points set by hand, with a reason, kept through re-grades.

``grader override STUDENT --check ID --points X --reason TEXT --by NAME`` appends one entry to
``overrides.jsonl`` in the course folder (the ``grade-all --out`` folder); every ``grade-all``,
``merge`` (and so every ``export`` of their cards) applies the file to the finished cards
(``grader.batch.outputs.write_outputs``), before anything else reads them.

An entry is pinned to what it was decided about:

* ``sha256``: the submission's, from the student's card when the override was added;
* ``fingerprint``: the check's (``check_fingerprints``): a hash of its config entry (points,
  visibility, requires_cuda, gate), its assignment and exercise, and the sources of the assignment's
  checks package (``grader/checks/<package>``). Not the assignment fingerprint: that also holds the
  grader's and torch's versions, and upgrading either must not send every override back for review.
  Any edit to the checks package does (conservative: the package's files share fixtures and cases).

When either no longer matches, the entry is not applied: it is listed for review (printed by
``grade-all``, written to ``overrides_review.csv``), and the card keeps its graded score. To keep an
override after a review, add it again (a new entry for the same target supersedes the older ones).

An override sets a check's score to ``points`` (0..max_score). An exercise-level override
(``--exercise``) sets the exercise's total to ``points`` (0..the exercise's max), spread over its
checks in proportion to their max_score (so a check's share never exceeds its max). The overridden
checks carry ``override: {points, was, reason, by, at, scope}`` (``was``: the graded score), the card's
total moves by the difference, and a card read back is first returned to its graded scores, so
applying the file again (every run) gives the same card.

``overrides_audit.jsonl`` records who, when, what and old -> new each time an entry is added
(``added``) and each time applying it changes a card (``applied``; also ``removed`` when a card's
override no longer applies).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

import fastjsonschema

from grader.scorecard import CheckResult, Override, Scorecard

OVERRIDES = "overrides.jsonl"
AUDIT = "overrides_audit.jsonl"
REVIEW = "overrides_review.csv"
REVIEW_COLUMNS = ("student", "target", "points", "by", "at", "reason", "why")

ENTRY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["student", "exercise", "points", "reason", "by", "at", "sha256", "fingerprint"],
    "additionalProperties": False,
    "properties": {
        "student": {"type": "string", "minLength": 1},
        "exercise": {"type": "string", "minLength": 1},
        "check": {"type": "string", "minLength": 1},
        "points": {"type": "number", "minimum": 0},
        "reason": {"type": "string", "pattern": "\\S"},
        "by": {"type": "string", "pattern": "\\S"},
        "at": {"type": "string", "minLength": 1},
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "fingerprint": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    },
}
_validate_entry = fastjsonschema.compile(ENTRY_SCHEMA)


class OverridesError(ValueError):
    """An overrides file or entry that cannot be used (one line, naming the file and line)."""


@dataclass(frozen=True)
class Entry:
    student: str
    exercise: str
    check: str | None
    points: float
    reason: str
    by: str
    at: str
    sha256: str
    fingerprint: str

    @property
    def target(self) -> str:
        """``exercise/check`` or ``exercise``: what it overrides, as the card names it."""
        return target_key(self.exercise, self.check)

    @property
    def fingerprint_key(self) -> str:
        return fingerprint_key(self.exercise, self.check)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"student": self.student, "exercise": self.exercise}
        if self.check is not None:
            data["check"] = self.check
        data.update(points=self.points, reason=self.reason, by=self.by, at=self.at, sha256=self.sha256,
                    fingerprint=self.fingerprint)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Entry:
        return cls(data["student"], data["exercise"], data.get("check"), float(data["points"]), data["reason"],
                   data["by"], data["at"], data["sha256"], data["fingerprint"])


@dataclass(frozen=True)
class Review:
    """An entry not applied, and why."""

    entry: Entry
    why: str


def target_key(exercise: str, check: str | None) -> str:
    return f"{exercise}/{check}" if check is not None else exercise


def fingerprint_key(exercise: str, check: str | None) -> str:
    """The key of ``check_fingerprints``: a card's check id without its parameters (``test_x[a-b]`` ->
    ``test_x``) is the check's name in assignments.yaml, whose points its parametrisations share."""
    return target_key(exercise, None if check is None else check.split("[", 1)[0])


# ------------------------------------------------------------------ fingerprints


def check_fingerprints(assignment: Any) -> dict[str, str]:
    """``{"exercise/check": fp, "exercise": fp}`` for ``assignment`` (an ``AssignmentConfig``)."""
    package = hashlib.sha256()
    root = assignment.checks_dir
    if root.is_dir():
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".ini") and p.is_file()):
            package.update(f"{path.relative_to(root)}\0".encode() + path.read_bytes())
    source = package.hexdigest()

    def digest(value: Any) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()

    out: dict[str, str] = {}
    for ex in assignment.exercises:
        configs = []
        for c in ex.checks:
            config = {"name": c.name, "points": c.points, "visibility": c.visibility,
                      "requires_cuda": c.requires_cuda, "gate": c.gate}
            configs.append(config)
            out[target_key(ex.name, c.name)] = digest([assignment.id, ex.name, config, source])
        out[ex.name] = digest([assignment.id, ex.name, configs, source])
    return out


# ------------------------------------------------------------------ the file


def parse_line(text: str, where: str) -> Entry:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise OverridesError(f"{where}: not JSON: {exc}") from None
    try:
        _validate_entry(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise OverridesError(f"{where}: {_say(exc)}") from None
    return Entry.from_dict(data)


def _say(exc: fastjsonschema.JsonSchemaValueException) -> str:
    field = (exc.name or "data").removeprefix("data").lstrip(".") or "the entry"
    if exc.rule == "pattern" and field in ("reason", "by"):
        return f"{field} must not be empty"
    return exc.message.replace("data.", "").replace("data ", "the entry ")


def load(path: Path) -> list[Entry]:
    """The entries of ``path`` in order ([] when there is no file); raises OverridesError naming the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise OverridesError(f"{path}: cannot read: {exc.strerror or exc}") from None
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            entries.append(parse_line(line, f"{path}:{number}"))
    return entries


def append(path: Path, entry: Entry) -> None:
    """One line more (the file is append-only: history is the audit)."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry.to_dict(), sort_keys=False) + "\n")


def audit(path: Path, event: str, entry: Entry, old: float | None, new: float | None, **extra: Any) -> None:
    record = {"event": event, "logged_at": now(), "student": entry.student, "target": entry.target,
              "by": entry.by, "at": entry.at, "reason": entry.reason, "old": old, "new": new, **extra}
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


def now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def review_csv(reviews: Iterable[Review]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(REVIEW_COLUMNS)
    for r in reviews:
        e = r.entry
        writer.writerow([e.student, e.target, f"{e.points:g}", e.by, e.at, e.reason, r.why])
    return buf.getvalue()


def review_line(r: Review) -> str:
    return f"override not applied, review it: {r.entry.student} {r.entry.target} -> {r.entry.points:g} ({r.why})"


# ------------------------------------------------------------------ adding one (``grader override``)


def add(course: Path, student: str, exercise: str | None, check: str | None, points: float, reason: str,
        by: str) -> tuple[Entry, float]:
    """Check an override against the student's card and the folder's check fingerprints, append it to
    ``overrides.jsonl`` and log it to the audit. Returns ``(entry, old score of its target)``.
    Raises OverridesError (one line) for anything that would make a bad entry."""
    if check is None and exercise is None:
        raise OverridesError("give --check ID or --exercise NAME")
    if not reason.strip():
        raise OverridesError("--reason must not be empty: say why, the student reads it")
    if not by.strip():
        raise OverridesError("--by must not be empty: who decided it")
    card_path = course / "cards" / f"{student}.json"
    try:
        card = Scorecard.from_dict(json.loads(card_path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise OverridesError(f"no card for {student!r} in {course / 'cards'} "
                             f"(grade-all --out {course} first)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OverridesError(f"{card_path}: not a readable scorecard: {exc}") from None
    try:
        fingerprints = json.loads((course / "batch.json").read_text(encoding="utf-8"))["check_fingerprints"]
        if not isinstance(fingerprints, dict):
            raise TypeError
    except (OSError, ValueError, KeyError, TypeError):
        raise OverridesError(f"{course / 'batch.json'} has no check fingerprints: run grade-all --out {course} "
                             "to the end first") from None
    if check is not None:
        hits = [c for c in card.checks if c.id == check and exercise in (None, c.exercise)]
        if not hits:  # the name in assignments.yaml, when it has one parametrisation here
            hits = [c for c in card.checks if c.id.split("[", 1)[0] == check and exercise in (None, c.exercise)]
        where = f" in exercise {exercise!r}" if exercise else ""
        if not hits:
            raise OverridesError(f"unknown check {check!r}{where} on {student}'s card")
        if len(hits) > 1:
            ids = ", ".join(f"{c.exercise}/{c.id}" for c in hits[:4]) + (", ..." if len(hits) > 4 else "")
            raise OverridesError(f"check {check!r}{where} names {len(hits)} checks ({ids}): give one id "
                                 "(and --exercise)")
        exercise, check = hits[0].exercise, hits[0].id
    else:
        hits = [c for c in card.checks if c.exercise == exercise]
        if not hits:
            known = ", ".join(dict.fromkeys(c.exercise for c in card.checks))
            raise OverridesError(f"unknown exercise {exercise!r} (the card's: {known})")
    assert exercise is not None
    top = sum(c.max_score for c in hits)
    what = f"check {check}" if check else f"exercise {exercise}"
    if not 0 <= points <= top + 1e-9:
        raise OverridesError(f"--points {points:g} is outside 0..{top:g}, the {what}'s maximum")
    fingerprint = fingerprints.get(fingerprint_key(exercise, check))
    if not fingerprint:
        raise OverridesError(f"{course / 'batch.json'} has no fingerprint for {what}: grade-all again first")
    entry = parse_line(json.dumps(Entry(student, exercise, check, float(points), reason.strip(), by.strip(), now(),
                                        card.submission.sha256, fingerprint).to_dict()), "the new override")
    load(course / OVERRIDES)  # never append to a file that is already broken
    old = _round(sum(c.score for c in hits))
    append(course / OVERRIDES, entry)
    audit(course / AUDIT, "added", entry, old, entry.points)
    return entry, old


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


def latest(entries: Iterable[Entry]) -> list[Entry]:
    """The last entry for each target, in file order: a newer entry supersedes older ones."""
    last: dict[str, tuple[int, Entry]] = {}
    for i, e in enumerate(entries):
        last[e.target] = (i, e)
    return [e for _, e in sorted(last.values(), key=lambda pair: pair[0])]


def apply(card: Scorecard, entries: Iterable[Entry], check_fingerprints: dict[str, str] | None
          ) -> tuple[Scorecard, list[Entry], list[Review]]:
    """``(new_card, applied, needs_review)`` for one student's ``entries`` on their ``card``.

    The card is first returned to its graded scores, so this gives the same result however often it
    runs. ``check_fingerprints`` None: the check definitions are unknown, every entry needs review.
    """
    base = graded(card)
    checks = list(base.checks)
    applied: list[Entry] = []
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


def _audit_changes(path: Path, student: str, card: Scorecard, new: Scorecard, applied: list[Entry]) -> None:
    """One audit line per entry whose application changed the card (old -> new: its target's total before
    and after), and one per check whose override no longer applies (``removed``)."""
    moved: dict[Entry, list[float]] = {}
    for before, after in changed(card, new):
        entry = next((e for e in reversed(applied) if e.exercise == after.exercise
                      and e.check in (None, after.id)), None)
        if entry is not None:
            total = moved.setdefault(entry, [0.0, 0.0])
            total[0] += before.score
            total[1] += after.score
        elif before.override is not None:
            o = before.override
            gone = Entry(student, after.exercise, after.id, o.points, o.reason, o.by, o.at, "", "")
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
    by_student: dict[str, list[Entry]] = {}
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
