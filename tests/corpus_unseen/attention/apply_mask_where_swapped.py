# source: https://github.com/lucidrains/halonet-pytorch/issues/4
# exercise: apply_mask
# accept: invert|revers|opposite|~mask|where (the )?mask is true|allowed|flipped|swap
# why: torch.where arguments swapped: -inf goes where the mask is True (allowed) and the blocked scores are kept

"""Attention assignment -- einsum edition."""
import math

import torch


def attention_scores(q, k):
    return torch.einsum('...td,...sd->...ts', q, k)


def scale_scores(scores, head_size):
    return scores / math.sqrt(head_size)


def causal_mask(T, device=None):
    pos = torch.arange(T, device=device)
    # row = query t, column = key s; allowed when s <= t
    return pos[None, :] <= pos[:, None]


def apply_mask(scores, mask):
    neg_inf = torch.full_like(scores, float('-inf'))
    return torch.where(mask, neg_inf, scores)


def softmax(scores, dim=-1):
    shift = scores.amax(dim=dim, keepdim=True).detach()
    exps = (scores - shift).exp()
    return exps / exps.sum(dim=dim, keepdim=True)


def mix_values(weights, v):
    return torch.einsum('...ts,...sd->...td', weights, v)


def attention(q, k, v, causal=True, scale=True):
    d = q.size(-1)
    s = attention_scores(q, k)
    if scale:
        s = scale_scores(s, d)
    if causal:
        s = apply_mask(s, causal_mask(q.size(-2), device=q.device))
    a = softmax(s, dim=-1)
    return mix_values(a, v), a


def bag_of_past(v):
    T = v.size(-2)
    running = torch.cumsum(v, dim=-2)
    n = torch.arange(1, T + 1, device=v.device, dtype=v.dtype)
    return running / n[:, None]


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads:
        raise ValueError(f"cannot split {C} channels into {n_heads} heads")
    return x.reshape(B, T, n_heads, C // n_heads).permute(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, D = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, H * D)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    Q = split_heads(torch.einsum('btc,cd->btd', x, w_q), n_heads)
    K = split_heads(torch.einsum('btc,cd->btd', x, w_k), n_heads)
    V = split_heads(torch.einsum('btc,cd->btd', x, w_v), n_heads)
    heads, attn = attention(Q, K, V, causal=causal)
    out = torch.einsum('btc,cd->btd', merge_heads(heads), w_o)
    return out, attn


def attention_entropy(weights):
    return -torch.xlogy(weights, weights).sum(dim=-1)
