"""The gate of every exercise: its output is no placeholder; it varies with its inputs the way the exercise needs.

Scoring credits an exercise's other checks only once this one passed
(``gate: true`` in assignments.yaml; the rule is in ``grader/checks/work.py``),
so a function that returns zeros, ones, random values or its own input earns
nothing from the checks that compare the student's code with itself.
"""

from __future__ import annotations

import pytest
import torch

from grader.checks import helpers as h
from grader.checks import plan, work
from grader.checks.attention.test_common import PACKAGE, inputs
from grader.sandbox.errors import StudentError
from grader.words import returned, should_give


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    plan.per_exercise(metafunc, PACKAGE)  # every exercise that lists the gate in assignments.yaml


def _other(case: h.Case) -> h.Case:
    """Other inputs of the same kind: other values in each floating tensor (``work.other_values``); where no
    argument is a tensor (a size, as `causal_mask(T)` takes), each whole number 2 larger: another shape."""
    if not any(isinstance(a, torch.Tensor) for a in case.args):
        return h.Case(case.fn, tuple(a + 2 if isinstance(a, int) and not isinstance(a, bool) else a for a in case.args),
                      case.kwargs, case.label)
    return h.Case(case.fn, tuple(work.other_values(a) for a in case.args), case.kwargs, case.label)


def _reshaped(case: h.Case) -> h.Case | None:
    """The inputs with one more batch of rows (``work.other_shape``); None where no argument has a batch dim
    (an int-only case's other inputs already have another shape)."""
    args = work.other_shape(case.args)
    return None if args is None else h.Case(case.fn, args, case.kwargs, case.label + ", another batch size")


def _reference_runs(reference, case: h.Case) -> list[tuple]:
    """The reference's outputs on the inputs, again, on other inputs and, where there is one, on inputs of
    another shape (``work.Runs``); kept with the case (``h.reference_answer``) when its two runs on the inputs
    are the same, as a reference that draws no random number gives: one that does is run anew each time, so
    its second run stays another RNG state's."""
    def runs() -> list[tuple]:
        asked = [c for c in (case, case, _other(case), _reshaped(case)) if c is not None]
        return [h.outputs_of(h.reference_f64(getattr(reference, case.fn), *c.args, **c.kwargs)) for c in asked]

    def repeatable(ref: list[tuple]) -> bool:
        return len(ref[0]) == len(ref[1]) and all(
            isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and work.same(a, b) for a, b in zip(ref[0], ref[1]))

    return h.reference_answer(reference, case, "gate", runs, keep=repeatable)


def _findings(student, ref: list[tuple], case: h.Case, names: tuple[str, ...]) -> list[str] | None:
    """Why each output of ``case`` does no work; [] when one does; None when the case cannot tell (the reference's
    own output holds one value or is an input, on T=1 and the like: ``work.telling``)."""
    other = _other(case)
    telling = [i for i in range(len(names)) if i < len(ref[0])
               and work.telling(work.Runs(*(r[i] for r in ref)), case.args)]
    if not telling:
        return None
    got = [h.outputs_of(student.call(case.fn, *c.args, stream=s, **c.kwargs).value)
           for c, s in ((case, 0), (case, 1), (other, 0))]  # the inputs, another RNG state, other inputs (``work.Runs``)
    reshaped: list[tuple] = []  # the student's outputs on inputs of another shape, asked once at most
    findings = []
    for i in telling:
        name = names[i]
        runs = [h.as_tensor(g[i] if i < len(g) else None, f"`{case.fn}` on {case.label} ({name})") for g in got]
        if len(ref) > 3 and work.same(runs[0], runs[2]):  # asked only where other values changed nothing
            reshaped = reshaped or [_on_another_shape(student, case)]
            runs.append(_tensor_at(reshaped[0], i))
        why = work.no_work(work.Runs(*runs), work.Runs(*(r[i] for r in ref)), case.args)
        if not why:
            return []
        findings.append(f"{returned(name, names)} {why}" if len(names) > 1 else f"its output {why}")
    return findings


def _on_another_shape(student, case: h.Case) -> tuple:
    """The student's outputs on inputs of another shape (``_reshaped``); () where that run raised."""
    reshaped = _reshaped(case)
    try:
        return h.outputs_of(student.call(case.fn, *reshaped.args, **reshaped.kwargs).value)
    except StudentError:
        return ()


def _tensor_at(outputs: tuple, i: int) -> torch.Tensor | None:
    """Output ``i`` where it is a tensor; None otherwise (fail closed: no evidence that it follows the shape)."""
    return outputs[i] if i < len(outputs) and isinstance(outputs[i], torch.Tensor) else None


def test_output_is_not_a_placeholder(student, reference, cases, assignment, fn):
    """Passes when the output does work on any one input the reference can tell by: the least any real attempt
    does, so a bug that breaks some shapes (no batch dims, 4-D) still leaves the exercise's other checks counting.
    Code that raises on every input is no placeholder (it returns nothing): the checks that need outputs say why."""
    first: tuple[h.Case, list[str]] | None = None
    errors: list[StudentError] = []  # raised, so returned nothing a placeholder could
    ex = plan.exercise(assignment, fn)
    # Every input's reference answers first, whatever the student's do: the release records them all, so the
    # student kit can answer every input this gate may ask (the reference itself passes on the first).
    asked = [(case, _reference_runs(reference, case)) for case in inputs(cases, fn)]
    for case, ref in asked:
        try:
            findings = _findings(student, ref, case, ex.returns)
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
        f"{should_give(ex.purpose)} Until it does, none of `{fn}`'s checks earn points "
        "(a placeholder that returns zeros, ones, random values or its input passes some checks by accident)."
    )
