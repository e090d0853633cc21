"""The placeholder gate never fires on real work: a generated family of real but degenerate answers.

Each member is the reference's own answer put through a *reduction* that keeps it computed from the
inputs: one number for all (a 0-d mean), the last row only, a sum over the rows, the rows sorted, every
row replaced by the mean of the rows. Several of these do not change when the rows are reversed or
permuted (what the gate's other inputs once were), so they read as constants. A member is admitted by a
test that knows nothing of the gate: on two fresh draws of the exercise's inputs (two students' hidden
inputs, ``build_cases(salt)``) it gives two different answers. Every admitted member must pass the gate
(it is then judged on its properties by the other checks); the placeholders (zeros, ones, random values,
an input handed back) must still fail it.

The gate runs here in this process on a stand-in for the proxy (``InProcess``): the members are trusted
test code, and the gate's judgment is what is tested, not the sandbox (tests/test_corpus.py grades the
placeholders of the corpus through it).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from grader.checks import work
from grader.checks.attention.conftest import build_cases
from grader.checks.attention.test_work import test_output_is_not_a_placeholder as attention_gate
from grader.checks.attention_modules.conftest import CTX, D_MODEL, HEAD, N_HEADS, ModuleSpec
from grader.checks.attention_modules.test_work import test_forward_is_not_a_placeholder as module_gate
from grader.config import load_config
from grader.sandbox.proxy import CallResult
from grader.session.plugin import load_reference
from tests.corpus_cases import REFERENCE

Transform = Callable[[torch.Tensor], torch.Tensor]


def _rows(t: torch.Tensor) -> int:
    return -2 if t.dim() >= 2 else -1


REDUCTIONS: dict[str, Transform] = {
    "one_number": lambda t: t.mean(),
    "last_row": lambda t: t.narrow(_rows(t), t.shape[_rows(t)] - 1, 1),
    "sum_over_rows": lambda t: t.sum(_rows(t)),
    "rows_sorted": lambda t: t.sort(_rows(t)).values,
    "mean_row_everywhere": lambda t: t.mean(_rows(t), keepdim=True).expand_as(t),
}
PLACEHOLDERS: dict[str, Transform] = {
    "zeros": torch.zeros_like,
    "ones": torch.ones_like,
    "random": lambda t: torch.randn(t.shape, dtype=t.dtype) if t.is_floating_point() else torch.rand(t.shape) > 0.5,
}


def degenerate(value: Any, transform: Transform) -> Any:
    """``value`` with ``transform`` applied to each floating tensor in it (a bool mask is left as it is)."""
    if isinstance(value, tuple):
        return tuple(degenerate(v, transform) for v in value)
    return transform(value) if isinstance(value, torch.Tensor) and value.is_floating_point() else value


class InProcess:
    """A stand-in for ``StudentProxy``: runs trusted test code here, each stream from its own RNG state."""

    def __init__(self, reference: Any, transform: Transform, handed_back: bool = False) -> None:
        self.reference, self.transform, self.handed_back = reference, transform, handed_back

    def _answer(self, value: Any, first_input: Any) -> Any:
        if self.handed_back:
            return tuple(first_input for _ in value) if isinstance(value, tuple) else first_input
        return degenerate(value, self.transform)

    def call(self, name: str, *args: Any, stream: int = 0, **kwargs: Any) -> CallResult:
        torch.manual_seed(1000 + stream)
        return CallResult(self._answer(getattr(self.reference, name)(*args, **kwargs), args[0]))

    def probe(self, cls: str, *args: Any, stream: int = 0, params: dict | None = None, inputs: list | None = None,
              **_: Any) -> dict[str, Any]:
        torch.manual_seed(0)
        module = getattr(self.reference, cls)(*args).eval()
        module.load_state_dict(params or {}, strict=False)
        outputs = []
        for x in inputs or []:
            torch.manual_seed(1000 + stream)
            with torch.no_grad():
                outputs.append(self._answer(module(x), x))
        return {"outputs": outputs}


ATTENTION = load_reference(REFERENCE["attention"])
MODULES = load_reference(REFERENCE["attention-modules"])
CONFIG = {name: load_config().assignment(name) for name in REFERENCE}
CASES = build_cases()  # the visible inputs, as the judge builds them once
MODULE_ARGS = {"SelfAttentionHead": (D_MODEL, HEAD, CTX), "MultiHeadAttention": (D_MODEL, N_HEADS, CTX)}


def _changes_with_the_inputs(exercise: str, transform: Transform) -> bool:
    """The admission, blind to the gate: two fresh draws of the inputs (two students' own) give two answers."""
    if exercise in MODULE_ARGS:
        torch.manual_seed(0)
        module = getattr(MODULES, exercise)(*MODULE_ARGS[exercise]).eval()
        draws = [torch.randn(2, CTX, D_MODEL, generator=torch.Generator().manual_seed(s)) for s in (11, 12)]
        with torch.no_grad():
            answers = [degenerate(module(x), transform) for x in draws]
        return not work.same(answers[0], answers[1])
    first, second = build_cases(salt=11)[exercise], build_cases(salt=12)[exercise]
    for a, b in zip(first, second):
        ours = [degenerate(getattr(ATTENTION, exercise)(*c.args, **c.kwargs), transform) for c in (a, b)]
        outs = [o if isinstance(o, tuple) else (o,) for o in ours]
        if any(isinstance(x, torch.Tensor) and not work.same(x, y) for x, y in zip(*outs)):
            return True
    return False


def members() -> list[tuple[str, str, str]]:
    """(assignment, exercise, reduction) for every reduction of every exercise that still changes with its inputs."""
    found = []
    for assignment, config in sorted(CONFIG.items()):
        for ex in config.exercises:
            for name, transform in REDUCTIONS.items():
                if _changes_with_the_inputs(ex.name, transform):
                    found.append((assignment, ex.name, name))
    return found


FAMILY = members()


def _gate(assignment: str, exercise: str, student: InProcess) -> None:
    """Run the exercise's gate on ``student``; raises AssertionError where it finds a placeholder."""
    config = CONFIG[assignment]
    if assignment == "attention":
        attention_gate(student, ATTENTION, CASES, config, exercise)
    else:
        module_gate(student, ModuleSpec(exercise, MODULE_ARGS[exercise], MODULES), config)


def test_the_family_reaches_every_exercise_that_computes_floats():
    exercises = {e for _, e, _ in FAMILY}
    assert exercises == {ex.name for c in CONFIG.values() for ex in c.exercises} - {"causal_mask"}
    assert ("attention", "attention_entropy", "one_number") in FAMILY  # the quoted case
    assert ("attention", "apply_mask", "one_number") not in FAMILY  # -inf whatever the inputs: truly a constant
    assert {r for _, _, r in FAMILY} == set(REDUCTIONS)


@pytest.mark.parametrize("assignment, exercise", [(a, ex.name) for a, c in sorted(CONFIG.items()) for ex in c.exercises])
def test_the_reference_passes_every_gate(assignment, exercise):
    """``causal_mask`` among them: its output depends only on T, as the contract allows (the gate asks another T)."""
    _gate(assignment, exercise, InProcess(ATTENTION if assignment == "attention" else MODULES, lambda t: t))


@pytest.mark.parametrize("member", FAMILY, ids=["/".join(m) for m in FAMILY])
def test_real_but_degenerate_work_passes_the_gate(member):
    assignment, exercise, reduction = member
    _gate(assignment, exercise, InProcess(ATTENTION if assignment == "attention" else MODULES, REDUCTIONS[reduction]))


EXERCISES = sorted({(a, e) for a, e, _ in FAMILY})


@pytest.mark.parametrize("assignment, exercise", EXERCISES, ids=["/".join(x) for x in EXERCISES])
@pytest.mark.parametrize("placeholder", [*PLACEHOLDERS, "handed_back"])
def test_placeholders_still_fail_the_gate(assignment, exercise, placeholder):
    reference = ATTENTION if assignment == "attention" else MODULES
    student = InProcess(reference, PLACEHOLDERS.get(placeholder, torch.zeros_like), handed_back=placeholder == "handed_back")
    with pytest.raises(AssertionError, match="looks like a placeholder"):
        _gate(assignment, exercise, student)


def test_other_values_keep_the_inputs_kind():
    """Weights stay distributions, masked scores stay masked, and the values are not the rows reordered."""
    w = torch.softmax(torch.randn(2, 5, 7), -1)
    other = work.other_values(w)
    assert torch.allclose(other.sum(-1), torch.ones(2, 5)) and (other >= 0).all()
    assert not torch.equal(other.sort(-2).values, w.sort(-2).values)
    scores = torch.randn(5, 5).masked_fill(~torch.ones(5, 5, dtype=torch.bool).tril(), float("-inf"))
    assert torch.equal(torch.isinf(work.other_values(scores)), torch.isinf(scores))
    assert torch.equal(work.other_values(torch.ones(3, 3, dtype=torch.bool)), torch.ones(3, 3, dtype=torch.bool))
