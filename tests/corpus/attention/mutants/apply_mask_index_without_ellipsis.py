# expect: lose
# assignment: attention
# exercise: apply_mask
# message: mask|shape|index
# clause: apply_mask.shape_and_broadcast
# diagnosis: apply_mask_index_without_ellipsis
# why: apply_mask writes -inf with out[~mask] on a copy, which needs the mask to have the scores' full shape; a (T, S) mask on batched (..., T, S) scores fails (out[..., ~mask] would broadcast)
# may_fail: apply_mask::test_inputs_are_not_modified*, apply_mask::test_stays_on*, callers::test_weights_*, callers::test_future_tokens*
# may_fail: callers::test_scale_false*, callers::test_unscaled*, callers::test_huge_future*, callers::test_inputs_are_not_modified*
# may_fail: callers::test_stays_on*, callers::test_cuda_matches_cpu*, callers::test_returns*
# may_fail: callers::test_scores_scaled*, callers::test_future_tokens*, callers::test_inputs_are_not_modified*
# may_fail: callers::test_stays_on*, callers::test_cuda_matches_cpu*

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def apply_mask(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """New tensor: ``scores`` with ``-inf`` wherever ``mask`` is False.

    scores: (..., T, S), mask: bool, broadcastable -> (..., T, S).
    """
    out = scores.clone(); out[~mask] = float("-inf"); return out
