# source: classic (no public example found)
# exercise: softmax
# accept: keepdim|broadcast|reduced dim
# why: the sum drops the reduced dim, so the division broadcasts along the wrong axis

"""attention.py -- submission

Notes to self: keep dtype/device of the inputs, never write into them.
"""
import math

import torch


def attention_scores(q, k):
    return torch.matmul(q, k.mT)


def scale_scores(scores, head_size):
    return scores.div(math.sqrt(head_size))


def causal_mask(T, device=None):
    full = torch.ones(T, T, dtype=torch.bool, device=device)
    return torch.tril(full, diagonal=0)


def apply_mask(scores, mask):
    return scores.masked_fill(torch.logical_not(mask), -torch.inf)


def softmax(scores, dim=-1):
    row_max = scores.amax(dim=dim, keepdim=True)
    # a row that is all -inf would give nan; shift those by zero instead
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    unnorm = torch.exp(scores - row_max.detach())
    return unnorm / unnorm.sum(dim=dim)


def mix_values(weights, v):
    return torch.matmul(weights, v)


def attention(q, k, v, causal=True, scale=True):
    T, d = q.shape[-2:]
    logits = attention_scores(q, k)
    if scale:
        logits = scale_scores(logits, d)
    if causal:
        logits = apply_mask(logits, causal_mask(T, device=logits.device))
    probs = softmax(logits, dim=-1)
    return mix_values(probs, v), probs


def bag_of_past(v):
    T = v.shape[-2]
    lower = torch.tril(torch.ones(T, T, device=v.device, dtype=v.dtype))
    counts = lower.sum(dim=-1, keepdim=True)
    return torch.matmul(lower / counts, v)


def split_heads(x, n_heads):
    if x.shape[-1] % n_heads != 0:
        raise ValueError("split_heads: channel count must be a multiple of n_heads")
    return torch.stack(x.chunk(n_heads, dim=-1), dim=1)


def merge_heads(x):
    return torch.cat(x.unbind(dim=1), dim=-1)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q, k, v = (split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))
    ctx, probs = attention(q, k, v, causal=causal)
    return merge_heads(ctx) @ w_o, probs


def attention_entropy(weights):
    return torch.special.entr(weights).sum(dim=-1)
