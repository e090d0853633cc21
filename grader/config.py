"""assignments.yaml -> a typed, validated configuration.

Points, limits, visibility and forbidden calls are declared in YAML, not
coded; the file is checked against ``schema/assignments.schema.json`` on
load, and any problem becomes one ``ConfigError`` line that names the file,
the key and what was expected.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from grader import deadlines
from grader.files import read_yaml
from grader.sandbox.limits import Limits

COURSE_ROOT = Path(__file__).resolve().parents[1]
KIT_CONFIG = Path(__file__).resolve().parent / "course" / "assignments.yaml"  # what `grader release` writes
# The course repository's own file; in a student kit (installed from a release) the kit's.
DEFAULT_CONFIG = COURSE_ROOT / "assignments.yaml" if (COURSE_ROOT / "assignments.yaml").is_file() else KIT_CONFIG
CHECKS_ROOT = Path(__file__).resolve().parent / "checks"  # the hidden checks, one package per assignment


class ConfigError(Exception):
    """assignments.yaml is missing, not YAML, or does not match its schema."""


@dataclass(frozen=True)
class CheckConfig:
    name: str
    points: float
    visibility: str
    requires_cuda: bool = False
    gate: bool = False  # the exercise's other checks are credited only once this one passed (scoring.credit_gated)
    # An output check compares the exercise's outputs (or their gradients) with the correct values, so any wrong
    # value fails it; every other check is a property check, owed a failure only where its property breaks
    # (tests/blame.py draws that line from this flag).
    output: bool = False


@dataclass(frozen=True)
class ExerciseConfig:
    name: str
    checks: tuple[CheckConfig, ...]
    forbidden_calls: frozenset[str] = frozenset()
    # What the checks shared by several exercises need to know of this one (grader/checks/<pkg>/test_common.py,
    # test_work.py); docs/adding-an-exercise.md says which check reads which.
    purpose: str = ""  # what the function gives, in the lesson's words: the gate's message when it looks like a placeholder
    returns: tuple[str, ...] = ("output",)  # the names of what it returns, in order (a tuple of two: two names)
    gradient_inputs: tuple[int, ...] = ()  # the positional arguments the shared gradient check differentiates
    gradient_where: str = "anywhere"  # ``positive``: the gradients are compared only where the input is > 0

    def check(self, name: str) -> CheckConfig | None:
        return next((c for c in self.checks if c.name == name), None)

    @property
    def output_checks(self) -> frozenset[str]:
        """The names of the checks marked ``output: true``."""
        return frozenset(c.name for c in self.checks if c.output)


@dataclass(frozen=True)
class AssignmentConfig:
    id: str
    title: str
    file: str
    reference: Path | None  # None in a student kit, which has only the recorded ``expected`` values
    stub: Path | None
    checks_package: str
    limits: Limits
    skipped_points: str
    gpu_points_without_cuda: str
    exercises: tuple[ExerciseConfig, ...]
    flagged_calls: frozenset[str]
    expected: Path | None = None  # student kit: the visible checks' expected values (``grader release``)
    hidden_checks: int = 0  # student kit: how many checks (pytest items) run only at grading time
    packages: tuple[str, ...] = ()  # extra pip requirements a submission may import (the defaults' first)
    # ``gradescope_visibility``: (our visibility, Gradescope's) pairs overriding grader.export.gradescope.VISIBILITY
    gradescope_visibility: tuple[tuple[str, str], ...] = ()
    # The late policy (``deadline``, defaults' keys then the assignment's) and the extensions CSV; not part
    # of what a card depends on (batch.fingerprint leaves them out): grade-all applies them to rows each run.
    deadline: deadlines.Policy | None = None
    extensions: Path | None = None

    @property
    def is_kit(self) -> bool:
        """A student kit: visible checks and recorded values only, no reference."""
        return self.reference is None

    def check(self, exercise: str, name: str) -> CheckConfig | None:
        """The configured check ``name`` of ``exercise`` (a test may serve several exercises)."""
        for ex in self.exercises:
            if ex.name == exercise:
                return next((c for c in ex.checks if c.name == name), None)
        return None

    def exercise(self, name: str) -> ExerciseConfig | None:
        return next((ex for ex in self.exercises if ex.name == name), None)

    def exercises_with(self, check: str) -> tuple[ExerciseConfig, ...]:
        """The exercises that configure ``check``, in config order: who a shared check is parametrised by."""
        return tuple(ex for ex in self.exercises if ex.check(check) is not None)

    def without_cuda_points(self) -> float:
        """The total on a machine without CUDA (``gpu_points_without_cuda: drop``): max_points less GPU-only checks."""
        return sum(c.points for ex in self.exercises for c in ex.checks if not c.requires_cuda)

    @property
    def checks_dir(self) -> Path:
        return CHECKS_ROOT / self.checks_package

    def visible(self, exercise: str, name: str) -> bool:
        """Whether students may run this check themselves (``grader check``, the release)."""
        check = self.check(exercise, name)
        return check is not None and check.visibility == "visible"

    def visible_part(self) -> AssignmentConfig:
        """Only the checks students may run: what ``grader check`` grades and a release ships."""
        exercises = (replace(ex, checks=tuple(c for c in ex.checks if c.visibility == "visible"))
                     for ex in self.exercises)
        return replace(self, exercises=tuple(ex for ex in exercises if ex.checks))

    @property
    def max_points(self) -> float:
        return sum(c.points for ex in self.exercises for c in ex.checks)


@dataclass(frozen=True)
class Config:
    path: Path
    assignments: dict[str, AssignmentConfig]

    def assignment(self, assignment_id: str) -> AssignmentConfig:
        if assignment_id not in self.assignments:
            known = ", ".join(sorted(self.assignments))
            raise ConfigError(f"unknown assignment {assignment_id!r} (known: {known})")
        return self.assignments[assignment_id]


def _schema() -> dict[str, Any]:
    text = resources.files("grader.schema").joinpath("assignments.schema.json").read_text()
    return json.loads(text)


def load_config(path: Path = DEFAULT_CONFIG) -> Config:
    """Read and validate ``path``; raises ConfigError with a one-line reason."""
    try:
        raw = read_yaml(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}: not valid YAML{where}: {getattr(exc, 'problem', exc)}") from None
    _deadline_times(raw)
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(_schema()).iter_errors(raw))
    if error is not None:
        key = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        raise ConfigError(f"{path}: {key}: {_message(error)}")
    return _build(path, raw)


def _message(error: jsonschema.exceptions.ValidationError) -> str:
    """The schema's message, except where its regular expression would be all the reader sees."""
    if "packages" in error.absolute_path and error.validator in ("pattern", "not"):
        return (f"{error.instance!r} is not a pip requirement (a package name, optionally with extras, "
                "versions or a marker: `einops`, `einops>=0.7`)")
    return error.message


