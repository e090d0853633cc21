"""Deadlines and the late policy: when work was due, how late it came, what that costs.

Pure: no files are graded here and nothing is read from the clock or the
machine's time zone. ``apply`` turns a policy, a submission time, a student
and the extensions into a ``LateResult``; ``grade-all`` applies it to every
graded row, ``grader ci`` can read the submission time with
``grader.ci.context.received_at``.

The rules (README, "Deadlines and late policy"):

* Times are ISO 8601. One without an offset (a due time in assignments.yaml,
  ``--submitted-at``, a CSV cell) is read in the policy's ``timezone`` (an
  IANA name), never in the machine's; a wall time that does not exist there
  (the hour skipped when DST starts) is refused, an ambiguous one (the hour
  repeated when it ends) is the first of the two. Lateness is real elapsed
  time (computed in UTC): across the spring-forward night a calendar day
  late is 23 hours.
* An extension moves the student's due time and cutoff together, by the same
  rule: ``extra_days`` on the course's wall clock (calendar days: a 23:59 due
  time stays 23:59 across a DST change, and so does a 23:59 cutoff),
  ``extra_hours`` in real hours, ``new_due`` by the wall-clock distance from
  the class's due time to it (the cutoff keeps its distance from the due time).
* Submitted at or before the due time: on time. Within ``grace_minutes``
  after it: on time, no penalty ("in grace"). Later: lateness counts from
  the due time (not from the end of the grace), and a started hour or day
  counts as a whole one: 1 min late with ``per: hour`` is 1 hour late,
  25 h late with ``per: day`` is 2 days late.
* ``penalty_percent = min(units * percent, cap_percent)`` of the raw score;
  ``penalty_points`` and ``final`` are rounded to 6 decimals. The rule's words
  show the uncapped percent before the cap (``24 started hours x 5% = 120%,
  capped at 40% -> -40%``).
* Times in the rule are shown to the second, all of them (``2026-03-02T00:14:01+01:00``),
  and lateness too (``15min1s late``): a second decides grace, lateness and cutoff,
  so no line may read "late" at a time it shows as the due time. Two different
  times that are the same to the second are shown to the microsecond.
* After ``cutoff`` (strictly): the final score is 0 and the rule says why.
  A student's extension moves their cutoff by as much as their due time.
* No known submission time: graded as on time, and the rule says so.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

PER_SECONDS = {"hour": 3600, "day": 86400}


class DeadlineError(ValueError):
    """A bad time, zone, policy value or extensions row (one line)."""


def zone(name: str) -> ZoneInfo:
    """The IANA zone ``name`` (``Europe/Paris``); DeadlineError for an unknown one."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise DeadlineError(f"unknown time zone {name!r} (an IANA name such as Europe/Paris or UTC)") from None


def parse_time(text: str, tz: str | ZoneInfo) -> datetime:
    """An aware datetime from ISO 8601 ``text``; a time without an offset is read in ``tz``."""
    value = str(text).strip()
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise DeadlineError(f"{value!r} is not an ISO 8601 time (e.g. 2026-03-01T23:59:00+01:00)") from None
    if moment.tzinfo is not None:
        return moment
    where = zone(tz) if isinstance(tz, str) else tz
    local = moment.replace(tzinfo=where)
    back = local.astimezone(timezone.utc).astimezone(where)
    if back.replace(tzinfo=None) != moment:
        raise DeadlineError(f"{value!r} does not exist in {where.key} (the clocks skip it for daylight saving); "
                            "give the time with its offset")
    return local


@dataclass(frozen=True)
class Penalty:
    per: str  # "hour" | "day"
    percent: float  # of the raw score, per started unit
    cap_percent: float = 100.0


