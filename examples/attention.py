"""An example student submission for `attention`, with two classic bugs left in.

Grade it with: grader grade examples/attention.py --assignment attention --out scorecard.json
Bug 1: softmax forgets to subtract the row max (overflows at large scores).
Bug 2: bag_of_past divides every row by T instead of t + 1.
"""

import math

import torch


def attention_scores(q, k):
    return torch.einsum("...td,...sd->...ts", q, k)


def scale_scores(scores, head_size):
    return scores * (1.0 / math.sqrt(head_size))


def causal_mask(T, device=None):
    idx = torch.arange(T, device=device)
    return idx[None, :] <= idx[:, None]


def apply_mask(scores, mask):
    return torch.where(mask, scores, torch.full_like(scores, float("-inf")))


def softmax(scores, dim=-1):
    e = torch.exp(scores)  # bug 1: no max subtraction
    return e / e.sum(dim=dim, keepdim=True)


def mix_values(weights, v):
    return torch.einsum("...ts,...sd->...td", weights, v)


def attention(q, k, v, causal=True, scale=True):
    s = attention_scores(q, k)
    s = scale_scores(s, q.size(-1)) if scale else s
    if causal:
        s = apply_mask(s, causal_mask(q.size(-2), device=q.device))
    w = softmax(s)
    return mix_values(w, v), w


def bag_of_past(v):
    return v.cumsum(-2) / v.size(-2)  # bug 2: row t averages t + 1 tokens


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads:
        raise ValueError(f"{C} channels cannot be split into {n_heads} heads")
    return x.reshape(B, T, n_heads, C // n_heads).permute(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, H * d)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q, k, v = (split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))
    out, weights = attention(q, k, v, causal=causal)
    return merge_heads(out) @ w_o, weights


def attention_entropy(weights):
    return -torch.special.xlogy(weights, weights).sum(-1)
