"""Properties every function of the contract must have.

Each test is parametrised by the function it checks; the ``exercise`` mark
on each parameter tells scoring whose points are at stake.

PYTEST_DONT_REWRITE: messages are written for students; pytest's assertion
rewriting (active when the project's own tests grade in-process) would append its own.
"""

from __future__ import annotations

import pytest
import torch

from grader.checks import helpers as h

NAMES = {"attention": ("out", "weights"), "multi_head_attention": ("out", "weights")}
TENSOR_FUNCTIONS = [
    "attention_scores", "scale_scores", "apply_mask", "softmax", "mix_values", "attention",
    "bag_of_past", "split_heads", "merge_heads", "multi_head_attention", "attention_entropy",
]
ALL = ["causal_mask", *TENSOR_FUNCTIONS]
GRAD_INPUTS = {
    "attention_scores": [0, 1], "scale_scores": [0], "apply_mask": [0], "softmax": [0], "mix_values": [0, 1],
    "attention": [0, 1, 2], "bag_of_past": [0], "split_heads": [0], "merge_heads": [0],
    "multi_head_attention": [0, 1, 2, 3, 4], "attention_entropy": [0],
}


def per_function(names, *extra):
    """One parameter per contract function (times ``extra``), marked with its exercise."""
    if not extra:
        return [pytest.param(n, id=n, marks=pytest.mark.exercise(n)) for n in names]
    return [pytest.param(n, e, id=f"{n}-{e}", marks=pytest.mark.exercise(n)) for n in names for e in extra]


@pytest.mark.parametrize("fn", per_function(ALL))
def test_output_matches_reference(student, reference, cases, fn):
    for case in cases[fn]:
        h.check_matches_reference(student, reference, case, torch.float32, NAMES.get(fn, ("output",)))


@pytest.mark.parametrize("fn, dtype", per_function(TENSOR_FUNCTIONS, "float16", "bfloat16"))
def test_low_precision_inputs_work(student, reference, cases, fn, dtype):
    h.check_matches_reference(student, reference, cases[fn][0], getattr(torch, dtype), NAMES.get(fn, ("output",)))


@pytest.mark.parametrize("fn", per_function(TENSOR_FUNCTIONS))
def test_inputs_are_not_modified(student, cases, fn):
    for case in cases[fn]:
        h.check_inputs_unchanged(student, case)


@pytest.mark.parametrize("fn", per_function(TENSOR_FUNCTIONS))
def test_gradients_match_reference(student, reference, hidden_cases, fn):
    positive = (lambda i, x: x > 0) if fn == "attention_entropy" else None
    h.check_gradients(student, reference, hidden_cases[fn][0], GRAD_INPUTS[fn], where=positive)


@pytest.mark.parametrize("fn", per_function(TENSOR_FUNCTIONS))
def test_accepts_non_contiguous_inputs(student, reference, hidden_cases, fn):
    case = hidden_cases[fn][0]
    flipped = h.Case(fn, tuple(h.noncontiguous(a) if isinstance(a, torch.Tensor) else a for a in case.args),
                     case.kwargs, case.label + ", non-contiguous")
    h.check_matches_reference(student, reference, flipped, torch.float32, NAMES.get(fn, ("output",)))


@pytest.mark.parametrize("fn", per_function(TENSOR_FUNCTIONS))
def test_stays_on_the_inputs_device(student, cases, fn):
    h.check_on_meta(student, cases[fn][0])


@pytest.mark.parametrize("fn", per_function(["attention", "multi_head_attention", "softmax", "bag_of_past"]))
def test_cuda_matches_cpu(student, cases, cuda_available, fn):
    h.check_cuda_matches_cpu(student, cases[fn][0], cuda_available)
