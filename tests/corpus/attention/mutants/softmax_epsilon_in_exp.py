# expect: lose
# assignment: attention
# exercise: softmax
# message: exactly 0
# clause: softmax.minus_inf_gets_zero
# diagnosis: none (the 1e-9 weights lie within every tolerance; only the exact-zero check sees them)
# why: softmax adds 1e-9 to every exp() "to avoid dividing by zero", so a -inf score gets a tiny weight instead of exactly 0
# may_fail: softmax::test_minus_inf_gets_exactly_zero, callers::test_weights_lower_triangular, callers::test_future_tokens*

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def softmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Numerically stable softmax along ``dim``, by hand.

    Shifting by the max changes nothing mathematically but keeps exp() from
    overflowing; exp(-inf) = 0, so masked positions get weight exactly 0.
    """
    row_max = scores.detach().amax(dim=dim, keepdim=True)  # (..., 1, ...)
    # A row whose max is -inf would give -inf - (-inf) = NaN: shift it by 0.
    row_max = row_max.masked_fill(row_max == float("-inf"), 0.0)
    e = torch.exp(scores - row_max) + 1e-9  # "no division by zero"
    return e / e.sum(dim=dim, keepdim=True)
