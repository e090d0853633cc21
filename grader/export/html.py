"""One self-contained HTML feedback page per scorecard: scores, what failed, and the student's own attention.

The page is built by a Jinja2 template with autoescaping on (messages quote
student output, which may hold anything); pictures are inline SVG laid out
by ``charts``; CSS is inline; there is no script, font or image fetched from
anywhere, so the page works from a file, an LMS upload or an air-gapped lab.

``view="student"`` (the default) passes the card through
``views.student_view`` first, so a hidden check shows only that it exists
and how it went; ``view="instructor"`` shows everything, printed output and
flags included. The view is written into the page (``<meta
name="grader-view">``) so a batch can tell which view an old page has.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from grader import calls
from grader.export import views
from grader.export import charts, text
from grader.export.gradebook_csv import format_number
from grader.files import write_atomically
from grader.scorecard import CheckResult, ExerciseDiagnosis, Scorecard, by_exercise
from grader.words import code_spans, count, plural

VIEWS = views.VIEWS
REPORT_FORMATS = ("html", "pytest-json")  # what --report writes: this page, or grader.export.pytest_json
TEMPLATES = Path(__file__).resolve().parent / "templates"
PROBLEM_STATUSES = ("failed", "error", "timeout")
MATCH = 5e-4  # weights within this of the reference count as the same (the card keeps 4 decimals)
_VIEW_META = re.compile(r'<meta name="grader-view" content="([a-z]+)">')


def render(card: Scorecard, *, view: str = "student") -> str:
    """The page for ``card`` as seen by ``view`` ("student" or "instructor")."""
    shown = views.as_seen_by(card, view)
    # From the whole card: the student view hides a hidden check's message, not that the file stopped it.
    stopped = text.stopped_by_problem(card)
    return _environment().get_template("report.html.j2").render(page=_page(shown, view, stopped))


def write(card: Scorecard, path: Path, *, view: str = "student") -> None:
    """Write the page atomically, so a reader (or a web server) never sees half of one."""
    write_atomically(path, render(card, view=view))


def page_view(path: Path) -> str | None:
    """The view an existing page was rendered with, or None (no page, or not one of ours)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return page_view_text(fh.read(4096))  # the meta tag is in the head
    except OSError:
        return None


def page_view_text(text: str) -> str | None:
    """The view named in a page's ``<meta name="grader-view">``, or None."""
    found = _VIEW_META.search(text)
    return found.group(1) if found else None


@functools.cache
def _environment() -> jinja2.Environment:
    """Built once per process: loading and compiling the template is most of a page's cost."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["points"] = format_number
    env.filters["prose"] = prose
    env.filters["counted"] = count  # `n | counted("cell")`: "1 cell", "2 cells" (grader.words)
    env.filters["noun_for"] = plural  # `n | noun_for("point")`, `n | noun_for("was", "were")`: the word after n
    return env


def prose(text: object) -> markupsafe.Markup:
    """A message as the page shows it: escaped first (messages quote student output), then each
    `span` in backticks (how checks name code, as in Markdown) shown as code."""
    return markupsafe.Markup(code_spans(str(markupsafe.escape(str(text)))))


# ------------------------------------------------------------------ the page's data


@dataclass(frozen=True)
class ExerciseRow:
    name: str
    score: float
    max_score: float
    passed: int
    checks: int  # the checks that ran: a GPU-only check this machine skipped is counted in ``not_run``
    not_run: int = 0

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.max_score if self.max_score else 0.0


@dataclass(frozen=True)
class Problem:
    check: CheckResult
    hidden: bool


def _page(card: Scorecard, view: str, stopped: tuple[str, int] | None = None) -> dict[str, Any]:
    """``stopped``: (message, checks) when a file-level problem kept every check from running
    (``text.stopped_by_problem``): the page says it once instead of a row per check."""
    return {
        "view": view,
        "card": card,
        "percent": 100.0 * card.final_score / card.max_score if card.max_score else 0.0,  # after a late penalty
        "exercises": _exercises(card),
        "problems": [Problem(c, views.is_hidden(c)) for c in card.checks if c.status in PROBLEM_STATUSES],
        "groups": [] if stopped else _problem_groups(card),
        "stopped": {"message": stopped[0], "checks": stopped[1]} if stopped else None,
        "skipped": [c for c in card.checks if c.status == "skipped"],
        "skipped_reason": str(card.environment.get("not_checked") or "not run when grading"),
        "checks": [Problem(c, views.is_hidden(c)) for c in card.checks],
        # A hint's suspects: the failing exercises that call no other failing one (the rest failed through it).
        "figures": (_figures(card.figures, calls.suspects(failed_exercises(card), calls.of_course(card.assignment)))
                    if card.figures is not None else None),
        "legend": charts.legend_stops(),
        "future_fill": charts.FUTURE_FILL,
        "nonfinite_fill": charts.NONFINITE_FILL,
    }


@dataclass(frozen=True)
class ProblemGroup:
    """One exercise's failed checks, with what is said once above them: its known mistakes and the
    message all of them share (``text.shared_message``)."""

    exercise: str
    diagnoses: list[ExerciseDiagnosis]
    shared: str | None
    problems: list[Problem]

    @property
    def explained(self) -> set[str]:
        """The checks whose mistake the sentence above them explains: they only refer to it."""
        return {i for d in self.diagnoses for i in d.checks}


def _problem_groups(card: Scorecard) -> list[ProblemGroup]:
    groups = []
    for exercise, checks in by_exercise(card.checks):
        problems = [Problem(c, views.is_hidden(c)) for c in checks if c.status in PROBLEM_STATUSES]
        if problems:
            groups.append(ProblemGroup(exercise, text.diagnoses_of(card, exercise), text.shared_message(checks),
                                       problems))
    return groups


def _exercises(card: Scorecard) -> list[ExerciseRow]:
    """Points per exercise, in the card's order (the assignment's)."""
    order: dict[str, list[CheckResult]] = {}
    for check in card.checks:
        order.setdefault(check.exercise, []).append(check)
    return [ExerciseRow(name, round(sum(c.score for c in checks), 6), round(sum(c.max_score for c in checks), 6),
                        sum(c.status == "passed" for c in checks), sum(c.status != "skipped" for c in checks),
                        sum(c.status == "skipped" for c in checks))
            for name, checks in order.items()]


def failed_exercises(card: Scorecard) -> set[str]:
    """The exercises with a check that did not pass (skipped ones aside): what a figure's hint may blame."""
    return {c.exercise for c in card.checks if c.status in PROBLEM_STATUSES}


