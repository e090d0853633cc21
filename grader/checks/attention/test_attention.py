"""Single-head attention as the lesson builds it: weights, causality, scaling, the baseline."""

from __future__ import annotations

import pytest
import torch

from grader.checks import helpers as h
from grader.checks import precision
from grader.checks.attention.conftest import B, D, DV, H, PERMUTATION, T


RANDOM_ADDED = ("a second call on the same inputs gives a different out (by up to {spread:.3g}): something random is "
                "added to the result. Attention is deterministic: remove it (dropout belongs in training, and it acts "
                "on the weights, not the output).")


def _run_to_run(student, out, q, k, v, **kw) -> float:
    """How far `attention`'s out moves when the same call runs under another random state (0: deterministic),
    over the entries finite both times. An output that moves is noise on top of the mix, not a wrong mix:
    a check's hint about the mix would send the student to the wrong line."""
    again = h.as_pair(student.call("attention", q, k, v, stream=1, **kw).value, "`attention`")[0]
    if tuple(again.shape) != tuple(out.shape):
        return 0.0
    keep = h.finite_entries(out, again)
    diff = (out.double()[keep] - again.double()[keep]).abs()
    return float(diff.max()) if diff.numel() else 0.0


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


def _rows(w, rows):
    """The chosen rows among 1.. (row 0 always has one choice), each divided by its sum: the shape of the
    distribution, not its normalisation (another check's property)."""
    p = w[..., 1:, :][rows].double()
    return p / p.sum(-1, keepdim=True)


def _entropy(w, rows):
    """Mean entropy (nats) of the chosen rows, computed here in the judge."""
    p = _rows(w, rows)
    return -(p * p.clamp_min(1e-300).log()).sum(-1).mean().item()


@pytest.mark.exercise("attention")
def test_weights_rows_sum_to_one(student, cases):
    q, k, v = cases["attention"][0].args
    _, w = _attend(student, q, k, v)
    h.expect_shape(w, (B, H, T, T), "`attention` weights for q, k 2x3x5x4")
    sums = w.double().sum(-1)
    # Judged on the rows whose sums are finite; a NaN/inf row is its own finding (below), never a row that sums to 1.
    bad = torch.nonzero(torch.isfinite(sums) & ~((sums - 1).abs() <= 1e-4))
    assert not len(bad), (
        f"row {int(bad[0][-1])} of the attention weights sums to {sums[tuple(bad[0])].item():.3g}; each row must sum to 1. "
        "Mask before the softmax (scale, then mask, then softmax) and take the softmax over the last dimension."
    )
    h.inconclusive_if_nonfinite("whether each row sums to 1", (w, "`attention` weights", cases["attention"][0].label))


@pytest.mark.exercise("attention")
def test_weights_lower_triangular(student, reference, cases):
    q, k, v = cases["attention"][0].args
    _, w = _attend(student, q, k, v)
    upper = ~reference.causal_mask(T)
    future = w[..., upper]
    future = future[torch.isfinite(future)]  # NaN/inf is its own finding (below), not weight on the future
    assert (future == 0).all(), (
        f"with causal=True, token t gives weight {future.abs().max().item():.3g} to a later token; "
        "the upper triangle of the weights must be exactly 0 (the future is masked with -inf before softmax)"
    )
    diag = torch.diagonal(w, dim1=-2, dim2=-1)
    diag = diag[torch.isfinite(diag)]
    assert (diag > 0).all(), "a token gives its own position weight 0; the diagonal must stay allowed"
    h.inconclusive_if_nonfinite("causality", (w, "`attention` weights", cases["attention"][0].label))


