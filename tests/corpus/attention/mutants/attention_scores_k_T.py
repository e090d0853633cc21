# expect: lose
# assignment: attention
# exercise: attention_scores
# message: transpose|k\.T
# diagnosis: attention_scores_k_T
# why: attention_scores uses k.T, which on a batched tensor reverses all dims instead of swapping the last two
# may_fail: attention_scores::test_inputs_are_not_modified*, callers::test_weights_*, callers::test_future_tokens*, callers::test_scale_false*
# may_fail: callers::test_unscaled*, callers::test_huge_future*, callers::test_inputs_are_not_modified*, callers::test_stays_on*
# may_fail: callers::test_cuda_matches_cpu*, callers::test_causal_false_is_permutation_equivariant, callers::test_returns*
# may_fail: callers::test_scores_scaled*, callers::test_future_tokens*, callers::test_inputs_are_not_modified*
# may_fail: callers::test_stays_on*, callers::test_cuda_matches_cpu*, callers::test_causal_false_*

import torch


def attention_scores(q, k):
    return q @ k.T