def _figures(data: dict[str, Any], failed: set[str]) -> dict[str, Any]:
    """Each figure's drawing, or ``{"error": reason}``; a figure the card lacks is left out.
    Hints name only causes the card's failed checks point at (``failed``)."""
    builders = {"worked_example": _worked_example, "long_sequence": _long_sequence,
                "head_entropy": lambda figure: _head_entropy(figure, failed), "break_it": _break_it}
    out: dict[str, Any] = {}
    for name, build in builders.items():
        figure = data.get(name)
        if not isinstance(figure, dict):
            continue
        if "error" in figure:
            out[name] = {"error": str(figure["error"])}
            continue
        try:
            out[name] = build(figure)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            out[name] = {"error": f"this card's data for the picture is incomplete ({type(exc).__name__})"}
    return out


def _pair(key: str, figure: dict[str, Any]) -> dict[str, Any]:
    """The student's map beside the reference's, and what differs."""
    tokens = [str(t) for t in figure["tokens"]]
    student, reference = figure["student"], figure["reference"]
    mine = charts.heatmap(f"{key}-student", student, tokens)
    diff, where = _largest_difference(student, reference)
    return {
        "student": mine,
        "reference": charts.heatmap(f"{key}-reference", reference, tokens),
        "matches": diff <= MATCH and not mine.nonfinite,
        "difference": diff,
        "where": (tokens[where[0]], tokens[where[1]]) if where else None,
        "leaks": mine.leaks,
        "nonfinite": mine.nonfinite,
    }


def _worked_example(figure: dict[str, Any]) -> dict[str, Any]:
    pair = _pair("worked", figure)
    tokens = [str(t) for t in figure["tokens"]]
    outputs = []
    for token, got, expected in zip(tokens, figure["student_out"], figure["reference_out"]):
        close = len(got) == len(expected) and all(abs(float(a) - float(b)) <= 1e-3 for a, b in zip(got, expected))
        outputs.append({"token": token, "got": _vector(got), "expected": _vector(expected), "close": close})
    return {**pair, "outputs": outputs}


def _long_sequence(figure: dict[str, Any]) -> dict[str, Any]:
    return _pair("long", figure)


def _head_entropy(figure: dict[str, Any], failed: set[str] = frozenset()) -> dict[str, Any]:
    student = [float(x) for x in figure["student"]]  # "NaN" / "inf" (the card's words) read as floats
    reference = [float(x) for x in figure["reference"]]
    uniform = figure.get("uniform")
    chart = charts.bar_chart([student, reference], ["yours", "reference"], "head",
                             line=float(uniform) if uniform is not None else None,
                             line_text="uniform weights over the past")
    gaps = [abs(a - b) for a, b in zip(student, reference)]
    nonfinite = [f"head {h}: {charts.nonfinite_word(v)}" for h, v in enumerate(student) if charts.nonfinite_word(v)]
    return {"chart": chart, "matches": len(student) == len(reference) and not (max(gaps, default=0.0) > 1e-3)
            and not nonfinite,
            "collapsed": [h for h, v in enumerate(student) if v < 0.05], "hint": entropy_hint(failed),
            "own_entropy_failed": "attention_entropy" in failed, "nonfinite": nonfinite}


