"""Single-head attention as the lesson builds it: weights, causality, scaling, the baseline.

PYTEST_DONT_REWRITE: messages are written for students; pytest's assertion
rewriting (active when the project's own tests grade in-process) would append its own.
"""

from __future__ import annotations

import pytest
import torch

from grader.checks import helpers as h
from grader.checks.attention.conftest import B, D, DV, H, PERMUTATION, T


def _attend(student, q, k, v, **kw):
    out, w = h.as_pair(student.attention(q, k, v, **kw), "`attention`")
    lead = tuple(q.shape[:-1])
    h.expect_shape(out, lead + (v.shape[-1],), f"`attention` out for q {h.shape_text(q)} and v {h.shape_text(v)}")
    h.expect_shape(w, lead + (k.shape[-2],), f"`attention` weights for q {h.shape_text(q)} and k {h.shape_text(k)}")
    return out, w


# The chapter's worked example, small enough to check by hand (also in the stub's docstring).
TOKENS = ("fluffy", "blue", "cat")
WORKED_Q = [[0.0, 1.0], [0.0, 1.0], [2.0, 0.0]]
WORKED_K = [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
WORKED_V = [[3.0, 0.0], [0.0, 3.0], [1.0, 1.0]]
WORKED_WEIGHTS = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.446, 0.446, 0.108]]
WORKED_OUT = [[3.0, 0.0], [1.5, 1.5], [1.446, 1.446]]


def _entropy(w):
    """Mean entropy (nats) of rows 1.. computed here in the judge; row 0 always has one choice."""
    p = w[..., 1:, :].double()
    return -(p * p.clamp_min(1e-300).log()).sum(-1).mean().item()


@pytest.mark.exercise("attention")
def test_weights_rows_sum_to_one(student, cases):
    q, k, v = cases["attention"][0].args
    _, w = _attend(student, q, k, v)
    h.expect_shape(w, (B, H, T, T), "`attention` weights for q, k 2x3x5x4")
    sums = w.double().sum(-1)
    bad = torch.nonzero((sums - 1).abs() > 1e-4)
    assert not len(bad), (
        f"row {int(bad[0][-1])} of the attention weights sums to {sums[tuple(bad[0])].item():.3g}; each row must sum to 1. "
        "Mask before the softmax (scale, then mask, then softmax) and take the softmax over the last dimension."
    )


@pytest.mark.exercise("attention")
def test_weights_lower_triangular(student, cases):
    q, k, v = cases["attention"][0].args
    _, w = _attend(student, q, k, v)
    upper = torch.ones(T, T, dtype=torch.bool).triu(1)
    future = w[..., upper]
    assert (future == 0).all(), (
        f"with causal=True, token t gives weight {future.abs().max().item():.3g} to a later token; "
        "the upper triangle of the weights must be exactly 0 (the future is masked with -inf before softmax)"
    )
    diag = torch.diagonal(w, dim1=-2, dim2=-1)
    assert (diag > 0).all(), "a token gives its own position weight 0; the diagonal must stay allowed"


@pytest.mark.exercise("attention")
def test_future_tokens_do_not_change_past_outputs(student):
    q, k, v = h.randn(B, T, D, seed=401), h.randn(B, T, D, seed=402), h.randn(B, T, DV, seed=403)
    out, _ = _attend(student, q, k, v)
    for t in (0, 2):
        q2, k2, v2 = q.clone(), k.clone(), v.clone()
        for x, seed in ((q2, 404), (k2, 405), (v2, 406)):
            x[:, t + 1:] = h.randn(B, T - t - 1, x.shape[-1], seed=seed + t)
        out2, _ = _attend(student, q2, k2, v2)
        assert torch.allclose(out[:, : t + 1], out2[:, : t + 1], atol=1e-6), (
            f"changing tokens after position {t} changed the output at position {t}: "
            "attention is not causal. Mask the scores of future tokens with -inf before the softmax."
        )


@pytest.mark.exercise("attention")
def test_scale_false_does_not_divide(student, reference):
    q, k, v = h.randn(B, T, D, seed=410, scale=2.0), h.randn(B, T, D, seed=411), h.randn(B, T, DV, seed=412)
    out, w = _attend(student, q, k, v, scale=False)
    _, want = reference.attention(q.double(), k.double(), v.double(), scale=False)
    _, scaled = reference.attention(q.double(), k.double(), v.double(), scale=True)
    if torch.allclose(w.double(), scaled, atol=1e-5) and not torch.allclose(w.double(), want, atol=1e-5):
        raise AssertionError("`attention(..., scale=False)` still divides the scores by sqrt(d); honour the `scale` flag")
    h.expect_close(w, want, "`attention(..., scale=False)` weights", torch.float32)