@dataclass(frozen=True)
class Policy:
    due: datetime  # aware
    timezone: str  # IANA: how times without an offset are read, and how the rule shows times
    grace_minutes: float = 0.0
    penalty: Penalty | None = None  # None: late work is only flagged, never penalised
    cutoff: datetime | None = None  # aware; after it the submission scores 0

    def __post_init__(self) -> None:
        if self.due.tzinfo is None or (self.cutoff is not None and self.cutoff.tzinfo is None):
            raise DeadlineError("due and cutoff must be aware datetimes (use parse_time)")
        if self.cutoff is not None and self.cutoff.astimezone(timezone.utc) < self.due.astimezone(timezone.utc):
            raise DeadlineError(f"cutoff: {self.cutoff.isoformat()} is before the due time {self.due.isoformat()}")
        if self.grace_minutes < 0:
            raise DeadlineError(f"grace_minutes must be 0 or more, not {self.grace_minutes:g}")
        if self.penalty is not None and self.penalty.per not in PER_SECONDS:
            raise DeadlineError(f"penalty.per must be hour or day, not {self.penalty.per!r}")

    @classmethod
    def from_config(cls, raw: Mapping[str, Any]) -> Policy:
        """From assignments.yaml's (schema-checked) ``deadline`` mapping; DeadlineError names the key."""
        tz = raw.get("timezone")
        if not tz:
            raise DeadlineError("timezone: required (the course's IANA zone, e.g. Europe/Paris)")
        try:
            zone(tz)
        except DeadlineError as exc:
            raise DeadlineError(f"timezone: {exc}") from None
        if "due" not in raw:
            raise DeadlineError("due: required (an ISO 8601 time, e.g. 2026-03-01T23:59:00+01:00)")
        due = _keyed("due", raw["due"], tz)
        cutoff = _keyed("cutoff", raw["cutoff"], tz) if raw.get("cutoff") is not None else None
        p = raw.get("penalty")
        penalty = Penalty(p["per"], float(p["percent"]), float(p.get("cap_percent", 100))) if p else None
        return cls(due, tz, float(raw.get("grace_minutes", 0)), penalty, cutoff)

    def text(self) -> str:
        """The policy in one line, as the card and the reports show it."""
        parts = [f"due {_show(self.due, self.timezone)}"]
        if self.grace_minutes:
            parts.append(f"{self.grace_minutes:g} min grace")
        if self.penalty is not None:
            parts.append(f"-{self.penalty.percent:g}% per started {self.penalty.per} late, "
                         f"at most {self.penalty.cap_percent:g}%")
        if self.cutoff is not None:
            parts.append(f"0 after {_show(self.cutoff, self.timezone)}")
        return "; ".join(parts)


def _keyed(key: str, value: Any, tz: str) -> datetime:
    if isinstance(value, datetime):  # YAML reads an unquoted timestamp itself
        value = value.isoformat()
    try:
        return parse_time(str(value), tz)
    except DeadlineError as exc:
        raise DeadlineError(f"{key}: {exc}") from None


def _show(moment: datetime, tz: str, spec: str = "seconds") -> str:
    """A time as every rule shows it: in the course's zone, to the second (one precision everywhere)."""
    return moment.astimezone(zone(tz)).isoformat(timespec=spec)


def _shown_apart(a: datetime, b: datetime, tz: str) -> tuple[str, str]:
    """Two times that differ never read the same: to the second, or to the microsecond when they tie there."""
    spec = "seconds" if a == b or _show(a, tz) != _show(b, tz) else "microseconds"
    return _show(a, tz, spec), _show(b, tz, spec)


def on_wall_clock(moment: datetime, shift: timedelta, tz: str) -> datetime:
    """``moment`` moved by ``shift`` on ``tz``'s wall clock: a day later at the same time of day, whatever
    DST does in between. A wall time the clocks skip moves on by the gap; a repeated one is the first."""
    where = zone(tz)
    wall = moment.astimezone(where).replace(tzinfo=None) + shift
    return wall.replace(tzinfo=where, fold=0)


@dataclass(frozen=True)
class Extension:
    student: str
    new_due: datetime | None = None  # exactly one of new_due, extra_days and extra_hours
    extra_days: float | None = None  # calendar days on the course's wall clock
    reason: str = ""
    extra_hours: float | None = None  # real hours

    def move(self, moment: datetime, due: datetime, tz: str) -> datetime:
        """``moment`` (the class's due time or cutoff) moved as this extension moves the due time ``due``:
        ``extra_days`` on the course's wall clock in ``tz`` (23:59 stays 23:59 across a DST change),
        ``extra_hours`` in real time, ``new_due`` by its wall-clock distance from ``due``. The due time and
        the cutoff move by the same rule, so a cutoff a week after a 23:59 due time stays so."""
        if self.extra_hours is not None:
            return moment.astimezone(timezone.utc) + timedelta(hours=self.extra_hours)  # UTC: real hours
        if self.new_due is not None:
            if moment == due:
                return self.new_due
            where = zone(tz)
            shift = self.new_due.astimezone(where).replace(tzinfo=None) - due.astimezone(where).replace(tzinfo=None)
            return on_wall_clock(moment, shift, tz)
        return on_wall_clock(moment, timedelta(days=self.extra_days or 0), tz)

    def due(self, due: datetime, tz: str = "UTC") -> datetime:
        """The student's due time, from the class's ``due`` (``move``)."""
        return self.move(due, due, tz)


