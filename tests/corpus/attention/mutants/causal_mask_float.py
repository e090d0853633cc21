# expect: lose
# assignment: attention
# exercise: causal_mask
# message: bool|dtype
# diagnosis: causal_mask_float
# why: causal_mask returns the float 0/1 tril matrix (GPT-tutorial style) instead of a bool tensor
# may_fail: attention::test_weights_*, attention::test_future_tokens*, attention::test_scale_false*, attention::test_unscaled*
# may_fail: attention::test_huge_future*, attention::test_inputs_are_not_modified*, attention::test_stays_on*, attention::test_cuda_matches_cpu*
# may_fail: multi_head_attention::test_returns*, multi_head_attention::test_scores_scaled*, multi_head_attention::test_future_tokens*
# may_fail: multi_head_attention::test_inputs_are_not_modified*, multi_head_attention::test_stays_on*, multi_head_attention::test_cuda_matches_cpu*

import torch


def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, device=device))
