"""Properties every function of the contract must have.

Each test runs once for every exercise that lists it in assignments.yaml (``pytest_generate_tests`` below,
``grader.checks.plan``); the ``exercise`` mark on each parameter tells scoring whose points are at stake.
What a test needs to know of an exercise is in its config too: ``returns`` (the names of its outputs),
``gradient_inputs`` and ``gradient_where`` (the gradient check). Its inputs are ``cases[fn]``
(conftest.py's ``build_cases``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from grader.checks import helpers as h
from grader.checks import plan

PACKAGE = Path(__file__).parent.name  # this assignment's `checks:` in assignments.yaml
LOW_PRECISION = ("float16", "bfloat16")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "dtype" in metafunc.fixturenames:
        plan.per_exercise(metafunc, PACKAGE, LOW_PRECISION, "dtype")
    else:
        plan.per_exercise(metafunc, PACKAGE)


def names(assignment, fn: str) -> tuple[str, ...]:
    """What ``fn`` returns, by name (``returns:``; one ``output`` when not said)."""
    return plan.exercise(assignment, fn).returns


def inputs(cases, fn: str):
    """``fn``'s inputs: a grader bug, said so, when conftest.build_cases has none."""
    if not cases.get(fn):
        raise AssertionError(f"no inputs for `{fn}` in the checks' conftest.py build_cases (a grader bug: report it)")
    return cases[fn]


def test_output_matches_reference(student, reference, cases, assignment, fn):
    for case in inputs(cases, fn):
        h.check_matches_reference(student, reference, case, torch.float32, names(assignment, fn))


def test_low_precision_inputs_work(student, reference, cases, assignment, fn, dtype):
    h.check_matches_reference(student, reference, inputs(cases, fn)[0], getattr(torch, dtype), names(assignment, fn))


def test_inputs_are_not_modified(student, cases, fn):
    for case in inputs(cases, fn):
        h.check_inputs_unchanged(student, case)


def test_gradients_match_reference(student, reference, hidden_cases, hidden_seed, assignment, fn):
    ex = plan.exercise(assignment, fn)
    if not ex.gradient_inputs:
        raise AssertionError(f"`{fn}` has no `gradient_inputs:` in assignments.yaml (a grader bug: report it)")
    positive = (lambda i, x: x > 0) if ex.gradient_where == "positive" else None
    h.check_gradients(student, reference, inputs(hidden_cases, fn)[0], list(ex.gradient_inputs), where=positive,
                      salt=hidden_seed)


def test_accepts_non_contiguous_inputs(student, reference, hidden_cases, assignment, fn):
    case = inputs(hidden_cases, fn)[0]
    flipped = h.Case(fn, tuple(h.noncontiguous(a) if isinstance(a, torch.Tensor) else a for a in case.args),
                     case.kwargs, case.label + ", non-contiguous")
    h.check_matches_reference(student, reference, flipped, torch.float32, names(assignment, fn))


def test_stays_on_the_inputs_device(student, cases, fn):
    h.check_on_meta(student, inputs(cases, fn)[0])


def test_cuda_matches_cpu(student, cases, cuda_available, fn):
    h.check_cuda_matches_cpu(student, inputs(cases, fn)[0], cuda_available)
