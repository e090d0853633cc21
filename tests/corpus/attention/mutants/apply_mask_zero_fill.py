# expect: lose
# assignment: attention
# exercise: apply_mask
# message: -inf|inf
# diagnosis: apply_mask_zero_fill
# why: apply_mask fills masked positions with 0 instead of -inf, so they still get weight after softmax
# may_fail: callers::test_weights_lower_triangular, callers::test_future_tokens*, callers::test_huge_future*
# may_fail: callers::test_future_tokens*

import torch


def apply_mask(scores, mask):
    return scores.masked_fill(~mask, 0.0)
