# expect: full
# assignment: attention
# why: attention subtracts each row's max of the raw (scaled) scores before masking, the "stable softmax" idiom of widely used public attention code; exact in real numbers and stable in float32, only rounded at the magnitude of the largest (future) score

import math
import torch


def attention(q, k, v, causal=True, scale=True):
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    scores = scores - scores.amax(dim=-1, keepdim=True)  # on the unmasked scores: the future's max counts too
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights
