# expect: full
# assignment: attention
# why: attention computes everything in float64 and casts out and weights back to the input dtype

import math
import torch


def attention(q, k, v, causal=True, scale=True):
    dtype = q.dtype
    q64, k64, v64 = q.double(), k.double(), v.double()
    scores = q64 @ k64.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)
    out = weights @ v64
    return out.to(dtype), weights.to(dtype)
