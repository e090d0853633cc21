"""The reference's answers on a check's inputs are worked out once per judge, not once per student.

The visible ``cases`` live as long as the judge (a session fixture), and the reference is trusted code whose
answer depends on its inputs alone, so ``helpers.reference_answer`` keeps each answer with its case. What must
hold: the same cards as when everything is recomputed, a new answer for another reference object (a release
records through one per check), and a reference that draws random numbers is never kept where a check reads
its randomness (the placeholder gate's second run).
"""

from __future__ import annotations

import types
from pathlib import Path

import torch

from grader import api
from grader.checks import helpers as h
from grader.checks.attention import test_work
from grader.session.plugin import load_reference
from tests.corpus_cases import REFERENCE, corpus


def _case() -> h.Case:
    return h.Case("softmax", (torch.randn(2, 3, generator=torch.Generator().manual_seed(0)),), {}, "scores 2x3")


def test_an_answer_is_kept_with_its_case_for_the_same_reference():
    case, asked = _case(), []
    first, other = types.SimpleNamespace(), types.SimpleNamespace()

    def compute(reference):
        return lambda: asked.append(reference) or len(asked)

    assert h.reference_answer(first, case, torch.float32, compute(first)) == 1
    assert h.reference_answer(first, case, torch.float32, compute(first)) == 1  # kept
    assert h.reference_answer(first, case, torch.float16, compute(first)) == 2  # asked something else
    assert h.reference_answer(other, case, torch.float32, compute(other)) == 3  # another reference: again
    assert h.reference_answer(first, case, torch.float32, compute(first)) == 4  # the kept one was replaced
    assert h.reference_answer(first, _case(), torch.float32, compute(first)) == 5  # equal inputs, another case
    assert h.reference_answer(first, case, "not kept", compute(first), keep=lambda answer: False) == 6
    assert h.reference_answer(first, case, "not kept", compute(first), keep=lambda answer: False) == 7


def _reference_with(softmax) -> types.ModuleType:
    module = types.ModuleType("a_reference")
    module.softmax = softmax
    return module


def test_the_gate_keeps_a_repeatable_reference_and_reruns_a_random_one():
    """The gate judges randomness from the reference's second run on the same inputs: a reference whose two runs
    differ is run anew every time, so that run stays another RNG state's."""
    calls = []

    def steady(x, dim=-1):
        calls.append("steady")
        return torch.softmax(x, dim)

    def noisy(x, dim=-1):
        calls.append("noisy")
        return torch.softmax(x, dim) + torch.rand(x.shape, dtype=x.dtype)

    case = _case()
    repeatable, random = _reference_with(steady), _reference_with(noisy)
    for _ in range(3):
        test_work._reference_runs(repeatable, case)
    assert calls.count("steady") == 3  # the inputs, again, other inputs: once
    for _ in range(3):
        runs = test_work._reference_runs(random, case)
    assert calls.count("noisy") == 9
    assert not torch.equal(runs[0][0], runs[1][0])


class CountingReference:
    """The assignment's reference, counting the calls the checks make to it."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module, self.calls = module, 0

    def __getattr__(self, name: str):
        attr = getattr(self.module, name)
        if not callable(attr) or isinstance(attr, type):
            return attr

        def counted(*args, **kwargs):
            self.calls += 1
            return attr(*args, **kwargs)

        return counted


def test_a_second_student_costs_the_reference_far_fewer_calls_and_gets_the_same_card(tmp_path: Path, server):
    reference = CountingReference(load_reference(REFERENCE["attention"]))
    mutant = next(c for c in corpus("mutants") if c.assignment == "attention" and c.path.stem == "softmax_dim0")
    files = [mutant.write_submission(tmp_path / "a"), mutant.write_submission(tmp_path / "b")]
    with api.Grader("attention", server=server, reference=lambda check_id: reference) as grader:
        first = grader.grade(files[0])
        on_first, reference.calls = reference.calls, 0
        second = grader.grade(files[1])
    assert reference.calls < on_first / 3, (on_first, reference.calls)
    assert [(c.id, c.status, c.score, c.message) for c in first.checks] == \
        [(c.id, c.status, c.score, c.message) for c in second.checks]
    assert any(c.status == "failed" for c in second.checks)
