"""attention_entropy: nats, 0·log 0 = 0, and the two extremes."""

from __future__ import annotations

import math

import pytest
import torch

from grader.checks import helpers as h

pytestmark = pytest.mark.exercise("attention_entropy")


def test_entropy_finite_on_masked_zeros(student, cases):
    w = cases["attention_entropy"][0].args[0]
    got = h.as_tensor(student.attention_entropy(w), "`attention_entropy`")
    h.expect_shape(got, w.shape[:-1], "`attention_entropy` for weights 2x3x5x5", "One entropy per row: sum over the last dim.")
    # NaN/inf here is the property itself (0 · log 0 = 0), so the non-finite finding fails the check.
    h.expect_finite(got, "`attention_entropy`", "causal weights 2x3x5x5 with masked (zero) weights",
                    hint="Here: 0 * log(0) is 0 * -inf = NaN. Treat 0 · log 0 as 0 (torch.where, or clamp p before the log).")


def test_uniform_rows_give_log_n(student):
    w = torch.full((3, 8), 1 / 8)
    got = h.as_tensor(student.attention_entropy(w), "`attention_entropy`")
    h.expect_shape(got, (3,), "`attention_entropy` for weights 3x8", "One entropy per row: sum over the last dim.")
    want = torch.full((3,), math.log(8), dtype=torch.float64)
    if torch.allclose(got.double(), -want, atol=1e-4):
        raise AssertionError("`attention_entropy` is negative: entropy is -(p * log p).sum(-1); is the minus sign missing?")
    if torch.allclose(got.double(), want / math.log(2), atol=1e-4):
        raise AssertionError("`attention_entropy` uses log base 2; the lesson measures entropy in nats (natural log)")
    h.expect_close(got, want, "`attention_entropy` of a uniform row over 8 tokens (should be log 8)", torch.float32)


def test_entropy_falls_when_unscaled_weights_saturate(student, reference):
    """The lesson's measurement: at head_size 256, unscaled weights are near one-hot, so their entropy collapses."""
    q, k, v = (h.randn(4, 12, 256, seed=450 + i) for i in range(3))
    raw = reference.attention(q.double(), k.double(), v.double(), scale=False)[1].float()
    scaled = reference.attention(q.double(), k.double(), v.double(), scale=True)[1].float()
    e_raw = h.as_tensor(student.attention_entropy(raw), "`attention_entropy`")
    e_scaled = h.as_tensor(student.attention_entropy(scaled), "`attention_entropy`")
    h.expect_shape(e_raw, (4, 12), "`attention_entropy` for weights 4x12x12")
    h.expect_shape(e_scaled, (4, 12), "`attention_entropy` for weights 4x12x12")
    # Exact zeros in nearly one-hot rows: NaN here is the 0 · log 0 property itself.
    for got, label in ((e_raw, "unscaled (nearly one-hot) weights 4x12x12"), (e_scaled, "scaled weights 4x12x12")):
        h.expect_finite(got, "`attention_entropy`", label,
                        hint="Here: 0 * log(0) is 0 * -inf = NaN. Treat 0 · log 0 as 0 (torch.where, or clamp p before the log).")
    raw_mean, scaled_mean = e_raw[:, 1:].mean().item(), e_scaled[:, 1:].mean().item()
    if raw_mean == scaled_mean:
        raise AssertionError(
            f"`attention_entropy` gives the same mean entropy, {raw_mean:.4g} nats, for the unscaled (nearly one-hot) "
            "weights as for the scaled ones: it should fall far below when the softmax saturates. Does it read the "
            "weights at all?")
    assert raw_mean < 0.5 * scaled_mean, (
        f"mean entropy of the unscaled weights ({raw_mean:.4g} nats) should be far below (under half) the scaled "
        f"weights' ({scaled_mean:.4g} nats)"
    )


def test_one_hot_rows_give_zero(student):
    w = torch.eye(4)
    got = h.as_tensor(student.attention_entropy(w), "`attention_entropy`")
    h.expect_close(got, torch.zeros(4, dtype=torch.float64), "`attention_entropy` of one-hot rows (should be 0)", torch.float32)
