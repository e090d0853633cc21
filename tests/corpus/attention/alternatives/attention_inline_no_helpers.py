# expect: full
# assignment: attention
# why: attention written inline (own triu mask via torch.ones(..., device=q.device), own stable softmax) without calling the other exercises

import math
import torch


def attention(q, k, v, causal=True, scale=True):
    T, d = q.shape[-2], q.shape[-1]
    scores = torch.matmul(q, k.transpose(-1, -2))
    if scale:
        scores = scores / d ** 0.5
    if causal:
        future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.matmul(weights, v), weights
