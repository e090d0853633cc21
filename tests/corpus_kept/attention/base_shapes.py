# source: classic (no public example found)
# exercise: none
# accept: -
# why: correct submission with every shape written out and checked by asserts, loops over heads in multi_head_attention
import math
import torch


def attention_scores(q, k):
    # q: (..., T, d)   k: (..., S, d)   ->   (..., T, S)
    assert q.shape[-1] == k.shape[-1], "q and k need the same d"
    k_t = k.transpose(-2, -1)          # (..., d, S)
    scores = torch.matmul(q, k_t)      # (..., T, S)
    assert scores.shape[-2:] == (q.shape[-2], k.shape[-2])
    return scores


def scale_scores(scores, head_size):
    # (..., T, S) -> (..., T, S), divided by sqrt(d_head)
    assert head_size > 0
    factor = math.sqrt(head_size)
    return scores / factor


def causal_mask(T, device=None):
    # (T, T) bool, row t allows columns 0..t
    mask = torch.ones(T, T, dtype=torch.bool, device=device).tril(diagonal=0)
    assert mask.shape == (T, T) and mask.dtype == torch.bool
    return mask


def apply_mask(scores, mask):
    # scores (..., T, S), mask broadcastable, False -> -inf
    assert mask.dtype == torch.bool
    out = scores.masked_fill(~mask, float("-inf"))
    assert out.shape == scores.shape
    return out


def softmax(scores, dim=-1):
    # any shape; normalise along dim
    row_max = scores.max(dim=dim, keepdim=True).values       # (..., 1 at dim, ...)
    row_max = torch.where(row_max == float("-inf"), torch.zeros_like(row_max), row_max)
    shifted = scores - row_max.detach()                       # all <= 0
    exps = torch.exp(shifted)
    total = exps.sum(dim=dim, keepdim=True)                   # (..., 1 at dim, ...)
    probs = exps / total
    assert probs.shape == scores.shape
    return probs


def mix_values(weights, v):
    # weights (..., T, S)   v (..., S, d_v)   ->   (..., T, d_v)
    assert weights.shape[-1] == v.shape[-2]
    out = torch.matmul(weights, v)
    return out


def attention(q, k, v, causal=True, scale=True):
    # q, k (..., T, d)   v (..., T, d_v)
    T, d = q.shape[-2], q.shape[-1]
    scores = attention_scores(q, k)                   # (..., T, T)
    if scale:
        scores = scale_scores(scores, d)
    if causal:
        scores = apply_mask(scores, causal_mask(T, device=q.device))
    weights = softmax(scores, dim=-1)                 # (..., T, T)
    out = mix_values(weights, v)                      # (..., T, d_v)
    assert out.shape[-2] == T and weights.shape[-2:] == (T, T)
    return out, weights


def bag_of_past(v):
    # v (..., T, d) -> (..., T, d), row t = mean of rows 0..t
    T = v.shape[-2]
    running = torch.cumsum(v, dim=-2)                                  # (..., T, d)
    n = torch.arange(1, T + 1, dtype=v.dtype, device=v.device)          # (T,)
    out = running / n.reshape(T, 1)                                     # (..., T, d)
    assert out.shape == v.shape
    return out


def split_heads(x, n_heads):
    # (B, T, C) -> (B, H, T, C // H)
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError(f"C={C} is not a multiple of n_heads={n_heads}")
    d_head = C // n_heads
    x4 = x.reshape(B, T, n_heads, d_head)      # (B, T, H, d_head)
    out = x4.permute(0, 2, 1, 3)               # (B, H, T, d_head)
    assert out.shape == (B, n_heads, T, d_head)
    return out


def merge_heads(x):
    # (B, H, T, d_head) -> (B, T, H * d_head)
    B, H, T, d_head = x.shape
    x4 = x.permute(0, 2, 1, 3)                 # (B, T, H, d_head)
    out = x4.reshape(B, T, H * d_head)         # (B, T, C)
    assert out.shape == (B, T, H * d_head)
    return out


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    # x (B, T, C), w_* (C, C)
    B, T, C = x.shape
    assert w_q.shape == (C, C) and w_o.shape == (C, C)
    q = split_heads(x @ w_q, n_heads)          # (B, H, T, d_head)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    outs, weights = [], []
    for h in range(n_heads):
        o_h, w_h = attention(q[:, h], k[:, h], v[:, h], causal=causal)   # (B, T, d_head), (B, T, T)
        outs.append(o_h)
        weights.append(w_h)
    out = torch.stack(outs, dim=1)             # (B, H, T, d_head)
    wei = torch.stack(weights, dim=1)          # (B, H, T, T)
    y = merge_heads(out) @ w_o                 # (B, T, C)
    assert y.shape == (B, T, C) and wei.shape == (B, n_heads, T, T)
    return y, wei


def attention_entropy(weights):
    # (..., T, S) -> (..., T)
    logp = torch.log(torch.where(weights > 0, weights, torch.ones_like(weights)))
    h = -(weights * logp).sum(dim=-1)
    assert h.shape == weights.shape[:-1]
    return h
