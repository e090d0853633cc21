"""The scorecard: plain, frozen data, serialised to JSON with a schema beside it.

Every path that ends a grading - success, a submission that cannot even be
parsed, the grader's own crash - builds one of these through ``Scorecard``,
so every card validates against ``schema/scorecard.schema.json``.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from collections.abc import Sequence
from typing import Any, Callable

import fastjsonschema

from grader.files import write_atomically
from grader.json_text import dumps_indented

SCHEMA_VERSION = "1.6"  # 1.1: the optional `notebook` section; 1.2: `diagnosis` on checks, `figures`;
# 1.3: the optional `integrity` (``grader ci``: were the repository's protected files as released?);
# 1.4: the optional `problem` (a file-level problem, said once) and `diagnoses` (one per exercise and mistake)
# 1.5: the optional `override` on checks (a staff override: ``grader.batch.overrides``)
# (also 1.5: the optional `late`, the late policy grade-all applied: ``grader.deadlines``)
# 1.6: a figure's number may be "NaN", "inf" or "-inf" (drawn, not refused); `score_std_from` in break_it
STATUSES = ("passed", "failed", "error", "timeout", "skipped")


@dataclass(frozen=True)
class MistakeName:
    """A catalogued mistake as a card names it: its id and the short title a student reads (the
    catalogue's own entry, with its patch, is ``grader.diagnosis.catalogue.Mistake``)."""

    id: str
    title: str


@dataclass(frozen=True)
class Diagnosis:
    """Which known mistake a failed check's outputs match (``grader.diagnosis``).

    ``also``: other mistakes that match the same outputs just as well; the
    message then names them all rather than pick one.
    """

    id: str
    title: str
    also: tuple[MistakeName, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Diagnosis:
        return cls(data["id"], data["title"], tuple(MistakeName(m["id"], m["title"]) for m in data.get("also", ())))


@dataclass(frozen=True)
class ExerciseDiagnosis:
    """A known mistake, said once for its exercise: the sentence a student reads, and the failed
    checks whose outputs match it (their ``diagnosis`` names it too). Reports print the sentence
    above the exercise's failed checks, which then refer to it, instead of under each of them."""

    exercise: str
    id: str
    title: str
    text: str
    checks: tuple[str, ...]
    also: tuple[MistakeName, ...] = ()


@dataclass(frozen=True)
class Override:
    """A score set by course staff (``grader override``, ``grader.batch.overrides``): the check's score is
    ``points``; ``was`` is what the grader gave; ``scope``: "check", or "exercise" (the exercise's total
    was set and spread over its checks)."""

    points: float
    was: float
    reason: str
    by: str
    at: str
    scope: str = "check"


@dataclass(frozen=True)
class CheckResult:
    id: str
    exercise: str
    status: str
    score: float
    max_score: float
    message: str
    visibility: str
    duration_s: float = 0.0
    diagnosis: Diagnosis | None = None  # only on a failed check
    override: Override | None = None  # only on a check whose score staff set by hand


@dataclass(frozen=True)
class SubmissionInfo:
    file: str
    sha256: str


@dataclass(frozen=True)
class Flag:
    """Something course staff should look at that costs no points by itself."""

    kind: str
    line: int
    message: str


@dataclass(frozen=True)
class CellNote:
    """A notebook statement or cell that was not run when grading, and why."""

    cell: int  # numbered from 1 over all cells, markdown included
    line: int  # the line in that cell
    code: str  # its first line, clipped
    reason: str


@dataclass(frozen=True)
class NotebookReport:
    """What of a notebook counted: every statement left out and every cell that failed."""

    cells: int
    code_cells: int
    dropped: tuple[CellNote, ...] = ()
    failed: tuple[CellNote, ...] = ()


INTEGRITY_STATUSES = ("verified", "modified", "unverified")


@dataclass(frozen=True)
class Integrity:
    """Whether the repository that graded this card held the course's protected files as released
    (``grader ci``, ``grader.integrity``): ``verified``, ``modified`` (``files`` says which) or
    ``unverified`` (the repository has no manifest). Only cards graded in a student repository
    carry it; ``grader grade`` and ``grade-all`` never read a repository's checks, so theirs do not."""

    status: str
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scorecard:
    assignment: str
    submission: SubmissionInfo
    score: float
    max_score: float
    checks: tuple[CheckResult, ...]
    environment: dict[str, Any] = field(default_factory=dict)
    flags: tuple[Flag, ...] = ()
    output: str = ""
    grader_error: str | None = None
    notebook: NotebookReport | None = None  # only for .ipynb submissions
    figures: dict[str, Any] | None = None  # the HTML report's small tensors, from public inputs only
    integrity: Integrity | None = None  # only from ``grader ci``
    problem: str | None = None  # why the file itself could not run (syntax, encoding, import...): said once
    diagnoses: tuple[ExerciseDiagnosis, ...] = ()  # the known mistakes, once per exercise
    # The late policy grade-all applied (grader.deadlines.LateResult.to_dict): policy, rule, lateness_hours,
    # raw_score, penalty_percent, penalty_points, final_score. ``score`` stays the checks' sum (the raw score).
    late: dict[str, Any] | None = None
    graded_at: str = ""
    duration_s: float = 0.0
    schema_version: str = SCHEMA_VERSION

    @property
    def final_score(self) -> float:
        """The score after the late policy grade-all applied (``late``), else the checks' sum: what exports report."""
        return float(self.late["final_score"]) if self.late and "final_score" in self.late else self.score

    def to_dict(self) -> dict[str, Any]:
        """The card as JSON-native data (lists, str keys), the optional sections left out when empty.

        Built field by field rather than as ``json.loads(json.dumps(asdict(self)))``: that deep copy
        and JSON round trip took ~3 ms of a 133-check card's ~5 ms write, in grade-all's one process
        that writes every card. The free-form sections (``environment``, ``figures``, ``late``) still
        go through JSON, which gives them the same JSON-native copy the round trip gave.
        ``tests/test_scoring.py`` checks the result against the round trip for a card with every
        optional field set.
        """
        data: dict[str, Any] = {
            "assignment": self.assignment,
            "submission": {"file": self.submission.file, "sha256": self.submission.sha256},
            "score": self.score,
            "max_score": self.max_score,
            "checks": [_check_dict(c) for c in self.checks],
            "environment": _plain(self.environment),
            "flags": [{"kind": f.kind, "line": f.line, "message": f.message} for f in self.flags],
            "output": self.output,
        }
        optional = {
            "grader_error": self.grader_error,
            "notebook": None if self.notebook is None else _notebook_dict(self.notebook),
            "figures": None if self.figures is None else _plain(self.figures),
            "integrity": None if self.integrity is None else _integrity_dict(self.integrity),
            "problem": self.problem,
            "diagnoses": [_exercise_diagnosis_dict(d) for d in self.diagnoses] or None,
            "late": None if self.late is None else _plain(self.late),
        }
        data.update((key, value) for key, value in optional.items() if value is not None)
        data.update(graded_at=self.graded_at, duration_s=self.duration_s, schema_version=self.schema_version)
        return data

    def to_json(self) -> str:
        return dumps_indented(self.to_dict()) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Scorecard:
        validate(data)
        return cls(
            assignment=data["assignment"],
            submission=SubmissionInfo(**data["submission"]),
            score=data["score"],
            max_score=data["max_score"],
            checks=tuple(_check(c) for c in data["checks"]),
            environment=data.get("environment", {}),
            flags=tuple(Flag(**f) for f in data.get("flags", [])),
            output=data.get("output", ""),
            grader_error=data.get("grader_error"),
            notebook=_notebook(data.get("notebook")),
            figures=data.get("figures"),
            integrity=_integrity(data.get("integrity")),
            problem=data.get("problem"),
            diagnoses=tuple(_exercise_diagnosis(d) for d in data.get("diagnoses", ())),
            late=data.get("late"),
            graded_at=data.get("graded_at", ""),
            duration_s=data.get("duration_s", 0.0),
            schema_version=data["schema_version"],
        )


def by_exercise(checks: Sequence[CheckResult]) -> list[tuple[str, list[CheckResult]]]:
    """The checks grouped by exercise, in the card's order (the assignment's)."""
    groups: dict[str, list[CheckResult]] = {}
    for c in checks:
        groups.setdefault(c.exercise, []).append(c)
    return list(groups.items())


# ------------------------------------------------------------------ to JSON-native data (``Scorecard.to_dict``)


def _plain(value: Any) -> Any:
    """A free-form section as JSON gives it back: a deep copy, tuples as lists, keys as strings (a NaN
    stays a NaN here, as it did in the round trip; writing the card refuses it)."""
    return json.loads(json.dumps(value))


def _names(mistakes: Sequence[MistakeName]) -> list[dict[str, str]]:
    return [{"id": m.id, "title": m.title} for m in mistakes]


def _check_dict(check: CheckResult) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": check.id, "exercise": check.exercise, "status": check.status, "score": check.score,
        "max_score": check.max_score, "message": check.message, "visibility": check.visibility,
        "duration_s": check.duration_s,
    }
    if check.diagnosis is not None:
        data["diagnosis"] = {"id": check.diagnosis.id, "title": check.diagnosis.title}
        if check.diagnosis.also:
            data["diagnosis"]["also"] = _names(check.diagnosis.also)
    if check.override is not None:
        o = check.override
        data["override"] = {"points": o.points, "was": o.was, "reason": o.reason, "by": o.by, "at": o.at,
                            "scope": o.scope}
    return data


def _exercise_diagnosis_dict(named: ExerciseDiagnosis) -> dict[str, Any]:
    data: dict[str, Any] = {"exercise": named.exercise, "id": named.id, "title": named.title, "text": named.text,
                            "checks": list(named.checks)}
    if named.also:
        data["also"] = _names(named.also)
    return data


def _cell_notes(notes: Sequence[CellNote]) -> list[dict[str, Any]]:
    return [{"cell": n.cell, "line": n.line, "code": n.code, "reason": n.reason} for n in notes]


def _notebook_dict(report: NotebookReport) -> dict[str, Any]:
    return {"cells": report.cells, "code_cells": report.code_cells, "dropped": _cell_notes(report.dropped),
            "failed": _cell_notes(report.failed)}


def _integrity_dict(integrity: Integrity) -> dict[str, Any]:
    data: dict[str, Any] = {"status": integrity.status}
    if integrity.files:
        data["files"] = list(integrity.files)
    return data


# ------------------------------------------------------------------ from JSON data (``Scorecard.from_dict``)


def _check(data: dict[str, Any]) -> CheckResult:
    diagnosis, override = data.get("diagnosis"), data.get("override")
    return CheckResult(**{**data, "diagnosis": Diagnosis.from_dict(diagnosis) if diagnosis else None,
                          "override": Override(**override) if override else None})


def _exercise_diagnosis(data: dict[str, Any]) -> ExerciseDiagnosis:
    return ExerciseDiagnosis(data["exercise"], data["id"], data["title"], data["text"], tuple(data["checks"]),
                             tuple(MistakeName(m["id"], m["title"]) for m in data.get("also", ())))


def _notebook(data: dict[str, Any] | None) -> NotebookReport | None:
    if data is None:
        return None
    return NotebookReport(data["cells"], data["code_cells"], tuple(CellNote(**n) for n in data["dropped"]),
                          tuple(CellNote(**n) for n in data["failed"]))


def _integrity(data: dict[str, Any] | None) -> Integrity | None:
    return None if data is None else Integrity(data["status"], tuple(data.get("files", ())))


def schema() -> dict[str, Any]:
    return json.loads(resources.files("grader.schema").joinpath("scorecard.schema.json").read_text())


class InvalidScorecard(ValueError):
    """Data that does not match ``schema/scorecard.schema.json``."""


@functools.cache
def _validator() -> Callable[[Any], Any]:
    """The schema compiled to Python once (fastjsonschema, already a dependency of nbformat).

    Every card is validated when written and when read back; jsonschema's
    interpreter took 4-15 ms a card, this takes ~0.4 ms (measured on a
    117-check card).
    """
    return fastjsonschema.compile(schema())


def compile_validator() -> None:
    """Compile the schema now (~60 ms), in a wait that costs nothing (the judge does it while its caller waits
    for the worker server), not when the first card is written."""
    _validator()


def validate(data: dict[str, Any]) -> None:
    """Raise InvalidScorecard, naming the field, when ``data`` is not a valid scorecard."""
    try:
        _validator()(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise InvalidScorecard(exc.message) from None


def to_valid_json(card: Scorecard) -> str:
    """The card's JSON text, checked against the schema: what every path writes.

    The data checked is the dict the text is written from (``to_dict`` is JSON-native, so reading the
    text back would give the same dict): one schema check and no parse.
    """
    data = card.to_dict()
    validate(data)
    return dumps_indented(data) + "\n"


def write(card: Scorecard, path: Path) -> None:
    """Write atomically, so a reader never sees half a card."""
    write_atomically(path, to_valid_json(card))
