"""multi_head_attention: projections, heads, scaling, causality, and torch's own kernel."""

from __future__ import annotations

import math

import pytest
import torch

from grader.checks import helpers as h
from grader.checks.attention.conftest import B, C, H, PERMUTATION, T
from grader.sandbox.errors import StudentError

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


def test_matches_torch_scaled_dot_product_attention(student, reference):
    x, (wq, wk, wv, wo) = _inputs(610)
    out, _ = _run(student, x, (wq, wk, wv, wo), H)
    xd = x.double()
    q, k, v = (reference.split_heads(xd @ wi.double(), H) for wi in (wq, wk, wv))
    heads = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    want = reference.merge_heads(heads) @ wo.double()
    h.expect_close(out, want, "`multi_head_attention` vs torch's scaled_dot_product_attention on the same projections",
                   torch.float32, "Project, split, attend per head, merge, then apply w_o.")


def _heads(student, contract, y, n_heads):
    """The student's own split_heads where it runs (so a head-order bug is not judged here), else ``contract``
    (the reference's split, asked for whatever the student does, so a student kit has it recorded)."""
    try:
        return h.as_tensor(student.split_heads(y, n_heads), "`split_heads`")
    except (StudentError, AssertionError):
        return contract


def test_scores_scaled_by_sqrt_head_size(student, reference):
    """Each head's scores are divided by sqrt(head size) = sqrt(C // n_heads), as `attention` does for heads of that size.

    Compared with the student's own `attention` on the student's own heads, on the last query
    row (it sees every token, causal or not); w_q and w_k are symmetric, so x @ w and x @ w.T agree.
    Wrong values elsewhere are the output checks' business.
    """
    x, ws = _inputs(620)
    sym = lambda w: (w + w.mT) / 2  # noqa: E731
    ws = (sym(ws[0]), sym(ws[1]), ws[2], ws[3])
    _, w = _run(student, x, ws, H)
    contract = [reference.split_heads(x @ wi, H) for wi in ws[:3]]
    contract_weights = reference.attention(*(c.double() for c in contract))[1][..., -1, :]
    q, k, v = (_heads(student, c, x @ wi, H) for c, wi in zip(contract, ws[:3]))
    try:
        own = h.as_pair(student.attention(q, k, v), "`attention`")[1].double()[..., -1, :]
        h.expect_shape(own, contract_weights.shape, "`attention`'s weights, last row")  # (weights, out): not a yardstick
    except (StudentError, AssertionError):
        own = contract_weights
    last = w.double()[..., -1, :]
    keep = h.finite_entries(last, own)
    if not torch.allclose(last[keep], own[keep], rtol=1e-4, atol=1e-5):
        # The same scores divided by sqrt(C) instead: log-weights are scores / sqrt(C // H) up to a constant per row.
        by_c = torch.softmax(own.log() * math.sqrt((C // H) / C), -1)
        if torch.allclose(last[keep], by_c[keep], rtol=1e-4, atol=1e-5):
            raise AssertionError("`multi_head_attention` scales by sqrt(C) (the model width); scale by sqrt(C // n_heads), "
                                 "the head size (calling attention on the split heads does exactly that)")
        i = int((last[keep] - own[keep]).abs().argmax())
        raise AssertionError(
            f"the last row of `multi_head_attention`'s per-head weights (it sees every token) differs from your own "
            f"`attention` on the same heads ({last[keep][i].item():.4g} vs {own[keep][i].item():.4g}): each head's scores "
            "must be divided by sqrt(head size) = sqrt(C // n_heads) once, as `attention` does. Do not scale again, "
            "and do not scale by sqrt(C)."
        )
    h.inconclusive_if_nonfinite("the scaling", (last, "`multi_head_attention` weights (last row)", "x 2x5x12, 3 heads"),
                                (own, "`attention` weights (last row) on the same heads", "x 2x5x12, 3 heads"))


def test_future_tokens_do_not_change_past_outputs(student, reference):
    x, ws = _inputs(630)
    out, w = _run(student, x, ws, H)
    future = w[..., ~reference.causal_mask(T)]
    assert (future[torch.isfinite(future)] == 0).all(), (
        "per-head weights must be 0 above the diagonal: with causal=True no token may attend to a later one "
        "(pass causal on to attention, which masks the future with -inf before the softmax)"
    )
    sums = w.double().sum(-1)
    keep = torch.isfinite(sums)
    assert torch.allclose(sums[keep], torch.ones_like(sums[keep]), atol=1e-4), (
        "every row of every head's weights must sum to 1 (mask before the softmax, softmax over the last dim)"
    )
    x2 = x.clone()
    x2[:, 3:] = h.randn(B, T - 3, C, seed=631)
    out2, _ = _run(student, x2, ws, H)
    a, b = out[:, :3], out2[:, :3]
    keep = h.finite_entries(a, b)
    assert torch.allclose(a[keep], b[keep], atol=1e-5), (
        "changing tokens after position 2 changed outputs 0..2: `multi_head_attention` is not causal"
    )
    label = "x 2x5x12, 3 heads"
    h.inconclusive_if_nonfinite("causality", (w, "`multi_head_attention` weights", label),
                                (a, "`multi_head_attention` out[:, :3]", label),
                                (b, "`multi_head_attention` out[:, :3]", "the same x with tokens 3.. changed"))


def test_causal_false_is_permutation_equivariant(student):
    """Without the mask, permuting the tokens of x permutes out and every head's weights alike.

    Compared with the student's own result for the original order, so only a
    position-dependent term fails it, not a numerical bug elsewhere.
    """
    x, ws = _inputs(640)
    p = PERMUTATION
    out, w = _run(student, x, ws, H, causal=False)
    out_p, w_p = _run(student, x[:, p], ws, H, causal=False)
    again, w_again = _run(student, x, ws, H, causal=False, stream=1)  # its own run-to-run noise, if any
    label = "x 2x5x12, 3 heads"
    seen = ((out, "`multi_head_attention(..., causal=False)` out", label),
            (w, "`multi_head_attention(..., causal=False)` weights", label),
            (out_p, "`multi_head_attention(..., causal=False)` out", "the same tokens permuted"),
            (w_p, "`multi_head_attention(..., causal=False)` weights", "the same tokens permuted"))
    with h.naming_nonfinite(*seen):
        h.expect_permuted(out_p, out[:, p], "`multi_head_attention(..., causal=False)` out for permuted tokens",
                          h.noise_margin(out, again))
        h.expect_permuted(w_p, w[:, :, p][:, :, :, p],
                          "`multi_head_attention(..., causal=False)` weights for permuted tokens",
                          h.noise_margin(w, w_again))
    h.inconclusive_if_nonfinite("permutation equivariance", *seen)
