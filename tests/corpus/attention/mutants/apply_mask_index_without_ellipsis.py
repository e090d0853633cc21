# expect: lose
# assignment: attention
# exercise: apply_mask
# message: mask|shape|index
# clause: apply_mask.shape_and_broadcast
# diagnosis: apply_mask_index_without_ellipsis
# why: apply_mask writes -inf with out[~mask] on a copy, which needs the mask to have the scores' full shape; a (T, S) mask on batched (..., T, S) scores fails (out[..., ~mask] would broadcast)
# may_fail: apply_mask::test_inputs_are_not_modified*, apply_mask::test_stays_on*, attention::test_weights_*, attention::test_future_tokens*
# may_fail: attention::test_scale_false*, attention::test_unscaled*, attention::test_huge_future*, attention::test_inputs_are_not_modified*
# may_fail: attention::test_stays_on*, attention::test_cuda_matches_cpu*, multi_head_attention::test_returns*
# may_fail: multi_head_attention::test_scores_scaled*, multi_head_attention::test_future_tokens*, multi_head_attention::test_inputs_are_not_modified*
# may_fail: multi_head_attention::test_stays_on*, multi_head_attention::test_cuda_matches_cpu*

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def apply_mask(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """New tensor: ``scores`` with ``-inf`` wherever ``mask`` is False.

    scores: (..., T, S), mask: bool, broadcastable -> (..., T, S).
    """
    out = scores.clone(); out[~mask] = float("-inf"); return out