@pytest.mark.exercise("attention")
def test_causal_false_uses_no_mask(student, reference):
    q, k, v = h.randn(T, D, seed=420), h.randn(T, D, seed=421), h.randn(T, DV, seed=422)
    _, w = _attend(student, q, k, v, causal=False)
    assert (w[torch.ones(T, T, dtype=torch.bool).triu(1)] > 0).all(), (
        "`attention(..., causal=False)` still masks the future; without the mask every token sees every token"
    )
    h.expect_close(w, reference.attention(q.double(), k.double(), v.double(), causal=False)[1],
                   "`attention(..., causal=False)` weights", torch.float32)


@pytest.mark.exercise("attention")
def test_matches_torch_scaled_dot_product_attention(student):
    q, k, v = h.randn(B, H, T, D, seed=430), h.randn(B, H, T, D, seed=431), h.randn(B, H, T, DV, seed=432)
    out, _ = _attend(student, q, k, v)
    want = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    h.expect_close(out, want, "`attention` output vs torch's scaled_dot_product_attention(is_causal=True)", torch.float32)


@pytest.mark.exercise("attention")
def test_zero_scores_give_mean_of_past(student):
    """The lesson's baseline: zero queries make every score 0; mask, softmax and mix then average the past."""
    v = h.randn(B, T, DV, seed=440)
    out, _ = _attend(student, torch.zeros(B, T, D), h.randn(B, T, D, seed=441), v)
    want = v.double().cumsum(-2) / torch.arange(1, T + 1, dtype=torch.float64)[:, None]
    h.expect_close(out, want, "`attention` with zero queries (all scores 0)", torch.float32,
                   "Row t should be the mean of v[:t+1]: each of the first t+1 tokens gets weight 1/(t+1).")


@pytest.mark.exercise("attention")
def test_unscaled_weights_saturate(student, reference):
    """Without scaling, head_size 256 makes the softmax nearly one-hot; with it, weights stay diffuse."""
    d, t = 256, 12
    q, k, v = (h.randn(4, t, d, seed=450 + i) for i in range(3))
    _, w_raw = _attend(student, q, k, v, scale=False)
    _, w_scaled = _attend(student, q, k, v, scale=True)
    _, ref_raw = reference.attention(q.double(), k.double(), v.double(), scale=False)
    ref_peak = ref_raw[:, 1:].amax(-1).mean().item()
    peak = w_raw[:, 1:].double().amax(-1).mean().item()
    assert peak > 0.9 and abs(peak - ref_peak) < 0.02, (
        f"without scaling at head_size 256 the weights should collapse toward one-hot (mean row max {ref_peak:.3f}); "
        f"yours have mean row max {peak:.3f}. Does `scale=False` really skip the division?"
    )
    ent_raw, ent_scaled = _entropy(w_raw), _entropy(w_scaled)
    assert ent_raw < 0.5 * ent_scaled, (
        f"mean entropy without scaling ({ent_raw:.3f} nats) should fall far below the scaled case ({ent_scaled:.3f}); "
        "scaling by sqrt(head_size) is what keeps the weights diffuse"
    )
    scaled_peak = w_scaled[:, 1:].double().amax(-1).mean().item()
    assert scaled_peak < 0.8, f"with scaling the weights should stay diffuse, but the mean row max is {scaled_peak:.3f}"


@pytest.mark.exercise("bag_of_past")
def test_row_t_is_mean_of_first_t_plus_1(student):
    v = h.randn(B, T, DV, seed=460)
    got = h.as_tensor(student.bag_of_past(v), "`bag_of_past`")
    h.expect_shape(got, v.shape, "`bag_of_past` on v 2x5x6")
    want = v.double().cumsum(-2) / torch.arange(1, T + 1, dtype=torch.float64)[:, None]
    if torch.allclose(got.double(), v.double().cumsum(-2) / T, atol=1e-5):
        raise AssertionError("`bag_of_past` divides every row by T; row t averages t+1 tokens, so divide by t+1")
    h.expect_close(got, want, "`bag_of_past`", torch.float32, "out[t] must be the mean of v[:t+1] (a running mean over the sequence dim)")


@pytest.mark.exercise("mix_values")
def test_mix_is_weighted_sum_of_values(student):
    w = torch.softmax(h.randn(T, 7, seed=470), -1)
    v = h.randn(7, DV, seed=471)
    got = h.as_tensor(student.mix_values(w, v), "`mix_values`")
    h.expect_shape(got, (T, DV), "`mix_values` for weights 5x7 and v 7x6", "out = weights @ v: (T, S) @ (S, d_v) -> (T, d_v)")
    h.expect_close(got, w.double() @ v.double(), "`mix_values`", torch.float32)


