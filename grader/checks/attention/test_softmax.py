"""softmax, written by hand: normalised, stable, exact zeros, along the given dim."""

from __future__ import annotations

import pytest
import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from grader.checks import helpers as h
from grader.checks import precision
from grader.sandbox.errors import NotAttempted, NotDefined
from grader.submission import forbidden_in

pytestmark = pytest.mark.exercise("softmax")
NO_SHRINK = settings(database=None, derandomize=True, deadline=None, max_examples=8,
                     phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))


def test_rows_sum_to_one(student):
    x = h.randn(2, 3, 5, 7, seed=301, scale=3.0)
    w = h.as_tensor(student.softmax(x), "`softmax`")
    h.expect_shape(w, x.shape, "`softmax` on scores 2x3x5x7")
    sums = w.double().sum(-1)
    off = torch.where(torch.isfinite(sums), (sums - 1).abs(), torch.zeros_like(sums))  # NaN/inf rows: below
    row = h.where_largest(off)
    assert not (off > 1e-4).any(), (
        f"row {row} of the softmax output sums to {sums[row].item():.4g}; every row along the last dim must sum to 1. "
        "Is the sum taken over the last dimension (dim=-1, keepdim=True)?"
    )
    assert not (w < 0).any(), "`softmax` returned negative weights"
    h.inconclusive_if_nonfinite("whether each row sums to 1", (w, "`softmax` output", "scores 2x3x5x7"))


def test_softmax_uses_the_dim_argument(student):
    x = h.randn(4, 6, seed=302)
    w = h.as_tensor(student.softmax(x, dim=0), "`softmax(x, dim=0)`")
    h.expect_shape(w, x.shape, "`softmax(x, dim=0)` on scores 4x6")
    sums = w.double().sum(0)
    assert torch.allclose(sums, torch.ones_like(sums), atol=1e-4), (
        f"`softmax(x, dim=0)`: columns sum to {sums[:3].tolist()}...; with dim=0 each column must sum to 1. "
        "Use the `dim` argument for the max, the exp and the sum."
    )


def test_stable_for_large_scores(student):
    """Scores of size 1e4 (rows of very different size) give finite weights, the same as the student's own
    softmax of the same scores shifted down by 1e4 (a softmax ignores a constant added to every score).
    The values themselves are the output checks' business."""
    x = torch.tensor([[1e4, 1e4 - 1.0, -1e4], [5e3, 0.0, -5e3], [3.0, 2.0, 1.0]])
    w = h.as_tensor(student.softmax(x), "`softmax`")
    h.expect_shape(w, x.shape, "`softmax` on scores 3x3")
    h.expect_finite(w, "`softmax`", "scores of size 1e4",
                    hint="For a stable softmax, exp(1e4) overflows and exp(-1e4) underflows: subtract each row's max "
                         "(along dim) before exp; the result does not change, the numbers stay small.")
    shifted = h.as_tensor(student.softmax(x - 1e4), "`softmax`")
    h.expect_shape(shifted, x.shape, "`softmax` on scores 3x3")
    keep = h.finite_entries(shifted)
    # float32 holds 1e4 only to ~1e-3, so a sound method (e.g. exp(x - logsumexp(x))) may be that far off:
    # the tolerance is what rounding at the largest score here (2e4, in x - 1e4) can explain, no more.
    magnitude = max(x.abs().max().item(), (x - 1e4).abs().max().item())
    rtol, atol = h.TOLERANCES[torch.float32]
    rtol += precision.softmax_relative_tolerance(magnitude)
    assert torch.allclose(w.double()[keep], shifted.double()[keep], rtol=rtol, atol=atol), (
        "`softmax` of scores of size 1e4 differs from your softmax of the same scores minus 1e4 by more than float32 "
        f"rounding at that size explains (rtol={rtol:.2g}); adding a constant to every score must not change a softmax. "
        "Subtract the max along dim before exp instead of clamping or scaling."
    )
    h.inconclusive_if_nonfinite("stability", (shifted, "`softmax`", "the same scores minus 1e4"))


def test_minus_inf_gets_exactly_zero(student):
    x = h.randn(5, 7, seed=303)
    x[1:, 3:] = float("-inf")  # row 0 stays finite: no slice along any dim is all -inf
    w = h.as_tensor(student.softmax(x), "`softmax`")
    h.expect_shape(w, x.shape, "`softmax` on scores 5x7")
    # NaN here is the property itself: a row with some -inf scores (and finite ones) has a finite softmax.
    h.expect_finite(w, "`softmax`", "scores 5x7 whose rows 1..4 end in -inf",
                    hint="Every row still has finite scores, so nothing should be NaN: subtract the row's finite max, "
                         "and exp(-inf - max) is exactly 0.")
    assert (w[1:, 3:] == 0).all(), (
        f"a -inf score must get weight exactly 0, got {w[1:, 3:].max().item():.3g}; exp(-inf - max) is exactly 0"
    )


@settings(NO_SHRINK)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=4), seed=st.integers(0, 10_000))
def test_matches_reference_on_random_shapes(student, reference, hidden_examples, shape, seed):
    x = h.randn(*shape, seed=h.seed(seed, hidden_examples), scale=4.0)
    got = h.as_tensor(student.softmax(x), "`softmax`")
    h.expect_close(got, reference.softmax(x.double()), f"`softmax` on scores of shape {tuple(shape)}", torch.float32)


def test_softmax_written_by_hand(student, submission, assignment):
    if not student.defined("softmax"):  # also: a file that does not load earns nothing here
        raise NotDefined("softmax")
    if not submission.attempted("softmax"):
        raise NotAttempted("softmax")
    exercise = assignment.exercise("softmax")
    found = forbidden_in(submission.tree, "softmax", exercise.forbidden_calls, assignment.flagged_calls)
    assert not found, (
        f"`softmax` must be written by hand, but it uses `{found[0].name}` ({submission.where(found[0].line)}, in `{found[0].function}`). "
        "Use max, exp and sum; torch's softmax is fine everywhere else."
    )
