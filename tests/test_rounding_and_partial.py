"""Two rules that keep a true name from being missed: rounding is not a mistake (``grader/diagnosis/noise.py``),
and a mistake that fits wherever both codes run is named as such (``naming.WhereItRuns``).

Families: the same formula written in another order (heads in a loop, the softmax by hand, sums in another
order) on inputs that make float32 rounding large; real differences (a scale off by 1 % or more, another
formula) never pass for rounding; a mistake written with ``reshape`` where the catalogue's uses ``view``, or an
einsum that needs square weights, named with "wherever both run"; a correct file never named either way.
"""

from __future__ import annotations

import pytest
import torch

from grader.diagnosis import noise
from grader.diagnosis.answers import Answer
from tests.conftest import ROOT

REFERENCE = (ROOT / "solutions" / "attention.py").read_text()


def _attention_batched(q, k):
    return torch.softmax(q @ k.transpose(-2, -1), dim=-1)


def _attention_looped(q, k):
    rows = [torch.softmax(q[..., t:t + 1, :] @ k.transpose(-2, -1), dim=-1) for t in range(q.shape[-2])]
    return torch.cat(rows, dim=-2)


def _attention_by_hand(q, k):
    s = (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(-1)
    e = torch.exp(s - s.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


WRITTEN = [_attention_looped, _attention_by_hand]


def _answers(fn, q, k):
    return Answer(outputs=(fn(q, k),)), Answer(outputs=(_attention_batched(q, k),)), \
        Answer(outputs=(_attention_batched(q.double(), k.double()),))


@pytest.mark.parametrize("written", WRITTEN, ids=lambda f: f.__name__)
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("size", [1.0, 10.0, 40.0])
def test_the_same_formula_written_another_way_is_within_rounding(written, seed, size):
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(2, 5, 8, generator=g) * size for _ in range(2))
    student, variant, wide = _answers(written, q, k)
    assert noise.near(student, variant)
    assert noise.within_rounding(student, variant, wide)


@pytest.mark.parametrize("factor", [1.01, 1.05, 0.5])
@pytest.mark.parametrize("seed", range(4))
def test_a_real_difference_is_never_rounding(factor, seed):
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(2, 5, 8, generator=g) * 3 for _ in range(2))
    student = Answer(outputs=(_attention_batched(q * factor, k),))
    variant, wide = Answer(outputs=(_attention_batched(q, k),)), Answer(outputs=(_attention_batched(q.double(), k.double()),))
    assert not (noise.near(student, variant) and noise.within_rounding(student, variant, wide))


def test_only_a_plain_call_with_floats_is_replayed_wide():
    x = torch.randn(3, 4)
    assert noise.promoted({"op": "call", "args": [x, 2], "kwargs": {}})["args"][0].dtype == torch.float64
    assert noise.promoted({"op": "call", "args": [x], "kwargs": {}, "vjp": {"wrt": [0]}}) is None
    assert noise.promoted({"op": "probe", "args": [], "inputs": [x]}) is None
    assert noise.promoted({"op": "call", "args": [5, torch.ones(2, dtype=torch.bool)], "kwargs": {}}) is None


@pytest.mark.slow
@pytest.mark.parametrize("flag_test", ["if not causal:", "if causal is False:", "if causal == False:  # noqa: E712"])
def test_a_mistake_in_code_that_rounds_otherwise_is_named(grade, flag_test):
    """A causal flag read backwards, in an attention that loops over the queries (other rounding than the
    reference's batched matmul): named, not lost to rounding on the saturating requests."""
    student = REFERENCE + f'''

def attention(q, k, v, causal=True, scale=True):
    rows = []
    T, d = q.shape[-2], q.shape[-1]
    for t in range(T):
        s = q[..., t:t + 1, :] @ k.transpose(-2, -1)
        if scale:
            s = s / math.sqrt(d)
        {flag_test}
            s = s.masked_fill(torch.arange(T, device=q.device) > t, float("-inf"))
        rows.append(torch.softmax(s, dim=-1))
    weights = torch.cat(rows, dim=-2)
    return weights @ v, weights
'''
    card = grade(student)
    named = {d.exercise: d.text for d in card.diagnoses if d.id != "unnamed"}
    assert "attention" in named and "`causal` read the other way round" in named["attention"], card.diagnoses


PARTIAL = {
    # a catalogued or generated mistake written another way, which raises on some legal inputs where it does not
    "split_heads reshape": ("split_heads", "def split_heads(x, n_heads):\n    B, T, C = x.shape\n"
                            "    if C % n_heads:\n        raise ValueError('C % n_heads')\n"
                            "    return x.reshape(B, n_heads, T, C // n_heads)\n"),
    "mix_values square einsum": ("mix_values", "def mix_values(weights, v):\n"
                                 "    return torch.einsum('...ts,...td->...sd', weights, v)\n"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", PARTIAL)
def test_a_mistake_that_fits_wherever_both_run_is_named_so(grade, case):
    exercise, definition = PARTIAL[case]
    card = grade(f"{REFERENCE}\n\n{definition}")
    said = {d.exercise: d.text for d in card.diagnoses}
    assert exercise in said and said[exercise].startswith("Likely mistake: wherever both run, your results match"), said
    assert "raises an error the other does not raise, or another one" in said[exercise]


@pytest.mark.slow
@pytest.mark.parametrize("definition", [
    "def split_heads(x, n_heads):\n    B, T, C = x.shape\n    if C % n_heads:\n        raise ValueError('no')\n"
    "    return x.reshape(B, T, n_heads, C // n_heads).permute(0, 2, 1, 3)\n",
    "def mix_values(weights, v):\n    return torch.einsum('...ts,...sd->...td', weights, v)\n",
    "def mix_values(weights, v):\n    return torch.matmul(weights, v)\n",
])
def test_a_correct_file_written_another_way_is_named_neither_way(grade, definition):
    card = grade(f"{REFERENCE}\n\n{definition}")
    assert card.score == card.max_score and not card.diagnoses, card.diagnoses
