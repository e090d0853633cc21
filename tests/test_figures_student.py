"""The report's pictures are every student's: NaN and inf drawn and named, and "yours" measured on theirs.

Two generated families, graded without the sandbox (a stand-in proxy answers each call with the
reference's functions, changed as a student's would be):

* non-finite students: NaN, inf or -inf in ``attention``'s out, its weights or both, in one cell, one
  row or everywhere. Every picture is drawn; the card keeps each non-finite cell as its word ("NaN",
  "inf", "-inf") exactly where the student's tensor has it; the page colours those cells and its
  caption counts and names them.
* scale bugs: ``scale_scores`` dividing by d, by d ** 0.25, by nothing, multiplying by sqrt(d)... The
  "Break it" panel's σ under "yours" is the spread of that student's own
  ``scale_scores(attention_scores(q, k), 256)``; where their functions cannot give it, the page says the
  σ is the reference's.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from types import ModuleType
from typing import Any, Callable

import pytest
import torch

from grader import figures, session
from grader.export import html
from grader.sandbox.errors import NotAttempted
from grader.sandbox.proxy import CallResult
from grader.scorecard import Scorecard, SubmissionInfo, validate
from tests.conftest import ROOT

POISONS = ("nan", "inf", "-inf")
WHERE = ("out", "weights", "both")
EXTENTS = ("cell", "row", "all")
DRAWN = ("worked_example", "long_sequence", "head_entropy", "break_it")


@pytest.fixture(scope="module")
def reference() -> ModuleType:
    return session.load_reference(ROOT / "solutions/attention.py")


class Student:
    """A stand-in proxy: each call answered by ``functions[name]``, else by the reference's function."""

    def __init__(self, reference: ModuleType, **functions: Callable[..., Any]) -> None:
        self.reference, self.functions = reference, functions

    def call(self, name: str, *args: Any, **kwargs: Any) -> CallResult:
        fn = self.functions.get(name) or getattr(self.reference, name)
        return CallResult(fn(*args, **kwargs))