@pytest.mark.exercise("attention")
def test_worked_example_fluffy_blue_cat(student):
    q, k, v = (torch.tensor(x) for x in (WORKED_Q, WORKED_K, WORKED_V))
    out, w = _attend(student, q, k, v)
    for t, token in enumerate(TOKENS):
        got = [round(x, 3) for x in w[t].double().tolist()]
        assert torch.allclose(w[t].double(), torch.tensor(WORKED_WEIGHTS[t], dtype=torch.float64), atol=1e-3), (
            f"on the chapter's worked example (fluffy, blue, cat; d=2, causal, scaled by sqrt(2)) {token} should "
            f"attend {WORKED_WEIGHTS[t]} but `attention` gives {got}. Work row {t} by hand: dot products q·k, "
            "divide by sqrt(2), set the future to -inf, then softmax."
        )
    for t, token in enumerate(TOKENS):
        got = [round(x, 3) for x in out[t].double().tolist()]
        assert torch.allclose(out[t].double(), torch.tensor(WORKED_OUT[t], dtype=torch.float64), atol=1e-3), (
            f"on the chapter's worked example the new vector of {token} should be {WORKED_OUT[t]} but `attention` "
            f"gives {got}: the weights are right, so mix the values with them (weights @ v)."
        )


def _huge_future_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q, k, v whose score for every future key is ~1e4 above the allowed ones (after scaling).

    Dims 0..3 carry a strictly upper-triangular step: q[t] = 3e4·e_t (t < 4, the last token has
    no future) and k[j][m] = 1 for m < j, so q[t]·k[j] is exactly 3e4 when j > t and exactly 0
    when j <= t (3e4 / sqrt(8) ≈ 1.06e4 after scaling; no rounding reaches the allowed scores).
    Dims 4..7 are ordinary random numbers, so the allowed weights are a real distribution.
    """
    q_step = torch.zeros(T, 4)
    q_step[torch.arange(4), torch.arange(4)] = 3e4  # row T-1 stays 0
    k_step = (torch.arange(4)[None, :] < torch.arange(T)[:, None]).float()  # (T, 4)
    q = torch.cat([q_step, h.randn(T, 4, seed=480)], dim=-1).expand(B, T, 8).contiguous()
    k = torch.cat([k_step, h.randn(T, 4, seed=481)], dim=-1).expand(B, T, 8).contiguous()
    return q, k, h.randn(B, T, DV, seed=482)


@pytest.mark.exercise("attention")
def test_huge_future_scores_get_no_weight(student):
    """Masking must happen on the scores: a softmax over all positions, then zeroing the future and
    renormalising, agrees with the right answer on ordinary inputs, but when a future score is ~1e4
    larger, exp() of every allowed score underflows to 0 and the renormalisation divides 0 by 0."""
    q, k, v = _huge_future_inputs()
    out, w = _attend(student, q, k, v)
    scores = (q.double() @ k.double().mT) / (q.shape[-1] ** 0.5)
    allowed = torch.ones(T, T, dtype=torch.bool).tril()
    want_w = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
    if not torch.isfinite(w).all():
        t = int(torch.nonzero(~torch.isfinite(w))[0][-2])
        raise AssertionError(
            f"`attention` gives NaN or inf weights in row {t} when the future keys score about 1e4 above the "
            "allowed ones. Set the future scores to -inf before the softmax: a softmax over all positions "
            "underflows to 0 for every allowed key, and zeroing the future then renormalising divides 0 by 0."
        )
    h.expect_close(w, want_w, "`attention` weights when future scores are about 1e4 larger", torch.float32,
                   "Only the past may share the weight: mask the scores with -inf before the softmax.")
    assert torch.isfinite(out).all(), "`attention` output has NaN or inf although its weights are finite"
    h.expect_close(out, want_w @ v.double(), "`attention` output when future scores are about 1e4 larger",
                   torch.float32)


@pytest.mark.exercise("attention")
def test_causal_false_is_permutation_equivariant(student):
    """Without the mask, permuting the tokens of q, k, v permutes out and the weights' rows and columns alike.

    The student's attention is compared with itself (original vs permuted input), so a
    numerical bug elsewhere does not fail this check; only a position-dependent term does.
    """
    q, k, v = h.randn(B, T, D, seed=490), h.randn(B, T, D, seed=491), h.randn(B, T, DV, seed=492)
    p = PERMUTATION
    out, w = _attend(student, q, k, v, causal=False)
    out_p, w_p = _attend(student, q[:, p], k[:, p], v[:, p], causal=False)
    h.expect_permuted(out_p, out[:, p], "`attention(..., causal=False)` out for permuted tokens")
    h.expect_permuted(w_p, w[:, p][:, :, p], "`attention(..., causal=False)` weights for permuted tokens")