def _break_it(figure: dict[str, Any]) -> dict[str, Any]:
    """Each case's map and the words under it. The scores' spread says whose functions gave it: the
    student's ``attention_scores`` (and ``scale_scores``), or, where the card says so or is older than that
    field, the reference's."""
    d = int(figure["head_size"])
    cases, spreads = [], []
    for name, flag in (("scaled", "scale=True"), ("unscaled", "scale=False")):
        case = figure[name]
        weights = case["weights"]
        labels = [str(t) for t in range(len(weights))]
        std = case.get("score_std")
        whose = case.get("score_std_from", "reference")
        computed = f"scale_scores(attention_scores(q, k), {d})" if name == "scaled" else "attention_scores(q, k)"
        spread = ""
        if std is not None:
            spreads.append(float(std))
            value = charts.nonfinite_word(float(std)) or f"{float(std):.3g}"
            spread = (f"raw scores σ {value}, from your `{computed}`" if whose == "yours"
                      else f"raw scores σ {value}, from the reference's `{computed}` (yours could not give it)")
        entropy = float(case["mean_entropy"])
        cases.append({"name": name, "flag": flag, "map": charts.heatmap(f"break-{name}", weights, labels),
                      "entropy": charts.nonfinite_word(entropy) or f"{entropy:.3f}", "spread": spread})
    reference = {k: f"{float(v):.3f}" for k, v in (figure.get("reference_mean_entropy") or {}).items()}
    finite = len(spreads) == 2 and all(math.isfinite(s) for s in spreads) and spreads[0] > 0
    ratio = f"{spreads[1] / spreads[0]:.0f}×" if finite else ""
    return {"head_size": d, "cases": cases, "reference": reference, "ratio": ratio}


def _largest_difference(a: list[list[float]], b: list[list[float]]) -> tuple[float, tuple[int, int] | None]:
    """The largest gap between finite entries, and where; NaN/inf cells are named by the map instead."""
    if len(a) != len(b) or any(len(x) != len(y) for x, y in zip(a, b)):
        raise ValueError("the student's and the reference's matrices differ in shape")
    worst, where = 0.0, None
    for r, (x, y) in enumerate(zip(a, b)):
        for c, (u, v) in enumerate(zip(x, y)):
            gap = abs(float(u) - float(v))
            if math.isfinite(gap) and gap > worst:
                worst, where = gap, (r, c)
    return worst, where


def _vector(values: list[float]) -> str:
    return "[" + ", ".join(charts.nonfinite_word(float(v)) or f"{float(v):.3f}" for v in values) + "]"


# What can make multi_head_attention's per-head entropies differ from the reference's, by the exercise
# whose checks would fail: a hint names only the causes the card's failed checks point at.
ENTROPY_CAUSES: tuple[tuple[str, str], ...] = (
    ("attention_scores", "the raw scores q @ kᵀ (`attention_scores`)"),
    ("scale_scores", "the scale: divide the scores by √d_head (`scale_scores`)"),
    ("causal_mask", "the causal mask: row t may look at positions 0..t (`causal_mask`)"),
    ("apply_mask", "masking: future scores set to −∞ before the softmax (`apply_mask`)"),
    ("softmax", "the softmax: each row a distribution over the keys (`softmax`)"),
    ("attention", "the order inside `attention`: scores, scale, mask, softmax, never a mask after the softmax"),
    ("split_heads", "how the channels are split into heads: head h holds channels h·d_head..(h+1)·d_head (`split_heads`)"),
    ("multi_head_attention", "`multi_head_attention` itself: each head's scores scaled by √(C / H) once, "
                             "the weights returned per head"),
)


def entropy_hint(failed_exercises: set[str]) -> str:
    """Why the heads' entropies may differ, naming only the steps whose checks failed on this card.

    A picture cannot tell a bad split from a mask after the softmax; the checks can. Where none of
    the steps the weights depend on failed, the hint says so instead of guessing a cause.
    """
    causes = [text for exercise, text in ENTROPY_CAUSES if exercise in failed_exercises]
    if causes:
        return "The checks that failed point at " + "; ".join(causes) + "."
    return ("The checks of the steps these weights come from passed, so compare the weights drawn above "
            "with the reference's to see where they part.")
