# expect: lose
# assignment: attention
# exercise: attention
# message: weights|future|upper triangle
# diagnosis: attention_returns_unmasked_weights
# why: attention returns weights computed before masking (for plotting) while out uses the masked ones
# may_fail: attention::test_weights_lower_triangular, attention::test_huge_future*, callers::test_future_tokens*

import torch


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    weights = softmax(scores, dim=-1)
    if causal:
        masked = softmax(apply_mask(scores, causal_mask(q.shape[-2], device=q.device)), dim=-1)
    else:
        masked = weights
    return mix_values(masked, v), weights