@pytest.mark.exercise("attention")
def test_future_tokens_do_not_change_past_outputs(student):
    q, k, v = h.randn(B, T, D, seed=401), h.randn(B, T, D, seed=402), h.randn(B, T, DV, seed=403)
    out, _ = _attend(student, q, k, v)
    seen = []
    for t in (0, 2):
        q2, k2, v2 = q.clone(), k.clone(), v.clone()
        for x, seed in ((q2, 404), (k2, 405), (v2, 406)):
            x[:, t + 1:] = h.randn(B, T - t - 1, x.shape[-1], seed=seed + t)
        out2, _ = _attend(student, q2, k2, v2)
        a, b = out[:, : t + 1], out2[:, : t + 1]
        keep = h.finite_entries(a, b)
        assert torch.allclose(a[keep], b[keep], atol=1e-6), (
            f"changing tokens after position {t} changed the output at position {t}: "
            "attention is not causal. Mask the scores of future tokens with -inf before the softmax."
        )
        seen += [(a, f"`attention` out[:, :{t + 1}]", "q, k 2x5x4, v 2x5x6"),
                 (b, f"`attention` out[:, :{t + 1}]", f"the same q, k, v with the tokens after position {t} changed")]
    h.inconclusive_if_nonfinite("causality", *seen)


@pytest.mark.exercise("attention")
def test_scale_false_does_not_divide(student):
    """Padding q and k with zero channels (d 4 -> 16) keeps every score; with scale=False the weights must not move.

    The student's attention is compared with itself, so only a division that depends on d
    (the scale flag ignored) fails here; wrong values elsewhere are the output checks' business.
    """
    q, k, v = h.randn(B, T, D, seed=410, scale=2.0), h.randn(B, T, D, seed=411), h.randn(B, T, DV, seed=412)
    pad = lambda x: torch.cat([x, torch.zeros(*x.shape[:-1], 3 * D)], dim=-1)  # noqa: E731
    _, w = _attend(student, q, k, v, scale=False)
    _, w_pad = _attend(student, pad(q), pad(k), v, scale=False)
    keep = h.finite_entries(w, w_pad)
    if not torch.allclose(w.double()[keep], w_pad.double()[keep], rtol=1e-4, atol=1e-5):
        raise AssertionError(
            "`attention(..., scale=False)` weights change when q and k get zero channels added (head size 4 -> 16, "
            "every score the same): with scale=False the scores must not be divided by sqrt(d). Honour the `scale` flag "
            "(divide only when scale=True) and keep attention_scores raw."
        )
    h.inconclusive_if_nonfinite("the scale flag", (w, "`attention(..., scale=False)` weights", "q, k 2x5x4, v 2x5x6"),
                                (w_pad, "`attention(..., scale=False)` weights", "q, k padded to 2x5x16"))


@pytest.mark.exercise("attention")
def test_causal_false_uses_no_mask(student, reference):
    """causal=False: every token gives weight to later tokens too. The values are the output checks' business."""
    q, k, v = h.randn(T, D, seed=420), h.randn(T, D, seed=421), h.randn(T, DV, seed=422)
    _, w = _attend(student, q, k, v, causal=False)
    future = w[~reference.causal_mask(T)]
    assert (future[torch.isfinite(future)] > 0).all(), (
        "`attention(..., causal=False)` still masks the future; without the mask every token sees every token "
        "(apply the causal mask only when causal=True)"
    )
    h.inconclusive_if_nonfinite("the causal flag", (future, "`attention(..., causal=False)` weights above the diagonal",
                                                    "q, k 5x4, v 5x6"))


@pytest.mark.exercise("attention")
def test_matches_torch_scaled_dot_product_attention(student):
    q, k, v = h.randn(B, H, T, D, seed=430), h.randn(B, H, T, D, seed=431), h.randn(B, H, T, DV, seed=432)
    out, _ = _attend(student, q, k, v)
    want = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    h.expect_close(out, want, "`attention` output vs torch's scaled_dot_product_attention(is_causal=True)", torch.float32)


@pytest.mark.exercise("attention")
def test_zero_scores_give_mean_of_past(student, reference):
    """The lesson's baseline: zero queries make every score 0; mask, softmax and mix then average the past."""
    q, k, v = torch.zeros(B, T, D), h.randn(B, T, D, seed=441), h.randn(B, T, DV, seed=440)
    out, _ = _attend(student, q, k, v)
    want = reference.bag_of_past(v.double())
    try:
        h.expect_close(out, want, "`attention` with zero queries (all scores 0)", torch.float32,
                       "Row t should be the mean of v[:t+1]: each of the first t+1 tokens gets weight 1/(t+1).")
    except AssertionError as wrong:
        spread = _run_to_run(student, out, q, k, v)
        if spread > 0:
            raise AssertionError(f"`attention` with zero queries (all scores 0) should give the mean of v[:t+1] in "
                                 f"row t, and {RANDOM_ADDED.format(spread=spread)}") from None
        raise wrong


@pytest.mark.exercise("attention")
def test_unscaled_weights_saturate(student, hidden_seed):
    """Without scaling, head_size 256 makes the softmax nearly one-hot; with it, weights stay diffuse.

    The student's own scale=False and scale=True weights are compared (their entropies),
    on the rows finite in both; the reference's values play no part.
    """
    d, t = 256, 12
    q, k, v = (h.randn(4, t, d, seed=h.seed(450 + i, hidden_seed)) for i in range(3))
    _, w_raw = _attend(student, q, k, v, scale=False)
    _, w_scaled = _attend(student, q, k, v, scale=True)
    # Judged on the rows that are distributions (finite, summing to 1) in both; normalisation is another check's.
    rows = (h.finite_entries(w_raw, w_scaled).all(-1) & ((w_raw.double().sum(-1) - 1).abs() < 1e-3)
            & ((w_scaled.double().sum(-1) - 1).abs() < 1e-3))[:, 1:]  # row 0 always has one choice
    if rows.any():
        ent_raw, ent_scaled = _entropy(w_raw, rows), _entropy(w_scaled, rows)
        peak_raw = _rows(w_raw, rows).amax(-1).mean().item()
        peak_scaled = _rows(w_scaled, rows).amax(-1).mean().item()
        assert ent_raw < 0.5 * ent_scaled, (
            f"at head_size 256 the mean entropy of your weights without scaling ({ent_raw:.3f} nats, mean row max "
            f"{peak_raw:.3f}) should fall far below the scaled case ({ent_scaled:.3f} nats, mean row max {peak_scaled:.3f}): "
            "unscaled scores of size ~sqrt(256) make the softmax nearly one-hot. Does `scale=False` skip the division, "
            "and does `scale=True` divide by sqrt(head_size)?"
        )
    h.inconclusive_if_nonfinite("the scale flag", (w_raw, "`attention(..., scale=False)` weights", "q, k, v 4x12x256"),
                                (w_scaled, "`attention(..., scale=True)` weights", "q, k, v 4x12x256"))
    if not rows.any():
        pytest.skip("no row of your attention weights on q, k, v 4x12x256 sums to 1, so whether unscaled weights "
                    "saturate cannot be judged; not counted here (test_weights_rows_sum_to_one reports the sums)")


@pytest.mark.exercise("bag_of_past")
def test_row_t_is_mean_of_first_t_plus_1(student, reference):
    v = h.randn(B, T, DV, seed=460)
    got = h.as_tensor(student.bag_of_past(v), "`bag_of_past`")
    h.expect_shape(got, v.shape, "`bag_of_past` on v 2x5x6")
    want = reference.bag_of_past(v.double())
    divided_by_T = want * torch.arange(1, T + 1, dtype=torch.float64)[:, None] / T  # running sums over T
    if torch.allclose(got.double(), divided_by_T, atol=1e-5):
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
        if torch.allclose(out[t].double(), torch.tensor(WORKED_OUT[t], dtype=torch.float64), atol=1e-3):
            continue
        spread = _run_to_run(student, out, q, k, v)
        assert not spread > 0, (
            f"on the chapter's worked example the new vector of {token} should be {WORKED_OUT[t]} but `attention` "
            f"gives {got}, and {RANDOM_ADDED.format(spread=spread)}"
        )
        raise AssertionError(
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
def test_huge_future_scores_get_no_weight(student, reference):
    """Masking must happen on the scores: a softmax over all positions, then zeroing the future and
    renormalising, agrees with the right answer on ordinary inputs, but when a future score is ~1e4
    larger, exp() of every allowed score underflows to 0 and the renormalisation divides 0 by 0.

    The student is compared with itself (huge vs ordinary future scores) within what float32 allows
    at the injected magnitude (``precision``: eps · M, M the largest scaled score): every method exact
    in real numbers passes, whether it subtracts the row max before the mask or after it; a 0/0 or
    weight leaking to the future is off by far more than that."""
    q, k, v = _huge_future_inputs()
    q_ord = q.clone()
    q_ord[..., :4] = 0  # the same inputs with ordinary future scores: every allowed score is unchanged
    out, w = _attend(student, q, k, v)
    out_o, w_o = _attend(student, q_ord, k, v)
    huge, ordinary = "q, k, v whose future scores are about 1e4 larger", "the same q, k, v with ordinary future scores"
    rtol, atol = h.TOLERANCES[torch.float32]
    magnitude = reference.scale_scores(reference.attention_scores(q.double(), k.double()), q.shape[-1]).abs().max().item()
    rel = precision.softmax_relative_tolerance(magnitude)
    # weights: relative to each weight; the output mixes v, so its error scales with max |v|.
    tolerances = {"weights": (rtol + rel, atol), "output": (rtol, atol + rel * v.abs().max().item())}
    for name, got, base in (("weights", w, w_o), ("output", out, out_o)):
        # NaN/inf that only the huge future scores cause: exactly what masking before the softmax prevents.
        h.expect_finite(got, f"`attention` {name}", huge, expected=base,
                        hint=f"Your {name} are finite on {ordinary}, so the huge masked scores leak in: set the future "
                             "scores to -inf before the softmax. A softmax over all positions underflows to 0 for every "
                             "allowed key, and zeroing the future then renormalising divides 0 by 0.")
        keep = h.finite_entries(got, base)
        g, b = got.double()[keep], base.double()[keep]
        r, a = tolerances[name]
        if not torch.allclose(g, b, rtol=r, atol=a):
            i = int(((g - b).abs() - r * b.abs()).argmax())
            raise AssertionError(
                f"`attention` {name} change when only the masked (future) scores grow by about 1e4 "
                f"(got {g[i].item():.6g} instead of {b[i].item():.6g} with ordinary future scores, more than the "
                f"rtol={r:.2g}, atol={a:.2g} that float32 rounding at scores of {magnitude:.3g} can explain): masked "
                "positions must not matter. Only the past may share the weight: mask the scores with -inf before "
                "the softmax."
            )
    h.inconclusive_if_nonfinite("masking before the softmax", (w, "`attention` weights", huge),
                                (w_o, "`attention` weights", ordinary), (out, "`attention` output", huge),
                                (out_o, "`attention` output", ordinary))


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
    again, w_again = _attend(student, q, k, v, causal=False, stream=1)  # its own run-to-run noise, if any
    seen = ((out, "`attention(..., causal=False)` out", "q, k 2x5x4, v 2x5x6"),
            (w, "`attention(..., causal=False)` weights", "q, k 2x5x4, v 2x5x6"),
            (out_p, "`attention(..., causal=False)` out", "the same tokens permuted"),
            (w_p, "`attention(..., causal=False)` weights", "the same tokens permuted"))
    with h.naming_nonfinite(*seen):
        h.expect_permuted(out_p, out[:, p], "`attention(..., causal=False)` out for permuted tokens",
                          h.noise_margin(out, again))
        h.expect_permuted(w_p, w[:, p][:, :, p], "`attention(..., causal=False)` weights for permuted tokens",
                          h.noise_margin(w, w_again))
    h.inconclusive_if_nonfinite("permutation equivariance", *seen)
