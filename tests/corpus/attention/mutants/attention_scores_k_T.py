# expect: lose
# assignment: attention
# exercise: attention_scores
# message: transpose|k\.T
# diagnosis: attention_scores_k_T
# why: attention_scores uses k.T, which on a batched tensor reverses all dims instead of swapping the last two
# may_fail: attention_scores::test_inputs_are_not_modified*, attention::test_weights_*, attention::test_future_tokens*, attention::test_scale_false*
# may_fail: attention::test_unscaled*, attention::test_huge_future*, attention::test_inputs_are_not_modified*, attention::test_stays_on*
# may_fail: attention::test_cuda_matches_cpu*, attention::test_causal_false_is_permutation_equivariant, multi_head_attention::test_returns*
# may_fail: multi_head_attention::test_scores_scaled*, multi_head_attention::test_future_tokens*, multi_head_attention::test_inputs_are_not_modified*
# may_fail: multi_head_attention::test_stays_on*, multi_head_attention::test_cuda_matches_cpu*, multi_head_attention::test_causal_false_*

import torch


def attention_scores(q, k):
    return q @ k.T
