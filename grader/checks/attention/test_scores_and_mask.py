"""Scores, scaling and the causal mask, property by property."""

from __future__ import annotations


import pytest
import torch

from grader.checks import helpers as h
from grader.sandbox.errors import StudentError
from grader.checks.attention.conftest import B, D, S, T


@pytest.mark.exercise("attention_scores")
def test_scores_are_raw_dot_products(student, reference):
    q, k = h.randn(B, T, D, seed=201), h.randn(B, S, D, seed=202)
    try:
        got = h.as_tensor(student.attention_scores(q, k), "`attention_scores`")
    except StudentError as err:
        raise AssertionError(f"{err} — for batched q 2x5x4 and k 2x7x4, transpose only the last two dims of k "
                             "(k.transpose(-2, -1) or k.mT); k.T reverses every dim") from None
    h.expect_shape(got, (B, T, S), "`attention_scores` for q 2x5x4 and k 2x7x4",
                   "Transpose only the last two dims of k (k.transpose(-2, -1)); k.T reverses every dim.")
    raw = reference.attention_scores(q.double(), k.double())
    if torch.allclose(got.double(), reference.scale_scores(raw, D), rtol=1e-4, atol=1e-5):
        raise AssertionError("`attention_scores` already divides by sqrt(d); leave scaling to `scale_scores`")
    h.expect_close(got, raw, "`attention_scores`", torch.float32)


@pytest.mark.exercise("scale_scores")
def test_scale_divides_by_sqrt_head_size(student):
    scores = h.randn(T, S, seed=210, scale=5.0)
    got = h.as_tensor(student.scale_scores(scores, 16), "`scale_scores`")
    h.expect_shape(got, scores.shape, "`scale_scores` on scores 5x7")
    for wrong, hint in ((scores / 16, "divided by head_size; divide by sqrt(head_size)"),
                        (scores * 4, "multiplied; divide by sqrt(head_size)"),
                        (scores, "returned the scores unscaled (4 = sqrt(16) times too large), so the weights "
                                 "would be those of unscaled scores; divide by sqrt(head_size)")):
        if torch.allclose(got, wrong, rtol=1e-5, atol=1e-6):
            raise AssertionError(f"`scale_scores(scores, 16)` {hint} (expected scores / 4)")
    h.expect_close(got, scores.double() / 4, "`scale_scores(scores, 16)`", torch.float32)


@pytest.mark.exercise("causal_mask")
@pytest.mark.parametrize("t", [1, 5, 7])
def test_mask_is_bool_lower_triangular_with_diagonal(student, reference, t):
    got = h.as_tensor(student.causal_mask(t), "`causal_mask`")
    h.expect_shape(got, (t, t), f"`causal_mask({t})`")
    assert got.dtype == torch.bool, f"`causal_mask({t})` has dtype {got.dtype}; it must be a bool tensor"
    want = reference.causal_mask(t)
    if t > 1 and torch.equal(got, want.T):
        raise AssertionError(f"`causal_mask({t})` is upper-triangular: row t must allow columns 0..t (tril, not triu)")
    if torch.equal(got, want & ~torch.eye(t, dtype=torch.bool)):
        raise AssertionError(f"`causal_mask({t})` masks the diagonal: a token must be allowed to attend to itself")
    bad = torch.nonzero(got != want)
    assert not len(bad), (
        f"`causal_mask({t})` is wrong at row {int(bad[0][0])}, column {int(bad[0][1])}: "
        "True exactly where column <= row"
    )


@pytest.mark.exercise("causal_mask")
def test_mask_is_built_on_the_requested_device(student):
    got = h.as_tensor(student.causal_mask(6, device="meta"), "`causal_mask(6, device=...)`")
    assert got.device.type == "meta", (
        f"`causal_mask(6, device=d)` returned a mask on {got.device}; build it on `device` "
        "(a mask made on the CPU breaks attention on a GPU)"
    )
    cpu = h.as_tensor(student.causal_mask(6), "`causal_mask(6)`")
    assert cpu.device.type == "cpu", f"`causal_mask(6)` with device=None must be on the CPU, got {cpu.device}"


@pytest.mark.exercise("apply_mask")
def test_masked_positions_become_minus_inf(student, cases):
    scores, mask = cases["apply_mask"][0].args
    got = h.as_tensor(student.apply_mask(scores, mask), "`apply_mask`")
    h.expect_shape(got, scores.shape, "`apply_mask` (scores 2x3x5x7, mask 5x7)", "The mask broadcasts to the scores' shape.")
    hidden = got[..., ~mask]
    if (hidden == 0).all():
        raise AssertionError("`apply_mask` writes 0 where the mask is False; it must write -inf, "
                             "because exp(0) = 1 still gives the future a weight")
    assert torch.isinf(hidden).all() and (hidden < 0).all(), (
        "`apply_mask` must put -inf at every position where the mask is False "
        f"(found {hidden[~(torch.isinf(hidden) & (hidden < 0))][:3].tolist()})"
    )
    kept = got[..., mask]
    h.expect_finite(kept, "`apply_mask` output where the mask is True", "scores 2x3x5x7, mask 5x7",
                    expected=scores[..., mask])
    assert torch.equal(kept, scores[..., mask]), "`apply_mask` changed scores where the mask is True; keep them as they are"
