# expect: lose
# assignment: attention
# exercise: attention
# message: scale
# diagnosis: attention_ignores_scale_flag
# why: attention always scales the scores, ignoring scale=False
# may_fail: attention::test_scale_false_does_not_divide, attention::test_unscaled_weights_saturate

import torch


def attention(q, k, v, causal=True, scale=True):
    scores = scale_scores(attention_scores(q, k), q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights
