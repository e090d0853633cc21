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
    # one value in every entry stays a placeholder even where the value and the shape follow the input's shape
    "batch_size_everywhere": lambda t: torch.full(t.shape, float(t.shape[0] if t.dim() else 1), dtype=t.dtype),
}


def degenerate(value: Any, transform: Transform) -> Any:
    """``value`` with ``transform`` applied to each floating tensor in it (a bool mask is left as it is)."""
    if isinstance(value, tuple):
        return tuple(degenerate(v, transform) for v in value)
    return transform(value) if isinstance(value, torch.Tensor) and value.is_floating_point() else value


class InProcess:
    """A stand-in for ``StudentProxy``: runs trusted test code here, each stream from its own RNG state."""

    def __init__(self, reference: Any, transform: Transform, handed_back: bool = False, frozen: bool = False) -> None:
        self.reference, self.transform, self.handed_back, self.frozen = reference, transform, handed_back, frozen
        self.kept: Any = None  # ``frozen``: the first answer, given again to every later call

    def _answer(self, value: Any, first_input: Any) -> Any:
        if self.handed_back:
            return tuple(first_input for _ in value) if isinstance(value, tuple) else first_input
        if self.frozen:
            self.kept = value if self.kept is None else self.kept
            return self.kept
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


# Answers that depend only on the input's shape: the same for every value, yet another shape gives another
# answer. Other values alone cannot tell them from constants; the gate's shape run (``work.other_shape``) can.
def _uniform_causal(t: torch.Tensor) -> torch.Tensor:
    """Uniform causal weights shaped like ``t`` (what bag_of_past's weights are): row r is 1/(r+1) on 0..r."""
    if t.dim() < 2:
        return torch.arange(1, t.numel() + 1, dtype=t.dtype).reshape(t.shape) / t.numel()
    rows, cols = t.shape[-2], t.shape[-1]
    tril = torch.ones(rows, cols, dtype=t.dtype).tril()
    return (tril / tril.sum(-1, keepdim=True).clamp_min(1)).expand(t.shape).contiguous()


SHAPE_ONLY: dict[str, Transform] = {
    "uniform_causal": _uniform_causal,
    "positions": lambda t: torch.arange(t.numel(), dtype=t.dtype).reshape(t.shape),
}


def _with_more_batch(args: tuple) -> tuple:
    """The admission's own shape change, not the gate's: every tensor of 3+ dims repeated once along dim 0."""
    return tuple(torch.cat([a, a]) if isinstance(a, torch.Tensor) and a.dim() >= 3 else a for a in args)


def _follows_only_the_shape(exercise: str, transform: Transform) -> bool:
    """The admission, blind to the gate: on some input the answer holds two values, is the same on a fresh
    draw of values of the same shape, and is another answer when the batch is repeated."""
    if exercise in MODULE_ARGS:
        torch.manual_seed(0)
        module = getattr(MODULES, exercise)(*MODULE_ARGS[exercise]).eval()
        first, fresh = (torch.randn(2, CTX, D_MODEL, generator=torch.Generator().manual_seed(s)) for s in (11, 12))
        with torch.no_grad():
            ours = [transform(module(x)) for x in (first, fresh, torch.cat([first, first]))]
        return work.varies(ours[0]) and work.same(ours[0], ours[1]) and not work.same(ours[0], ours[2])
    for a, b in zip(build_cases(salt=11)[exercise], build_cases(salt=12)[exercise]):
        outs = [degenerate(getattr(ATTENTION, exercise)(*args, **a.kwargs), transform)
                for args in (a.args, b.args, _with_more_batch(a.args))]
        outs = [o if isinstance(o, tuple) else (o,) for o in outs]
        for first, fresh, more in zip(*outs):
            if (isinstance(first, torch.Tensor) and first.is_floating_point() and work.varies(first)
                    and work.same(first, fresh) and not work.same(first, more)):
                return True
    return False