def poisoned(t: torch.Tensor, fill: str, extent: str) -> torch.Tensor:
    mask = torch.zeros(t.shape, dtype=torch.bool)
    if extent == "all":
        mask[...] = True
    elif extent == "row":
        mask[..., 0, :] = True
    else:
        mask.view(-1)[t.numel() // 2] = True
    return t.masked_fill(mask, float(fill))


def words(t: torch.Tensor) -> list[list[Any]]:
    """What the card must hold for ``t``: the word where a value is not finite (only those are compared)."""
    return [["NaN" if v != v else ("inf" if v > 0 else "-inf") if not math.isfinite(v) else None for v in row]
            for row in t.to(torch.float64).tolist()]


def card_with(figs: dict[str, Any]) -> Scorecard:
    return Scorecard("attention", SubmissionInfo("attention.py", "0" * 64), 0.0, 1.0, (), figures=figs)


NONFINITE = list(itertools.product(POISONS, WHERE, EXTENTS))


@pytest.mark.parametrize("fill, where, extent", NONFINITE, ids=["-".join(c) for c in NONFINITE])
def test_a_student_with_nan_or_inf_still_gets_every_picture(reference, fill, where, extent):
    def attention(q, k, v, causal=True, scale=True):
        out, weights = reference.attention(q, k, v, causal=causal, scale=scale)
        out = poisoned(out, fill, extent) if where in ("out", "both") else out
        weights = poisoned(weights, fill, extent) if where in ("weights", "both") else weights
        return out, weights

    def multi_head_attention(*args, **kwargs):
        out, weights = reference.multi_head_attention(*args, **kwargs)
        return out, (poisoned(weights, fill, extent) if where != "out" else weights)

    figs = figures.collect(Student(reference, attention=attention, multi_head_attention=multi_head_attention),
                           reference, "attention")
    assert not [name for name in DRAWN if "error" in figs[name]], figs
    validate(card_with(figs).to_dict())  # the words are schema-valid JSON: no bare NaN in the card

    q, k, v = (torch.tensor(x) for x in (figures.WORKED_Q, figures.WORKED_K, figures.WORKED_V))
    out, weights = attention(q, k, v)
    for drawn, tensor in ((figs["worked_example"]["student"], weights), (figs["worked_example"]["student_out"], out)):
        expected = words(tensor)
        assert [[c if isinstance(c, str) else None for c in row] for row in drawn] == expected

    page = html.render(card_with(figs))
    worked = page[page.index('id="fig-worked_example"'):page.index('id="fig-long_sequence"')]
    odd = sum(c is not None for row in words(weights) for c in row)
    if odd:
        word = "cell is" if odd == 1 else "cells are"
        assert f"{odd} {word} NaN or inf, drawn in magenta" in worked
        assert worked.count(f'fill="{html.charts.NONFINITE_FILL}"') == odd
        first = next((r, c) for r, row in enumerate(words(weights)) for c, x in enumerate(row) if x)
        tokens = figures.WORKED_TOKENS
        assert f"{tokens[first[0]]} looks at {tokens[first[1]]}: {words(weights)[first[0]][first[1]]}" in worked
    else:
        assert "NaN or inf, drawn in magenta" not in worked
    if where != "weights":
        assert re.search(r'class="mono off">\[[^\]]*(NaN|inf)', worked), "the outputs table names the NaN/inf"


SCALE_BUGS: dict[str, Callable[[torch.Tensor, int], torch.Tensor]] = {
    "divides by d": lambda s, d: s / d,
    "divides by d ** 0.25": lambda s, d: s / d ** 0.25,
    "never scales": lambda s, d: s,
    "multiplies by sqrt(d)": lambda s, d: s * math.sqrt(d),
    "divides by sqrt(d) twice": lambda s, d: s / d,
    "divides by 2 sqrt(d)": lambda s, d: s / (2 * math.sqrt(d)),
    "the reference's": lambda s, d: s / math.sqrt(d),
}


@pytest.mark.parametrize("bug", sorted(SCALE_BUGS))
def test_the_break_it_spread_under_yours_is_the_students_own(reference, bug):
    scale_scores = SCALE_BUGS[bug]

    def attention(q, k, v, causal=True, scale=True):
        s = reference.attention_scores(q, k)
        s = scale_scores(s, q.shape[-1]) if scale else s
        s = reference.apply_mask(s, reference.causal_mask(q.shape[-2])) if causal else s
        w = reference.softmax(s)
        return reference.mix_values(w, v), w

    figs = figures.collect(Student(reference, attention=attention, scale_scores=scale_scores), reference, "attention")
    panel = figs["break_it"]
    q, k, _ = (figures.randn(figures.BREAK_T, figures.BREAK_D, seed=figures.SEED_BREAK + i) for i in range(3))
    mask = reference.causal_mask(figures.BREAK_T)
    own = scale_scores(reference.attention_scores(q, k), figures.BREAK_D).to(torch.float64)[mask].std().item()
    assert panel["scaled"]["score_std_from"] == "yours"
    assert panel["scaled"]["score_std"] == pytest.approx(own, abs=1e-4)
    page = html.render(card_with(figs))
    shown = page[page.index('id="fig-break_it"'):]
    assert f"raw scores σ {own:.3g}, from your <code>scale_scores(attention_scores(q, k), 256)</code>" in shown


def test_a_panel_whose_own_functions_fail_labels_the_spread_as_the_references(reference):
    def not_attempted(*args, **kwargs):
        raise NotAttempted("attention_scores")

    figs = figures.collect(Student(reference, attention_scores=not_attempted), reference, "attention")
    assert {figs["break_it"][c]["score_std_from"] for c in ("scaled", "unscaled")} == {"reference"}
    page = html.render(card_with(figs)).replace("&#39;", "'")
    shown = page[page.index('id="fig-break_it"'):]
    assert "from the reference's <code>scale_scores(attention_scores(q, k), 256)</code> (yours could not give it)" in shown
    assert "from your" not in shown


def test_an_older_card_without_the_field_says_the_spread_is_the_references(reference):
    """Cards graded before the field measured σ with the reference's functions: the page says so."""
    figs = figures.collect(Student(reference), reference, "attention")
    for case in ("scaled", "unscaled"):
        figs["break_it"][case] = {k: v for k, v in figs["break_it"][case].items() if k != "score_std_from"}
    page = html.render(card_with(figs)).replace("&#39;", "'")
    shown = page[page.index('id="fig-break_it"'):]
    assert "from the reference's" in shown and "from your" not in shown


def test_the_notebook_section_renders_code_spans_and_sits_near_the_top(reference):
    from grader.scorecard import NotebookReport

    fields = {f.name for f in dataclasses.fields(NotebookReport)}
    assert {"cells", "code_cells", "failed", "dropped"} <= fields
    card = dataclasses.replace(card_with(figures.collect(Student(reference), reference, "attention")))
    data = card.to_dict()
    data["notebook"] = {"cells": 3, "code_cells": 2, "failed": [{"cell": 2, "line": 1, "code": "x = y",
                                                                 "reason": "`y` is not defined"}],
                        "dropped": [{"cell": 3, "line": 1, "code": "!pip install torch",
                                     "reason": "a shell command (`!`) does not run when grading"}]}
    page = html.render(Scorecard.from_dict(data))
    notebook = page[page.index('id="notebook"'):]
    assert "<code>y</code> is not defined" in notebook and "`" not in notebook[:notebook.index("</section>")]
    assert page.index('id="notebook"') < page.index('id="scores"') < page.index('id="figures"')


def test_picture_not_drawn_renders_code_spans():
    page = html.render(card_with({"worked_example": {"error": "`attention` returned None; expected a tuple"}}))
    assert "Picture not drawn: <code>attention</code> returned None" in page
