"""Splitting channels into heads and merging them back."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from grader.checks import helpers as h
from grader.checks.attention.conftest import B, C, H, T
from grader.sandbox.errors import StudentError

NO_SHRINK = settings(database=None, derandomize=True, deadline=None, max_examples=8,
                     phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))


@pytest.mark.exercise("split_heads")
def test_head_h_holds_channels_of_its_slice(student):
    x = torch.arange(B * T * C, dtype=torch.float32).reshape(B, T, C)
    got = h.as_tensor(student.split_heads(x, H), "`split_heads`")
    h.expect_shape(got, (B, H, T, C // H), "`split_heads` for x 2x5x12 and 3 heads")
    d = C // H
    h.expect_finite(got, "`split_heads` output", "x 2x5x12 (0, 1, 2, ...) and 3 heads", expected=x.reshape(B, T, H, d).transpose(1, 2))
    for head in range(H):
        want = x[:, :, head * d:(head + 1) * d]
        if not torch.equal(got[:, head], want):
            if torch.equal(got, x.reshape(B, H, T, d)):
                hint = "A bare view(B, n_heads, T, d_head) mixes tokens and heads: view(B, T, n_heads, d_head), then transpose(1, 2)."
            elif torch.equal(got, x.reshape(B, T, d, H).permute(0, 3, 1, 2)):
                hint = "The channels are interleaved (view(B, T, d_head, n_heads)); head h must own the contiguous slice."
            else:
                hint = "Use view(B, T, n_heads, d_head).transpose(1, 2)."
            raise AssertionError(f"head {head} must hold channels {head * d}..{(head + 1) * d - 1} of every token. {hint}")


@pytest.mark.exercise("split_heads")
def test_split_rejects_indivisible_channels(student):
    try:
        student.split_heads(h.randn(B, T, 10, seed=501), 3)
    except StudentError as err:
        assert err.exc_type == "ValueError" and err.builtin, (
            f"`split_heads` with 10 channels and 3 heads raised {err.exc_type}; the contract asks for ValueError "
            "(raise ValueError(...), not assert)"
        )
        return
    raise AssertionError("`split_heads` with 10 channels and 3 heads returned normally; it must raise ValueError")


@pytest.mark.exercise("merge_heads")
def test_merge_inverts_split(student, reference):
    x = h.randn(B, T, C, seed=510)
    heads = reference.split_heads(x, H)
    got = h.as_tensor(student.merge_heads(heads), "`merge_heads`")
    h.expect_shape(got, (B, T, C), "`merge_heads` for x 2x3x5x4")
    h.expect_finite(got, "`merge_heads` output", "split_heads(x) for x 2x5x12", expected=x)
    if not torch.equal(got, x):
        hint = ("A plain reshape without moving the head dim back mixes heads and tokens: transpose(1, 2) first, then reshape."
                if torch.equal(got, heads.reshape(B, T, C)) else "merge_heads must undo split_heads exactly.")
        raise AssertionError(f"merge_heads(split_heads(x)) is not x. {hint}")


@pytest.mark.exercise("merge_heads")
@settings(NO_SHRINK)
@given(b=st.integers(1, 3), t=st.integers(1, 6), n_heads=st.integers(1, 4), d=st.integers(1, 5))
def test_split_then_merge_round_trips_on_random_shapes(student, reference, hidden_examples, b, t, n_heads, d):
    """merge_heads undoes a correct split on any shape. The split is the reference's, so a bug in the student's
    own split_heads is judged by split_heads' checks and never costs merge_heads a point."""
    x = h.randn(b, t, n_heads * d, seed=h.seed(b * 1000 + t * 100 + n_heads * 10 + d, hidden_examples))
    back = h.as_tensor(student.merge_heads(reference.split_heads(x, n_heads)), "`merge_heads`")
    if tuple(back.shape) == tuple(x.shape):
        h.expect_finite(back, "`merge_heads` output", f"split_heads(x, {n_heads}) for x of shape {(b, t, n_heads * d)}",
                        expected=x)
    assert torch.equal(back, x), (
        f"merge_heads(split_heads(x, {n_heads})) differs from x for x of shape {(b, t, n_heads * d)}: merge_heads must "
        "undo split_heads exactly (transpose(1, 2), then reshape to (B, T, n_heads * d_head))")
