# expect: lose
# assignment: attention
# exercise: attention
# message: scale|sqrt
# why: attention scales by sqrt(T) (q.shape[-2], the sequence length) instead of sqrt(d) (q.shape[-1])

import torch


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-2])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights
