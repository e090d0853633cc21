# expect: lose
# assignment: attention
# exercise: attention
# message: causal
# diagnosis: attention_ignores_causal_flag
# why: attention always applies the causal mask, ignoring causal=False
# may_fail: attention::test_causal_false_*, callers::test_causal_false_*

import torch


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights
