"""multi_head_attention: projections, heads, scaling, causality, and torch's own kernel.

PYTEST_DONT_REWRITE: messages are written for students; pytest's assertion
rewriting (active when the project's own tests grade in-process) would append its own.
"""

from __future__ import annotations

import math

import pytest
import torch

from grader.checks import helpers as h
from grader.checks.attention.conftest import B, C, H, PERMUTATION, T

pytestmark = pytest.mark.exercise("multi_head_attention")


def _run(student, x, ws, n_heads, **kw):
    out, w = h.as_pair(student.multi_head_attention(x, *ws, n_heads, **kw), "`multi_head_attention`")
    b, t, c = x.shape
    h.expect_shape(out, (b, t, c), f"`multi_head_attention` out for x {b}x{t}x{c}")
    h.expect_shape(w, (b, n_heads, t, t), f"`multi_head_attention` weights for {n_heads} heads",
                   "Return the per-head weights (B, n_heads, T, T).")
    return out, w


def _inputs(seed):
    return h.randn(B, T, C, seed=seed), tuple(h.randn(C, C, seed=seed + i + 1, scale=C**-0.5) for i in range(4))


def test_returns_out_and_per_head_weights(student):
    x, ws = _inputs(600)
    _run(student, x, ws, H)  # checks both shapes


def test_matches_torch_scaled_dot_product_attention(student):
    x, (wq, wk, wv, wo) = _inputs(610)
    out, _ = _run(student, x, (wq, wk, wv, wo), H)
    xd = x.double()
    split = lambda y: y.view(B, T, H, C // H).transpose(1, 2)  # noqa: E731
    heads = torch.nn.functional.scaled_dot_product_attention(
        split(xd @ wq.double()), split(xd @ wk.double()), split(xd @ wv.double()), is_causal=True)
    want = heads.transpose(1, 2).reshape(B, T, C) @ wo.double()
    h.expect_close(out, want, "`multi_head_attention` vs torch's scaled_dot_product_attention on the same projections",
                   torch.float32, "Project, split, attend per head, merge, then apply w_o.")


def test_scores_scaled_by_sqrt_head_size(student, reference):
    x, ws = _inputs(620)
    _, w = _run(student, x, ws, H)
    q = reference.split_heads(x.double() @ ws[0].double(), H)
    k = reference.split_heads(x.double() @ ws[1].double(), H)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    by_c = torch.softmax((q @ k.mT / math.sqrt(C)).masked_fill(~mask, float("-inf")), -1)
    if torch.allclose(w.double(), by_c, atol=1e-5):
        raise AssertionError("`multi_head_attention` scales by sqrt(C) (the model width); scale by sqrt(C // n_heads), the head size")
    want = torch.softmax((q @ k.mT / math.sqrt(C // H)).masked_fill(~mask, float("-inf")), -1)
    h.expect_close(w, want, "`multi_head_attention` weights", torch.float32)


def test_future_tokens_do_not_change_past_outputs(student):
    x, ws = _inputs(630)
    out, w = _run(student, x, ws, H)
    assert (w[..., torch.ones(T, T, dtype=torch.bool).triu(1)] == 0).all(), "per-head weights must be 0 above the diagonal"
    sums = w.double().sum(-1)
    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-4), "every row of every head's weights must sum to 1"
    x2 = x.clone()
    x2[:, 3:] = h.randn(B, T - 3, C, seed=631)
    out2, _ = _run(student, x2, ws, H)
    assert torch.allclose(out[:, :3], out2[:, :3], atol=1e-5), (
        "changing tokens after position 2 changed outputs 0..2: `multi_head_attention` is not causal"
    )


def test_causal_false_is_permutation_equivariant(student):
    """Without the mask, permuting the tokens of x permutes out and every head's weights alike.

    Compared with the student's own result for the original order, so only a
    position-dependent term fails it, not a numerical bug elsewhere.
    """
    x, ws = _inputs(640)
    p = PERMUTATION
    out, w = _run(student, x, ws, H, causal=False)
    out_p, w_p = _run(student, x[:, p], ws, H, causal=False)
    h.expect_permuted(out_p, out[:, p], "`multi_head_attention(..., causal=False)` out for permuted tokens")
    h.expect_permuted(w_p, w[:, :, p][:, :, :, p],
                      "`multi_head_attention(..., causal=False)` weights for permuted tokens")
