# expect: lose
# assignment: attention
# exercise: causal_mask
# message: bool|dtype
# diagnosis: causal_mask_float
# why: causal_mask returns the float 0/1 tril matrix (GPT-tutorial style) instead of a bool tensor
# may_fail: callers::test_weights_*, callers::test_future_tokens*, callers::test_scale_false*, callers::test_unscaled*
# may_fail: callers::test_huge_future*, callers::test_inputs_are_not_modified*, callers::test_stays_on*, callers::test_cuda_matches_cpu*
# may_fail: callers::test_returns*, callers::test_scores_scaled*, callers::test_future_tokens*
# may_fail: callers::test_inputs_are_not_modified*, callers::test_stays_on*, callers::test_cuda_matches_cpu*

import torch


def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, device=device))
