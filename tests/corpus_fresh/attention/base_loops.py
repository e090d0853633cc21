# source: public code (code-search hit; AttentionX/learnGPT-team3 week1/src/head_v1.py): "for t in range(T): x_past = x[b, :t+1]" (loop style followed, no bug)
# exercise: none
# accept: -
# why: correct submission: explicit Python loops over keys, positions and heads
import math

import torch


def attention_scores(q, k):
    S = k.shape[-2]
    cols = []
    for s in range(S):
        key_s = k[..., s : s + 1, :]  # (..., 1, d)
        cols.append((q * key_s).sum(dim=-1))  # (..., T)
    return torch.stack(cols, dim=-1)


def scale_scores(scores, head_size):
    return scores / math.sqrt(head_size)


def causal_mask(T, device=None):
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    for t in range(T):
        mask[t, : t + 1] = True
    return mask


def apply_mask(scores, mask):
    out = scores.clone()
    out[~mask.expand(scores.shape)] = float("-inf")
    return out


def softmax(scores, dim=-1):
    biggest = scores.max(dim=dim, keepdim=True).values.detach()
    biggest[torch.isinf(biggest)] = 0.0
    e = torch.exp(scores - biggest)
    return e / e.sum(dim=dim, keepdim=True)


def mix_values(weights, v):
    S = v.shape[-2]
    total = None
    for s in range(S):
        term = weights[..., :, s : s + 1] * v[..., s : s + 1, :]
        total = term if total is None else total + term
    return total


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    if causal:
        T = q.shape[-2]
        scores = apply_mask(scores, causal_mask(T, device=q.device))
    weights = softmax(scores, dim=-1)
    out = mix_values(weights, v)
    return out, weights


def bag_of_past(v):
    T = v.shape[-2]
    rows = []
    for t in range(T):
        rows.append(v[..., : t + 1, :].mean(dim=-2))
    return torch.stack(rows, dim=-2)


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("C must be divisible by n_heads")
    d = C // n_heads
    heads = []
    for h in range(n_heads):
        heads.append(x[:, :, h * d : (h + 1) * d])
    return torch.stack(heads, dim=1)


def merge_heads(x):
    H = x.shape[1]
    pieces = []
    for h in range(H):
        pieces.append(x[:, h])
    return torch.cat(pieces, dim=-1)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    out, weights = attention(q, k, v, causal=causal)
    out = merge_heads(out) @ w_o
    return out, weights


def attention_entropy(weights):
    tiny = torch.finfo(weights.dtype).tiny
    terms = weights * torch.log(weights.clamp_min(tiny))
    return -terms.sum(dim=-1)
