# source: classic (no public example found)
# exercise: none
# accept: -
# why: correct: scores and mixing built with explicit loops over keys

# Attention from scratch. I did the first version with for loops so I could
# see every dot product, and kept it because it passes.
import math
import torch


def attention_scores(q, k):
    S = k.shape[-2]
    cols = []
    for j in range(S):
        key_j = k[..., j:j + 1, :]            # (..., 1, d)
        cols.append((q * key_j).sum(dim=-1))  # (..., T)
    return torch.stack(cols, dim=-1)          # (..., T, S)


def scale_scores(scores, head_size):
    return scores / math.sqrt(head_size)


def causal_mask(T, device=None):
    rows = torch.arange(T, device=device).unsqueeze(1)
    cols = torch.arange(T, device=device).unsqueeze(0)
    return cols <= rows


def apply_mask(scores, mask):
    return scores.masked_fill(~mask, -float('inf'))


def softmax(scores, dim=-1):
    biggest = scores.max(dim=dim, keepdim=True).values
    e = (scores - biggest).exp()
    total = e.sum(dim=dim, keepdim=True)
    return e / total


def mix_values(weights, v):
    S = v.shape[-2]
    out = 0
    for s in range(S):
        # weight of key s for every query, times value s
        out = out + weights[..., :, s:s + 1] * v[..., s:s + 1, :]
    return out


def attention(q, k, v, causal=True, scale=True):
    d_k = q.shape[-1]
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, d_k)
    if causal:
        scores = apply_mask(scores, causal_mask(scores.shape[-2], device=scores.device))
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights


def bag_of_past(v):
    T = v.shape[-2]
    total = torch.zeros_like(v[..., :1, :])
    rows = []
    for t in range(T):
        total = total + v[..., t:t + 1, :]
        rows.append(total / (t + 1))
    return torch.cat(rows, dim=-2)


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("C must be divisible by n_heads")
    d_head = C // n_heads
    return x.reshape(B, T, n_heads, d_head).transpose(1, 2)


def merge_heads(x):
    B, H, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d_head)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q_all = x @ w_q
    k_all = x @ w_k
    v_all = x @ w_v
    q = split_heads(q_all, n_heads)
    k = split_heads(k_all, n_heads)
    v = split_heads(v_all, n_heads)
    o, w = attention(q, k, v, causal=causal)
    return merge_heads(o) @ w_o, w


def attention_entropy(weights):
    terms = torch.zeros_like(weights)
    nz = weights > 0
    terms = torch.where(nz, weights * torch.log(torch.where(nz, weights, torch.ones_like(weights))), terms)
    return -terms.sum(-1)
