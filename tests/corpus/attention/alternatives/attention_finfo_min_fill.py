# expect: full
# assignment: attention
# why: attention masks with torch.finfo(dtype).min instead of -inf (apply_mask unchanged); exp underflows to exactly 0

import math
import torch


def attention(q, k, v, causal=True, scale=True):
    scores = q @ k.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    if causal:
        T = q.shape[-2]
        allowed = causal_mask(T, device=q.device)
        scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
    weights = softmax(scores, dim=-1)
    return weights @ v, weights
