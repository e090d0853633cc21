"""The gate of every exercise: its output is no placeholder; it varies with its inputs the way the exercise needs.

Scoring credits an exercise's other checks only once this one passed
(``gate: true`` in assignments.yaml; the rule is in ``grader/checks/work.py``),
so a function that returns zeros, ones, random values or its own input earns
nothing from the checks that compare the student's code with itself.

PYTEST_DONT_REWRITE: messages are written for students; pytest's assertion
rewriting (active when the project's own tests grade in-process) would append its own.
"""

from __future__ import annotations

import pytest
import torch

from grader.checks import helpers as h
from grader.checks import work
from grader.checks.attention.test_common import ALL, NAMES, per_function
from grader.sandbox.errors import StudentError
from grader.sandbox.proxy import DEFAULT_SEED

# What the function is for, said the lesson's way, for the gate's message.
PURPOSE = {
    "attention_scores": "one score per (query, key) pair: q @ kᵀ",
    "scale_scores": "the scores divided by sqrt(head_size)",
    "causal_mask": "True on and below the diagonal, False above it",
    "apply_mask": "the scores, with -inf where the mask is False",
    "softmax": "exp of each score over the sum of exps along `dim`",
    "mix_values": "each row of weights times the values: weights @ v",
    "attention": "scores -> scale -> mask -> softmax -> mix",
    "bag_of_past": "row t is the mean of the values of tokens 0..t",
    "split_heads": "the channels cut into n_heads slices, one per head",
    "merge_heads": "the heads' slices put back side by side",
    "multi_head_attention": "attention in every head on its slice, merged, then @ w_o",
    "attention_entropy": "-(p * log p) summed over each row of weights",
}


def other_values(x):
    """The same tensor with its rows in reverse order: same shapes and kinds of values, other inputs."""
    return x.flip(-2) if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 2 else x


def _other(case: h.Case) -> h.Case:
    if case.fn == "causal_mask":
        return h.Case(case.fn, (case.args[0] + 2,), case.kwargs, case.label)
    return h.Case(case.fn, tuple(other_values(a) for a in case.args), case.kwargs, case.label)


def _findings(student, reference, case: h.Case) -> list[str] | None:
    """Why each output of ``case`` does no work; [] when one does; None when the case cannot tell (the reference's
    own output holds one value or is an input, on T=1 and the like: ``work.telling``)."""
    other = _other(case)
    ref = [h.outputs_of(h.reference_f64(getattr(reference, case.fn), *c.args, **c.kwargs)) for c in (case, case, other)]
    names = NAMES.get(case.fn, ("output",))
    telling = [i for i in range(len(names)) if i < len(ref[0])
               and work.telling(work.Runs(*(r[i] for r in ref)), case.args)]
    if not telling:
        return None
    got = [h.outputs_of(student.call(case.fn, *c.args, seed=s, **c.kwargs).value)
           for c, s in ((case, DEFAULT_SEED), (case, DEFAULT_SEED + 1), (other, DEFAULT_SEED))]
    findings = []
    for i in telling:
        name = names[i]
        runs = [h.as_tensor(g[i] if i < len(g) else None, f"`{case.fn}` on {case.label} ({name})") for g in got]
        why = work.no_work(work.Runs(*runs), work.Runs(*(r[i] for r in ref)), case.args)
        if not why:
            return []
        findings.append(f"the {name} {why}" if len(names) > 1 else f"its output {why}")
    return findings


@pytest.mark.parametrize("fn", per_function(ALL))
def test_output_is_not_a_placeholder(student, reference, cases, fn):
    """Passes when the output does work on any one input the reference can tell by: the least any real attempt
    does, so a bug that breaks some shapes (no batch dims, 4-D) still leaves the exercise's other checks counting.
    Code that raises on every input is no placeholder (it returns nothing): the checks that need outputs say why."""
    first: tuple[h.Case, list[str]] | None = None
    errors: list[StudentError] = []  # raised, so returned nothing a placeholder could
    for case in cases[fn]:
        try:
            findings = _findings(student, reference, case)
        except StudentError as exc:
            errors.append(exc)
            continue
        if findings == []:
            return
        if findings and first is None:
            first = (case, findings)
    if first is None:
        assert errors, f"no input of `{fn}` can tell whether it computes anything (a grader bug: report it)"
        return
    case, findings = first
    raise AssertionError(
        f"`{fn}` looks like a placeholder, not computed from its inputs: on {case.label}, {' and '.join(findings)}. "
        f"It should give {PURPOSE[fn]}. Until it does, none of `{fn}`'s checks earn points "
        "(a placeholder that returns zeros, ones, random values or its input passes some checks by accident)."
    )
