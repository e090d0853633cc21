"""Seeded inputs for the `attention` checks.

Sizes are all distinct wherever the contract allows (B=2, H=3, T=5, S=7,
d=4, d_v=6, C=12) so a transposed or mixed-up axis changes a shape or a
value; each function also gets its legal edge cases: no batch dims, 4-D
inputs, B=1, H=1, T=1.
"""

from __future__ import annotations

from functools import lru_cache

import pytest
import torch

from grader.checks.helpers import Case, randn, seed, seed_examples

B, H, T, S, D, DV = 2, 3, 5, 7, 4, 6
C = H * D  # 12
# A fixed reordering of the T=5 tokens, no token left in place (the permutation-equivariance checks).
PERMUTATION = torch.tensor([3, 0, 4, 1, 2])
# The causal mask for T=5 (row t allows columns 0..t), written out as data: these inputs ship in the
# student kit, which must hold no exercise's answer (`grader release` scans it and refuses one).
CAUSAL_5 = torch.tensor([[1, 0, 0, 0, 0],
                         [1, 1, 0, 0, 0],
                         [1, 1, 1, 0, 0],
                         [1, 1, 1, 1, 0],
                         [1, 1, 1, 1, 1]], dtype=torch.bool)


def _qkv(*lead: int, t: int = T, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return randn(*lead, t, D, seed=seed), randn(*lead, t, D, seed=seed + 1), randn(*lead, t, DV, seed=seed + 2)


def _mha_weights(c: int, seed: int) -> tuple[torch.Tensor, ...]:
    return tuple(randn(c, c, seed=seed + i, scale=c**-0.5) for i in range(4))


def _weights(*lead: int, seed: int = 0) -> torch.Tensor:
    """Causal attention weights for T=5 with exact zeros above the diagonal: each row a random
    distribution over the positions up to it (positive values over CAUSAL_5, divided by their sum),
    made without the mask, masking or softmax the exercises ask for."""
    positive = randn(*lead, T, T, seed=seed, dtype=torch.float64).abs() + 0.1
    allowed = positive * CAUSAL_5
    return (allowed / allowed.sum(-1, keepdim=True)).to(torch.float32)


def build_cases(salt: int = 0) -> dict[str, list[Case]]:
    """Every function's cases. ``salt`` 0: the inputs every student gets (the visible checks', which the
    student kit replays); another salt: a student's own hidden inputs (``hidden_cases``), same shapes."""

    def s(n: int) -> int:
        return seed(n, salt)

    mask57 = torch.rand(T, S, generator=torch.Generator().manual_seed(s(5))) > 0.4
    mask57[:, 0] = True
    return {
        "attention_scores": [
            Case("attention_scores", (randn(T, D, seed=s(1)), randn(S, D, seed=s(2))), {}, "q 5x4, k 7x4 (no batch dims)"),
            Case("attention_scores", (randn(B, T, D, seed=s(3)), randn(B, S, D, seed=s(4))), {}, "q 2x5x4, k 2x7x4"),
            Case("attention_scores", (randn(B, H, T, D, seed=s(5)), randn(B, H, S, D, seed=s(6))), {}, "q 2x3x5x4, k 2x3x7x4"),
            Case("attention_scores", (randn(1, 1, D, seed=s(7)), randn(1, 1, D, seed=s(8))), {}, "T=1"),
        ],
        "scale_scores": [
            Case("scale_scores", (randn(B, H, T, S, seed=s(10), scale=4.0), 16), {}, "scores 2x3x5x7, head_size 16"),
            Case("scale_scores", (randn(T, S, seed=s(11)), 6), {}, "scores 5x7, head_size 6"),
        ],
        "causal_mask": [Case("causal_mask", (t,), {}, f"T={t}") for t in (1, 5, 7)],
        "apply_mask": [
            Case("apply_mask", (randn(B, H, T, S, seed=s(20)), mask57), {}, "scores 2x3x5x7, mask 5x7"),
            Case("apply_mask", (randn(T, T, seed=s(21)), CAUSAL_5.clone()), {}, "scores 5x5, causal mask"),
        ],
        "softmax": [
            Case("softmax", (randn(B, H, T, S, seed=s(30), scale=3.0),), {}, "scores 2x3x5x7"),
            Case("softmax", (randn(T, S, seed=s(31)),), {"dim": 0}, "scores 5x7 with dim=0"),
            Case("softmax", (randn(B, T, H, seed=s(32)),), {"dim": 1}, "scores 2x5x3 with dim=1"),
        ],
        "mix_values": [
            Case("mix_values", (_weights(B, H, seed=s(40)), randn(B, H, T, DV, seed=s(41))), {}, "weights 2x3x5x5, v 2x3x5x6"),
            Case("mix_values", (torch.softmax(randn(T, S, seed=s(42)), -1), randn(S, DV, seed=s(43))), {}, "weights 5x7, v 7x6"),
        ],
        "attention": [
            Case("attention", _qkv(B, H, seed=s(50)), {}, "q, k 2x3x5x4, v 2x3x5x6"),
            Case("attention", _qkv(seed=s(53)), {}, "q, k 5x4, v 5x6 (no batch dims)"),
            Case("attention", _qkv(B, seed=s(56)), {"scale": False}, "q, k 2x5x4, v 2x5x6, scale=False"),
            Case("attention", _qkv(B, seed=s(59)), {"causal": False}, "q, k 2x5x4, v 2x5x6, causal=False"),
            Case("attention", _qkv(1, t=1, seed=s(62)), {}, "T=1"),
        ],
        "bag_of_past": [
            Case("bag_of_past", (randn(B, T, DV, seed=s(70)),), {}, "v 2x5x6"),
            Case("bag_of_past", (randn(T, DV, seed=s(71)),), {}, "v 5x6 (no batch dims)"),
            Case("bag_of_past", (randn(B, H, T, DV, seed=s(72)),), {}, "v 2x3x5x6"),
            Case("bag_of_past", (randn(1, DV, seed=s(73)),), {}, "T=1"),
        ],
        "split_heads": [
            Case("split_heads", (randn(B, T, C, seed=s(80)), H), {}, "x 2x5x12, n_heads=3"),
            Case("split_heads", (randn(1, S, 8, seed=s(81)), 1), {}, "x 1x7x8, n_heads=1"),
        ],
        "merge_heads": [
            Case("merge_heads", (randn(B, H, T, D, seed=s(90)),), {}, "x 2x3x5x4"),
            Case("merge_heads", (randn(1, 1, S, 8, seed=s(91)),), {}, "x 1x1x7x8"),
        ],
        "multi_head_attention": [
            Case("multi_head_attention", (randn(B, T, C, seed=s(100)), *_mha_weights(C, s(101)), H), {}, "x 2x5x12, 3 heads"),
            Case("multi_head_attention", (randn(1, S, 8, seed=s(110)), *_mha_weights(8, s(111)), 1), {}, "x 1x7x8, 1 head"),
            Case("multi_head_attention", (randn(B, T, C, seed=s(120)), *_mha_weights(C, s(121)), H), {"causal": False}, "x 2x5x12, causal=False"),
        ],
        "attention_entropy": [
            Case("attention_entropy", (_weights(B, H, seed=s(130)),), {}, "causal weights 2x3x5x5 (zeros above the diagonal)"),
            Case("attention_entropy", (torch.softmax(randn(T, S, seed=s(131)), -1),), {}, "weights 5x7"),
        ],
    }


@pytest.fixture(scope="session")
def cases() -> dict[str, list[Case]]:
    return build_cases()


@lru_cache(maxsize=4)
def _cases_for(salt: int) -> dict[str, list[Case]]:
    return build_cases(salt)


@pytest.fixture
def hidden_cases(hidden_seed: int) -> dict[str, list[Case]]:
    """The cases of the hidden checks: this student's own inputs (``grader.seeds``), built once per student.
    Read only, like ``cases``."""
    return _cases_for(hidden_seed)


@pytest.fixture
def hidden_examples(request: pytest.FixtureRequest, hidden_seed: int) -> int:
    """A hidden hypothesis check draws this student's examples (``helpers.seed_examples``); the salt."""
    return seed_examples(request.function, hidden_seed)