@dataclass(frozen=True)
class LateResult:
    status: str  # "on_time" | "grace" | "late" | "cutoff" | "unknown"
    lateness: timedelta | None  # past the (student's) due time; None when the submission time is unknown
    penalty_percent: float
    penalty_points: float
    final: float
    rule_text: str  # the policy and what it did, one line

    @property
    def lateness_hours(self) -> float | None:
        return None if self.lateness is None else round(max(self.lateness, timedelta()).total_seconds() / 3600, 2)

    def to_dict(self, raw_score: float, policy: Policy) -> dict[str, Any]:
        """The scorecard's optional ``late`` section."""
        return {"status": self.status, "policy": policy.text(), "rule": self.rule_text,
                "lateness_hours": self.lateness_hours, "raw_score": raw_score,
                "penalty_percent": self.penalty_percent, "penalty_points": self.penalty_points,
                "final_score": self.final}


def apply(policy: Policy, submitted_at: datetime | str | None, student: str,
          extensions: Mapping[str, Extension], raw_score: float = 0.0) -> LateResult:
    """What the late policy does to ``raw_score`` for ``student`` who submitted at ``submitted_at``
    (aware datetime, ISO text read in the policy's zone, or None/'' when unknown)."""
    if submitted_at is None or submitted_at == "":
        return LateResult("unknown", None, 0.0, 0.0, raw_score,
                          f"submission time unknown: graded as on time ({policy.text()})")
    when = parse_time(submitted_at, policy.timezone) if isinstance(submitted_at, str) else submitted_at
    if when.tzinfo is None:
        raise DeadlineError("submitted_at must be an aware datetime or ISO text")
    # Everything in UTC: Python subtracts and compares two times of the same zone by their wall clocks,
    # which is an hour off across a DST change.
    when = when.astimezone(timezone.utc)
    ext = extensions.get(student)
    tz = policy.timezone
    due = (ext.move(policy.due, policy.due, tz) if ext else policy.due).astimezone(timezone.utc)
    cutoff = None
    if policy.cutoff is not None:  # moved by the same rule as the due time
        cutoff = (ext.move(policy.cutoff, policy.due, tz) if ext else policy.cutoff).astimezone(timezone.utc)
    extended = f" (extension to {_show(due, tz)}: {ext.reason or 'no reason given'})" if ext else ""
    lateness = when - due
    seen = f"submitted {_show(when, tz)}"
    if cutoff is not None and when > cutoff:
        shown, limit = _shown_apart(when, cutoff, tz)
        return LateResult("cutoff", lateness, 100.0, round(raw_score, 6), 0.0,
                          f"submitted {shown}, after the cutoff {limit}: scored 0{extended}")
    if lateness <= timedelta():
        return LateResult("on_time", lateness, 0.0, 0.0, raw_score, f"{seen}: on time{extended}")
    if lateness <= timedelta(minutes=policy.grace_minutes):
        return LateResult("grace", lateness, 0.0, 0.0, raw_score,
                          f"{seen}: {_duration(lateness)} late, within the {policy.grace_minutes:g} min grace{extended}")
    if policy.penalty is None:
        return LateResult("late", lateness, 0.0, 0.0, raw_score,
                          f"{seen}: {_duration(lateness)} late, no penalty set{extended}")
    p = policy.penalty
    units = math.ceil(lateness.total_seconds() / PER_SECONDS[p.per])  # a started hour/day counts
    percent = min(units * p.percent, p.cap_percent)
    points = round(raw_score * percent / 100, 6)
    uncapped = units * p.percent
    cost = f"{uncapped:g}%, capped at {p.cap_percent:g}% -> -{percent:g}%" if uncapped > p.cap_percent \
        else f"-{percent:g}%"
    return LateResult("late", lateness, percent, points, round(raw_score - points, 6),
                      f"{seen}: {_duration(lateness)} late = {units} started {p.per}{'s' if units > 1 else ''} "
                      f"x {p.percent:g}% = {cost}{extended}")


def rescore(section: Mapping[str, Any], raw_score: float) -> dict[str, Any]:
    """A card's ``late`` section again for a new raw score (a staff override), with the same outcome:
    the penalty's percent comes from the time alone; after the cutoff the final score stays 0."""
    percent = float(section["penalty_percent"])
    if section["status"] == "cutoff":
        points, final = round(raw_score, 6), 0.0
    else:
        points = round(raw_score * percent / 100, 6)
        final = round(raw_score - points, 6)
    return {**section, "raw_score": raw_score, "penalty_points": points, "final_score": final}


