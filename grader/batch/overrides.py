"""Staff overrides: a check's (or an exercise's) points set by hand, with a reason, kept through re-grades.

``grader override STUDENT --check ID --points X --reason TEXT --by NAME`` appends one entry to
``overrides.jsonl`` in the course folder (the ``grade-all --out`` folder); every ``grade-all``,
``merge`` (and so every ``export`` of their cards) applies the file to the finished cards
(``grader.batch.final``: overrides, then the late policy, one stage), before anything else
reads them. This module is the entries and their files, and ``add`` (the ``grader override`` command).

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
(``added``) and each time applying it changes a card (``applied``); ``stopped`` when an override the
card carried no longer applies because its submission or check changed (with ``why``: "override no
longer applies: the submission changed (target)"), ``removed`` when no entry stands for it any more.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import fastjsonschema

from grader.scorecard import Scorecard
from grader.words import count

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
class OverrideEntry:
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
    def from_dict(cls, data: dict[str, Any]) -> OverrideEntry:
        return cls(data["student"], data["exercise"], data.get("check"), float(data["points"]), data["reason"],
                   data["by"], data["at"], data["sha256"], data["fingerprint"])


@dataclass(frozen=True)
class Review:
    """An entry not applied, and why: ``why`` in full (the review list), ``cause`` in a few words (the audit's
    and changes.csv's "override no longer applies: the submission changed")."""

    entry: OverrideEntry
    why: str
    cause: str = ""


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


def parse_line(text: str, where: str) -> OverrideEntry:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise OverridesError(f"{where}: not JSON: {exc}") from None
    try:
        _validate_entry(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise OverridesError(f"{where}: {_say(exc)}") from None
    return OverrideEntry.from_dict(data)


def _say(exc: fastjsonschema.JsonSchemaValueException) -> str:
    field = (exc.name or "data").removeprefix("data").lstrip(".") or "the entry"
    if exc.rule == "pattern" and field in ("reason", "by"):
        return f"{field} must not be empty"
    return exc.message.replace("data.", "").replace("data ", "the entry ")


def load(path: Path) -> list[OverrideEntry]:
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


def append(path: Path, entry: OverrideEntry) -> None:
    """One line more (the file is append-only: history is the audit)."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry.to_dict(), sort_keys=False) + "\n")


def audit(path: Path, event: str, entry: OverrideEntry, old: float | None, new: float | None, **extra: Any) -> None:
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
        by: str) -> tuple[OverrideEntry, float]:
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
            raise OverridesError(f"check {check!r}{where} names {count(len(hits), 'check')} ({ids}): give one id "
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
    entry = parse_line(json.dumps(OverrideEntry(student, exercise, check, float(points), reason.strip(), by.strip(), now(),
                                        card.submission.sha256, fingerprint).to_dict()), "the new override")
    load(course / OVERRIDES)  # never append to a file that is already broken
    old = round(sum(c.score for c in hits), 6)
    append(course / OVERRIDES, entry)
    audit(course / AUDIT, "added", entry, old, entry.points)
    return entry, old