SHAPE_FAMILY = [(a, ex.name, name) for a, c in sorted(CONFIG.items()) for ex in c.exercises
                for name, transform in SHAPE_ONLY.items() if _follows_only_the_shape(ex.name, transform)]


def test_the_shape_family_reaches_every_exercise_with_a_batch():
    assert {e for _, e, _ in SHAPE_FAMILY} == {ex.name for c in CONFIG.values() for ex in c.exercises} - {"causal_mask"}
    assert {r for _, _, r in SHAPE_FAMILY} == set(SHAPE_ONLY)


@pytest.mark.parametrize("member", SHAPE_FAMILY, ids=["/".join(m) for m in SHAPE_FAMILY])
def test_work_that_follows_only_the_shape_passes_the_gate(member):
    """Other values leave these answers unchanged; the gate's run on another batch size shows they follow
    their input, so they are judged on their properties, not called placeholders."""
    assignment, exercise, reduction = member
    _gate(assignment, exercise, InProcess(ATTENTION if assignment == "attention" else MODULES, SHAPE_ONLY[reduction]))


ALL_EXERCISES = [(a, ex.name) for a, c in sorted(CONFIG.items()) for ex in c.exercises]


@pytest.mark.parametrize("assignment, exercise", ALL_EXERCISES, ids=["/".join(x) for x in ALL_EXERCISES])
def test_a_frozen_answer_of_one_shape_fails_the_gate(assignment, exercise):
    """A placeholder that a shape change exposes: the first answer it gave (the reference's own, so of the
    right shape, varied and right on that one input), given again whatever the input's values or shape."""
    reference = ATTENTION if assignment == "attention" else MODULES
    student = InProcess(reference, lambda t: t, frozen=True)
    with pytest.raises(AssertionError, match="looks like a placeholder") as failed:
        _gate(assignment, exercise, student)
    assert "the same for" in str(failed.value)


@pytest.mark.parametrize("batch, heads", [(2, 1), (2, 3), (4, 2)])
def test_other_shape_adds_a_batch_and_keeps_the_contract(batch, heads):
    """The batch grows; T, C and every 2-D mask or weight matrix stay, so the inputs stay within the contract
    (q, k, v share T; C % n_heads == 0; a module's T <= context_length), and the first rows are the inputs."""
    x = torch.randn(batch, heads, 5, 4)
    q1 = torch.randn(1, heads, 5, 4)  # broadcasts over the batch: stays
    mask = torch.ones(5, 5, dtype=torch.bool).tril()
    got = work.other_shape((x, q1, mask, heads))
    assert got is not None
    assert got[0].shape == (2 * batch, heads, 5, 4) and torch.equal(got[0][:batch], x)
    assert torch.equal(got[0][batch:], work.other_values(x))  # the new rows hold other values
    assert got[1] is q1 and got[2] is mask and got[3] == heads
    assert work.other_shape((mask, torch.randn(5, 4), heads)) is None  # no batch dim: nothing to grow
    one, also_one = work.other_shape((q1, q1.clone()))  # one batch each: both grow, so they keep one batch size
    assert one.shape[0] == also_one.shape[0] == 2


@pytest.mark.parametrize("rows", [2, 3, 6])
def test_a_shape_only_contract_needs_an_output_that_follows_the_shape(rows):
    """Where the reference itself depends only on shapes (other values change nothing), the work asked is to
    follow the shape: a fixed output is a placeholder, one that follows is not."""
    pattern = torch.ones(rows, rows).tril()
    grown = torch.ones(rows + 1, rows + 1).tril()
    reference = work.Runs(pattern, pattern, pattern, reshaped=grown)
    assert work.telling(reference, [torch.randn(rows, rows)])
    fixed = work.Runs(pattern, pattern, pattern, reshaped=pattern)
    assert "another shape" in work.no_work(fixed, reference, [])
    assert work.no_work(work.Runs(pattern, pattern, pattern, reshaped=grown), reference, []) == ""
    unasked = work.Runs(pattern, pattern, pattern)  # the run on another shape raised: no evidence, fail closed
    assert work.no_work(unasked, reference, [])
