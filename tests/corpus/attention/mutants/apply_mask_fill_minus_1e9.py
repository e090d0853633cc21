# expect: lose
# assignment: attention
# exercise: apply_mask
# message: -inf|inf
# diagnosis: apply_mask_fill_minus_1e9
# why: apply_mask fills masked positions with -1e9 instead of -inf
# may_fail: none

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def apply_mask(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """New tensor: ``scores`` with ``-inf`` wherever ``mask`` is False.

    scores: (..., T, S), mask: bool, broadcastable -> (..., T, S).
    """
    return scores.masked_fill(~mask, -1e9)
