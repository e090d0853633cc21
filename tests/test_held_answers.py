"""What makes the diagnosis cheaper must not change what it names (``grader/diagnosis/held.py`` and the caches).

- ``held_first`` only reorders a mistake's requests (a stable partition: held answers first), and ``_gives`` is
  a conjunction, so a judge that has diagnosed other cards names what a fresh judge names, and what the plain
  order names: shown on a generated family of students (the operators' variants and catalogued mistakes of both
  assignments, run in-process as trusted code), each card diagnosed warm, cold and in the plain order.
- ``truth.ReferenceReading`` (the reference's side of ``TrueNames``, read once per judge) says the same titles as
  a reading made afresh, for every known mistake and several students' sources, asked twice.
- ``noise.near`` on the answers' NumPy copies says what the torch version it replaced says (kept here as the
  rule), on generated answers with NaN, infinities, zeros of both signs and every float dtype.
- Weights equal bit for bit agree (``answers._identical``) only where the tolerance test agrees.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.diagnosis import diagnose as diagnose_module
from grader.diagnosis import noise
from grader.diagnosis.answers import Answer, _agree, _comparable, _identical, _same_weights, replay, same, student_answer
from grader.diagnosis.catalogue import load_catalogue, module_from_source
from grader.diagnosis.diagnose import CheckEvidence, Diagnoser
from grader.diagnosis.family import VariantFactory, variants
from grader.diagnosis.held import held_first
from grader.diagnosis.truth import ReferenceReading, TrueNames, said_titles
from tests.gradient_requests import REFERENCE, answered, module_requests, randn

# ------------------------------------------------------------------ held_first: a stable partition


@given(st.lists(st.tuples(st.integers(0, 5), st.text(max_size=3)), max_size=20), st.sets(st.text(max_size=3)))
def test_held_first_puts_held_requests_first_and_keeps_each_parts_order(items, held):
    evidence = [(i, key, f"answer-{n}") for n, (i, key) in enumerate(items)]
    ordered = held_first(evidence, lambda key: key in held)
    assert sorted(ordered) == sorted(evidence)
    flags = [item[1] in held for item in ordered]
    assert flags == sorted(flags, reverse=True)  # every held one before every other
    assert [e for e in ordered if e[1] in held] == [e for e in evidence if e[1] in held]
    assert [e for e in ordered if e[1] not in held] == [e for e in evidence if e[1] not in held]


# ------------------------------------------------------------------ the same names, warm, cold and in the plain order

FUNCTION_INPUTS = {
    "softmax": lambda s: [randn(2, 3, 5, 7, seed=s, dtype=torch.float32)],
    "scale_scores": lambda s: [randn(2, 3, 5, 7, seed=s, dtype=torch.float32) * 5, 4],
    "attention_scores": lambda s: [randn(2, 3, 5, 4, seed=s, dtype=torch.float32),
                                   randn(2, 3, 7, 4, seed=s + 1, dtype=torch.float32)],
    "attention": lambda s: [randn(2, 3, 5, 4, seed=s, dtype=torch.float32), randn(2, 3, 5, 4, seed=s + 1, dtype=torch.float32),
                            randn(2, 3, 5, 6, seed=s + 2, dtype=torch.float32)],
}
CLASSES = ("SelfAttentionHead", "MultiHeadAttention")


def _card(assignment: str, ns: dict, reference) -> list[CheckEvidence]:
    """One card's checks for a student whose code is ``ns``: each exercise's requests over two seeds, failed
    where an answer is not the reference's."""
    checks = []
    for exercise in (CLASSES if assignment == "attention-modules" else FUNCTION_INPUTS):
        if assignment == "attention-modules":
            requests = [r for seed in (0, 1) for r in module_requests(ns, exercise, seed)]
        else:
            requests = [answered(ns, {"op": "call", "fn": exercise, "args": FUNCTION_INPUTS[exercise](seed), "kwargs": {},
                                      "seed": seed, "vjp": None, "return_args": False}) for seed in (0, 1)]
        wrong = any(not same(student_answer(m, r), replay(reference, m)) for m, r in requests)
        checks.append(CheckEvidence(exercise, "failed" if wrong else "passed", (), tuple(requests)))
    return checks