def _deadline_times(raw: Any) -> None:
    """YAML reads an unquoted ``2026-03-01T23:59:00+01:00`` as a datetime: back to its ISO text, so the
    schema sees a string and ``grader.deadlines`` reads it (without an offset: in ``timezone``)."""
    if not isinstance(raw, dict):
        return
    assignments = raw.get("assignments")
    blocks = [raw.get("defaults"), *(assignments.values() if isinstance(assignments, dict) else ())]
    for block in blocks:
        deadline = block.get("deadline") if isinstance(block, dict) else None
        if isinstance(deadline, dict):
            for key in ("due", "cutoff"):
                if isinstance(deadline.get(key), (datetime.date, datetime.datetime)):
                    deadline[key] = deadline[key].isoformat()


def _deadline(path: Path, aid: str, defaults: dict[str, Any], a: dict[str, Any]) -> deadlines.Policy | None:
    """The assignment's policy, or None when neither it nor the defaults give a due time; a due time
    without an offset is read in ``timezone`` (documented: README, Deadlines and late policy)."""
    merged = {**(defaults.get("deadline") or {}), **(a.get("deadline") or {})}
    if "due" not in merged and "deadline" not in a:
        return None
    try:
        return deadlines.Policy.from_config(merged)
    except deadlines.DeadlineError as exc:
        raise ConfigError(f"{path}: assignments.{aid}.deadline.{exc}") from None


