# source: classic (no public example found); written for this corpus in an einsum-first style
# exercise: none
# accept: -
# why: correct submission: every product is an einsum
import math

import torch


def attention_scores(q, k):
    # one dot product per (query t, key s) pair
    return torch.einsum("...td,...sd->...ts", q, k)


def scale_scores(scores, head_size):
    return scores / math.sqrt(head_size)


def causal_mask(T, device=None):
    pos = torch.arange(T, device=device)
    # row t may look at column s when s <= t
    return pos[:, None] >= pos[None, :]


def apply_mask(scores, mask):
    return scores.masked_fill(mask.logical_not(), float("-inf"))


def softmax(scores, dim=-1):
    top = scores.amax(dim=dim, keepdim=True).detach()
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    ex = torch.exp(scores - top)
    return ex / ex.sum(dim=dim, keepdim=True)


def mix_values(weights, v):
    return torch.einsum("...ts,...sd->...td", weights, v)


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights


def bag_of_past(v):
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, device=v.device, dtype=v.dtype)
    return torch.einsum("...td,t->...td", v.cumsum(dim=-2), 1.0 / counts)


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError(f"cannot split {C} channels into {n_heads} heads")
    return torch.einsum("bthd->bhtd", x.reshape(B, T, n_heads, C // n_heads))


def merge_heads(x):
    B, H, T, D = x.shape
    return torch.einsum("bhtd->bthd", x).reshape(B, T, H * D)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(torch.einsum("btc,cd->btd", x, w_q), n_heads)
    k = split_heads(torch.einsum("btc,cd->btd", x, w_k), n_heads)
    v = split_heads(torch.einsum("btc,cd->btd", x, w_v), n_heads)
    out, weights = attention(q, k, v, causal=causal)
    return torch.einsum("btc,cd->btd", merge_heads(out), w_o), weights


def attention_entropy(weights):
    p = weights
    logp = torch.log(p.clamp(min=torch.finfo(p.dtype).tiny))
    return -torch.einsum("...s,...s->...", p, logp)
