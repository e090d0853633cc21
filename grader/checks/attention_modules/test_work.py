"""The gate of each module: forward's output is no placeholder; it varies with its input the way the module needs.

Scoring credits a module's other checks (structure included) only once this one
passed (``gate: true`` in assignments.yaml; the rule is in ``grader/checks/work.py``):
the right submodules around a forward that returns ``0 * self.proj(x)``, random
values or ``x`` itself earn nothing.
"""

from __future__ import annotations

import torch

from grader.checks import helpers as h
from grader.checks import plan, work
from grader.checks.attention_modules.conftest import CTX, x_of
from grader.sandbox.errors import StudentError
from grader.words import should_give

def test_forward_is_not_a_placeholder(student, spec, assignment):
    """A forward that raises returns nothing a placeholder could: the checks that need outputs say why."""
    x = x_of(CTX, seed=50)  # the full context: a forward that only handles T = context_length still counts
    other = work.other_values(x)
    (reshaped,) = work.other_shape([x])  # one more batch: T stays within the context (``work.other_shape``)
    try:
        # the input, other inputs and another batch size under the check's RNG state, then the input under
        # another (``work.Runs``)
        first = spec.probe(student, params=spec.params(), inputs=[x, other, reshaped]).get("outputs") or []
        again = spec.probe(student, params=spec.params(), inputs=[x], stream=1).get("outputs") or []
    except StudentError:
        return
    what = f"`{spec.cls}` forward on x {tuple(x.shape)}"
    assert len(first) == 3 and len(again) == 1, f"{what} did not return an output for every input"
    outs = [first[0], again[0], first[1]]
    runs = work.Runs(*(h.as_tensor(o, what) for o in outs),
                     reshaped=first[2] if isinstance(first[2], torch.Tensor) else None)  # none: no evidence (fail closed)
    expected = work.Runs(spec.expected(x), spec.expected(x), spec.expected(other), spec.expected(reshaped))
    inputs = [x, x[..., : spec.out_size]]
    assert work.telling(expected, inputs), f"{what}: this input cannot show a placeholder (a grader bug: report it)"
    why = work.no_work(runs, expected, inputs)
    assert not why, (
        f"`{spec.cls}` looks like a placeholder, not computed from its input: {what}, its output {why}. "
        f"{should_give(plan.exercise(assignment, spec.cls).purpose)} "
        f"Until it does, none of `{spec.cls}`'s checks earn points, "
        "its structure included (the right submodules around a forward that returns a constant, random "
        "values or x itself pass some checks by accident)."
    )