def _students(assignment: str, count: int, seed: int) -> list[tuple[str, dict]]:
    """Generated students: a draw of the operators' variants and catalogued mistakes, as trusted namespaces."""
    text = REFERENCE[assignment].read_text()
    factory = VariantFactory(text, "_held_student")
    exercises = set(CLASSES if assignment == "attention-modules" else FUNCTION_INPUTS)
    family = [v for v in variants(text, assignment) if v.exercise in exercises]
    mistakes = [m for m in load_catalogue(assignment) if m.exercise in exercises]
    rng = random.Random(seed)
    drawn = rng.sample(family, min(count, len(family))) + rng.sample(mistakes, min(count // 2, len(mistakes)))
    rng.shuffle(drawn)
    return [(m.id, vars(factory.build(m)) if hasattr(m, "definition") else vars(m.variant(REFERENCE[assignment])))
            for m in drawn]


def _names(found: list[list]) -> list[list[str]]:
    return [[m.id for m in check] for check in found]


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("assignment", ["attention", "attention-modules"])
def test_a_warm_judge_names_what_a_cold_one_and_the_plain_order_name(assignment, seed, monkeypatch):
    reference = module_from_source(REFERENCE[assignment].read_text(), "_held_reference")
    cards = [(sid, _card(assignment, ns, reference)) for sid, ns in _students(assignment, 6, seed)]
    assert any(c.status == "failed" for _, card in cards for c in card)  # the family shows mistakes

    def judge() -> Diagnoser:
        return Diagnoser(REFERENCE[assignment], load_catalogue(assignment), operators=True, assignment=assignment)
    warm = judge()
    held = [_names(warm.diagnose(card)) for _, card in cards]
    cold = [_names(judge().diagnose(card)) for _, card in cards]
    monkeypatch.setattr(diagnose_module, "held_first", lambda evidence, known: list(evidence))
    plain_judge = judge()
    plain = [_names(plain_judge.diagnose(card)) for _, card in cards]
    assert held == cold == plain
    assert any(any(check) for names in held for check in names)  # something was named: the comparison says something


# ------------------------------------------------------------------ the reference read once per judge


@pytest.mark.parametrize("assignment", ["attention", "attention-modules"])
def test_a_reading_kept_for_the_judge_says_the_titles_a_fresh_one_says(assignment):
    text = REFERENCE[assignment].read_text()
    family = [*load_catalogue(assignment), *variants(text, assignment)]
    factory_sources = [m.definition for m in random.Random(3).sample([v for v in family if hasattr(v, "definition")], 4)]
    students = [text, None, "def broken(:\n", *(text + "\n\n" + s for s in factory_sources)]
    reading = ReferenceReading(text)
    for student in students:
        for _ in range(2):  # the second time from the memo
            assert said_titles(family, TrueNames(reading, student)) == said_titles(family, TrueNames(text, student))


# ------------------------------------------------------------------ near, in NumPy, says what it said in torch


def _near_in_torch(student, variant) -> bool:
    """``noise.near`` as it was written in torch: the rule the NumPy version keeps."""
    if student.raised or variant.raised or len(student.outputs) != len(variant.outputs) or not student.outputs:
        return False
    if student.modified != variant.modified or student.structure != variant.structure or student.grads:
        return False
    floats = lambda outs: all(isinstance(x, torch.Tensor) and x.is_floating_point() and x.device.type != "meta" for x in outs)  # noqa: E731
    if not (floats(student.outputs) and floats(variant.outputs)):
        return False
    for s, v in zip(student.outputs, variant.outputs):
        if s.shape != v.shape or s.dtype != v.dtype:
            return False
        s64, v64 = s.detach().cpu().double(), v.detach().cpu().double()
        if not torch.equal(torch.isnan(s64), torch.isnan(v64)):
            return False
        finite = torch.isfinite(s64) & torch.isfinite(v64)
        if not torch.equal(s64[~finite].nan_to_num(), v64[~finite].nan_to_num()):
            return False
        size = float(v64[finite].abs().max()) if finite.any() else 0.0
        if finite.any() and float((s64[finite] - v64[finite]).abs().max()) > noise.NEAR * (1.0 + size):
            return False
    return True


SPECIAL = [float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1e-3, 1.0, 100.0]
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


@st.composite
def _pair(draw):
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    n = int(np.prod(shape)) if shape else 1
    base = draw(st.lists(st.sampled_from(SPECIAL) | st.floats(-10, 10), min_size=n, max_size=n))
    gaps = draw(st.lists(st.sampled_from([0.0, 0.0, 1e-6, 1e-3, 0.05, float("nan"), float("inf")]), min_size=n, max_size=n))
    dtype = draw(st.sampled_from(DTYPES))
    x = torch.tensor(base, dtype=torch.float64).reshape(shape)
    y = (x + torch.tensor(gaps, dtype=torch.float64).reshape(shape))
    other_dtype = draw(st.sampled_from(DTYPES)) if draw(st.booleans()) else dtype
    if draw(st.booleans()):
        y = y.reshape(-1) if shape and len(shape) > 1 else y
    return x.to(dtype), y.to(other_dtype)


@settings(max_examples=300, deadline=None)
@given(_pair(), st.booleans())
def test_near_in_numpy_says_what_near_in_torch_said(pair, two):
    x, y = pair
    student = Answer(outputs=(x, x) if two else (x,))
    variant = Answer(outputs=(y, x) if two else (y,))
    assert noise.near(student, variant) == _near_in_torch(student, variant)
    assert noise.near(variant, student) == _near_in_torch(variant, student)


def test_near_still_refuses_what_is_not_a_pair_of_float_answers():
    x = torch.ones(3)
    assert not noise.near(Answer(outputs=(x,)), Answer(raised=("ValueError", False, "")))
    assert not noise.near(Answer(outputs=(x.int(),)), Answer(outputs=(x.int(),)))
    assert not noise.near(Answer(outputs=(x,)), Answer(outputs=(x, x)))
    assert not noise.near(Answer(outputs=(torch.ones(3, device="meta"),)), Answer(outputs=(torch.ones(3, device="meta"),)))
    assert noise.near(Answer(outputs=(x,)), Answer(outputs=(x * 1.001,)))


# ------------------------------------------------------------------ weights equal bit for bit


@settings(max_examples=300, deadline=None)
@given(_pair())
def test_weights_identical_bit_for_bit_agree_only_where_the_tolerance_test_agrees(pair):
    x, y = pair
    for a, b in ((x, x.clone()), (x, y), (y, y.clone()), (x, x.to("meta"))):
        agree = _agree(_comparable(a), _comparable(b))
        assert (_identical(a, b) or agree) == agree
    assert not _identical(torch.full((2,), float("nan")), torch.full((2,), float("nan")))


@settings(max_examples=100, deadline=None)
@given(_pair(), st.booleans())
def test_same_weights_say_what_the_tolerance_test_alone_says(pair, hidden):
    x, y = pair
    weights = lambda w: None if hidden and w is y else (("proj.weight", w), ("proj.bias", x))  # noqa: E731
    a, b = Answer(outputs=(x,), weights=weights(x)), Answer(outputs=(x,), weights=weights(y))
    by_tolerance = a.compared_weights is not None and b.compared_weights is not None and all(
        _agree(u, v) for (_, u), (_, v) in zip(a.compared_weights, b.compared_weights))
    assert _same_weights(a, b) == by_tolerance
