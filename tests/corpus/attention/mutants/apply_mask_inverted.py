# expect: lose
# assignment: attention
# exercise: apply_mask
# message: -inf|False|mask
# diagnosis: apply_mask_inverted
# why: apply_mask sets -inf where the mask is True (the allowed positions) instead of where it is False
# may_fail: callers::test_weights_lower_triangular, callers::test_weights_rows_sum_to_one, callers::test_future_tokens*
# may_fail: callers::test_huge_future*, callers::test_future_tokens*

import torch


def apply_mask(scores, mask):
    return scores.masked_fill(mask, float("-inf"))