def _build(path: Path, raw: dict[str, Any]) -> Config:
    defaults = raw.get("defaults") or {}
    flagged = frozenset(raw.get("flagged_calls") or ())
    root = path.resolve().parent
    out: dict[str, AssignmentConfig] = {}
    for aid, a in raw["assignments"].items():
        limits = _limits({**(defaults.get("limits") or {}), **(a.get("limits") or {})})
        exercises = []
        for ename, e in a["exercises"].items():
            vis = e.get("visibility", defaults.get("visibility", "visible"))
            checks = tuple(_check(cname, c, vis) for cname, c in e["checks"].items())
            total = sum(c.points for c in checks)
            if "points" in e and abs(e["points"] - total) > 1e-9:
                raise ConfigError(
                    f"{path}: assignments.{aid}.exercises.{ename}.points: {e['points']} does not equal "
                    f"the sum of its checks' points ({total:g})"
                )
            gates = [c for c in checks if c.gate]
            if len(gates) > 1 or any(c.requires_cuda for c in gates):
                raise ConfigError(
                    f"{path}: assignments.{aid}.exercises.{ename}: at most one gate check, and one every machine "
                    f"can run (found {', '.join(c.name for c in gates)})"
                )
            exercises.append(ExerciseConfig(
                ename, checks, frozenset(e.get("forbidden_calls") or ()),
                purpose=e.get("purpose", ""),
                returns=tuple(e.get("returns") or ("output",)),
                gradient_inputs=tuple(e.get("gradient_inputs") or ()),
                gradient_where=e.get("gradient_where", "anywhere"),
            ))
        out[aid] = AssignmentConfig(
            id=aid,
            title=a.get("title", aid),
            file=a["file"],
            reference=root / a["reference"] if a.get("reference") else None,
            stub=root / a["stub"] if a.get("stub") else None,
            checks_package=a["checks"],
            limits=limits,
            skipped_points=a.get("skipped_points", defaults.get("skipped_points", "drop")),
            gpu_points_without_cuda=a.get("gpu_points_without_cuda", defaults.get("gpu_points_without_cuda", "drop")),
            exercises=tuple(exercises),
            flagged_calls=flagged,
            expected=root / a["expected"] if a.get("expected") else None,
            hidden_checks=int(a.get("hidden_checks", 0)),
            packages=_packages(defaults.get("packages"), a.get("packages")),
            gradescope_visibility=tuple({**(defaults.get("gradescope_visibility") or {}),
                                         **(a.get("gradescope_visibility") or {})}.items()),
            deadline=_deadline(path, aid, defaults, a),
            extensions=root / ext if (ext := a.get("extensions", defaults.get("extensions"))) else None,
        )
    return Config(path, out)


def _check(name: str, spec: Any, visibility: str) -> CheckConfig:
    if isinstance(spec, dict):
        return CheckConfig(name, float(spec["points"]), spec.get("visibility", visibility), bool(spec.get("requires_cuda")),
                           bool(spec.get("gate")), bool(spec.get("output")))
    return CheckConfig(name, float(spec), visibility)


def _packages(*lists: list[str] | None) -> tuple[str, ...]:
    """The defaults' packages, then the assignment's, each once: what the kit and the bundles install."""
    return tuple(dict.fromkeys(p for packages in lists for p in (packages or ())))


def _limits(values: dict[str, Any]) -> Limits:
    known = {f.name for f in fields(Limits)}
    values = dict(values)
    if "output_keep_kib" in values:
        values["output_keep_bytes"] = values.pop("output_keep_kib") * 1024
    return Limits(**{k: v for k, v in values.items() if k in known})
