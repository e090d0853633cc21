# source: classic (no public example found); written for this corpus around torch.where and index comparisons
# exercise: none
# accept: -
# why: correct submission: masks built from arange comparisons and applied with torch.where
import math

import torch


def attention_scores(q, k):
    return torch.matmul(q, k.mT)


def scale_scores(scores, head_size):
    return scores / (head_size ** 0.5)


def causal_mask(T, device=None):
    rows = torch.arange(T, device=device).unsqueeze(1)
    cols = torch.arange(T, device=device).unsqueeze(0)
    return cols <= rows


def apply_mask(scores, mask):
    neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
    return torch.where(mask, scores, neg_inf)


def softmax(scores, dim=-1):
    m = scores.amax(dim=dim, keepdim=True).detach()
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    num = torch.exp(scores - m)
    den = num.sum(dim=dim, keepdim=True)
    return num / den


def mix_values(weights, v):
    return torch.matmul(weights, v)


def attention(q, k, v, causal=True, scale=True):
    T, d = q.shape[-2], q.shape[-1]
    s = attention_scores(q, k)
    if scale:
        s = scale_scores(s, d)
    if causal:
        s = apply_mask(s, causal_mask(T, device=q.device))
    w = softmax(s, dim=-1)
    return mix_values(w, v), w


def bag_of_past(v):
    T = v.shape[-2]
    running = torch.cumsum(v, dim=-2)
    n = torch.arange(1, T + 1, device=v.device, dtype=v.dtype).unsqueeze(-1)
    return running / n


def split_heads(x, n_heads):
    C = x.shape[-1]
    if C % n_heads:
        raise ValueError(f"split_heads: {C} % {n_heads} != 0")
    return x.unflatten(-1, (n_heads, C // n_heads)).transpose(1, 2)


def merge_heads(x):
    return x.transpose(1, 2).flatten(start_dim=2)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    qh = split_heads(torch.matmul(x, w_q), n_heads)
    kh = split_heads(torch.matmul(x, w_k), n_heads)
    vh = split_heads(torch.matmul(x, w_v), n_heads)
    out, w = attention(qh, kh, vh, causal=causal)
    return torch.matmul(merge_heads(out), w_o), w


def attention_entropy(weights):
    p = weights
    positive = p > 0
    safe = torch.where(positive, p, torch.ones_like(p))
    plogp = torch.where(positive, p * torch.log(safe), torch.zeros_like(p))
    return -plogp.sum(dim=-1)