def _duration(delta: timedelta) -> str:
    """Lateness to the second (a started second counts), its zero parts left out: ``15min 1s``, ``3h 20min``."""
    seconds = -(-(delta // timedelta(microseconds=1)) // 1_000_000)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    mins, secs = divmod(rest, 60)
    parts = ((days, "d"), (hours, "h"), (mins, "min"), (secs, "s"))
    return " ".join(f"{n}{u}" for n, u in parts if n) or "0s"


# ------------------------------------------------------------------ files


# The extensions CSV's columns, read here and named by `grade-all --extensions`'s help and the README (a test
# holds both to this tuple): who, then exactly one of the three ways to move their due time, then why.
EXTENSION_MOVES = ("new_due", "extra_days", "extra_hours")
EXTENSION_COLUMNS = ("student", *EXTENSION_MOVES, "reason")


def load_extensions(path: Path, tz: str) -> dict[str, Extension]:
    """The extensions CSV (``EXTENSION_COLUMNS``: ``student,new_due,extra_days,extra_hours,reason``; one of new_due, extra_days
    (calendar days in the course's zone) and extra_hours (real hours) per row; extra_hours is optional).

    DeadlineError names the file and line of the first bad row.
    """
    rows = _csv(path, ("student",))
    if not set(EXTENSION_MOVES) & set(rows[0][1]):
        raise DeadlineError(f"{path}: needs a new_due or an extra_days column (or extra_hours)")
    out: dict[str, Extension] = {}
    for line, row in rows[1:]:
        where = f"{path}:{line}"
        student = (row.get("student") or "").strip()
        cells = {k: (row.get(k) or "").strip() for k in EXTENSION_MOVES}
        reason = (row.get("reason") or "").strip()
        if not student:
            raise DeadlineError(f"{where}: no student")
        if student in out:
            raise DeadlineError(f"{where}: {student} has a second extension (one row per student)")
        given = [k for k, v in cells.items() if v]
        if len(given) != 1:
            raise DeadlineError(f"{where}: give exactly one of new_due and extra_days (or extra_hours) for {student}")
        if given == ["new_due"]:
            try:
                out[student] = Extension(student, new_due=parse_time(cells["new_due"], tz), reason=reason)
            except DeadlineError as exc:
                raise DeadlineError(f"{where}: new_due: {exc}") from None
            continue
        key = given[0]
        try:
            amount = float(cells[key])
        except ValueError:
            amount = math.nan
        if not math.isfinite(amount) or amount <= 0:
            raise DeadlineError(f"{where}: {key} must be a number above 0, not {cells[key]!r}")
        out[student] = Extension(student, reason=reason, **{key: amount})
    return out


def load_submission_times(path: Path, tz: str) -> dict[str, datetime]:
    """``--submitted-at-csv``: columns ``student`` and ``submitted_at`` (or ``time``)."""
    rows = _csv(path, ("student",))
    column = "submitted_at" if "submitted_at" in rows[0][1] else "time"
    if column not in rows[0][1]:
        raise DeadlineError(f"{path}: needs a submitted_at (or time) column")
    out: dict[str, datetime] = {}
    for line, row in rows[1:]:
        student, text = (row.get("student") or "").strip(), (row.get(column) or "").strip()
        if not student or not text:
            raise DeadlineError(f"{path}:{line}: needs a student and a {column}")
        if student in out:
            raise DeadlineError(f"{path}:{line}: {student} has a second time")
        try:
            out[student] = parse_time(text, tz)
        except DeadlineError as exc:
            raise DeadlineError(f"{path}:{line}: {exc}") from None
    return out


def _csv(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict[str, str]]]:
    """``[(1, header as a dict of itself), (line, row)...]``; DeadlineError when unreadable."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise DeadlineError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise DeadlineError(f"{path}: not UTF-8 text") from None
    reader = csv.DictReader(text.splitlines())
    names = [n.strip() for n in reader.fieldnames or ()]
    reader.fieldnames = names
    missing = [n for n in required if n not in names]
    if missing:
        raise DeadlineError(f"{path}: no {', '.join(missing)} column (found: {', '.join(names) or 'nothing'})")
    rows: list[tuple[int, dict[str, str]]] = [(1, {n: n for n in names})]
    for row in reader:
        if None in row:
            raise DeadlineError(f"{path}:{reader.line_num}: more cells than columns")
        rows.append((reader.line_num, row))
    return rows
