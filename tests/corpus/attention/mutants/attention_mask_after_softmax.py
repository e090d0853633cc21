# expect: lose
# assignment: attention
# exercise: attention
# message: sum to 1|rows?
# why: attention applies the causal mask after softmax by zeroing future weights, so rows no longer sum to 1

import math
import torch


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    weights = softmax(scores, dim=-1)
    if causal:
        weights = weights.masked_fill(~causal_mask(q.shape[-2], device=q.device), 0.0)
    return mix_values(weights, v), weights
