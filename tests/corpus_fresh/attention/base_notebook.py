# source: classic (no public example found); written for this corpus as an exported notebook with helpers and asserts
# exercise: none
# accept: -
# why: correct submission: notebook style, small helpers, shape asserts, a check cell at the end
import math

import torch

# ---- cell 1: helpers -------------------------------------------------------
NEG_INF = float("-inf")


def _swap_last_two(t):
    return t.transpose(-2, -1)


def _project(x, w):
    assert x.shape[-1] == w.shape[0], "x @ w needs matching inner dims"
    return x @ w


# ---- cell 2: scores, scale, mask ------------------------------------------
def attention_scores(q, k):
    assert q.shape[-1] == k.shape[-1], "q and k must share d"
    return q @ _swap_last_two(k)


def scale_scores(scores, head_size):
    assert head_size > 0
    factor = math.sqrt(head_size)
    return scores / factor


def causal_mask(T, device=None):
    full = torch.ones((T, T), dtype=torch.bool, device=device)
    mask = torch.tril(full)
    assert mask.dtype == torch.bool
    return mask


def apply_mask(scores, mask):
    assert mask.dtype == torch.bool, "mask must be bool"
    return scores.masked_fill(~mask, NEG_INF)


# ---- cell 3: softmax and mixing -------------------------------------------
def _row_shift(scores, dim):
    shift = scores.detach().max(dim=dim, keepdim=True).values
    return shift.masked_fill(shift == NEG_INF, 0.0)


def softmax(scores, dim=-1):
    exps = torch.exp(scores - _row_shift(scores, dim))
    return exps / exps.sum(dim=dim, keepdim=True)


def mix_values(weights, v):
    assert weights.shape[-1] == v.shape[-2]
    return torch.matmul(weights, v)


# ---- cell 4: attention ------------------------------------------------------
def attention(q, k, v, causal=True, scale=True):
    assert q.shape[-2] == k.shape[-2] == v.shape[-2], "self-attention: one T"
    T, head_size = q.shape[-2], q.shape[-1]
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, head_size)
    if causal:
        scores = apply_mask(scores, causal_mask(T, device=q.device))
    weights = softmax(scores, dim=-1)
    out = mix_values(weights, v)
    return out, weights


def bag_of_past(v):
    T = v.shape[-2]
    w = torch.tril(torch.ones(T, T, device=v.device, dtype=v.dtype))
    w = w / w.sum(dim=1, keepdim=True)
    return w @ v


# ---- cell 5: heads ---------------------------------------------------------
def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError(f"C={C} is not a multiple of n_heads={n_heads}")
    d_head = C // n_heads
    return x.reshape(B, T, n_heads, d_head).permute(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, d_head = x.shape
    return x.permute(0, 2, 1, 3).contiguous().view(B, T, H * d_head)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(_project(x, w_q), n_heads)
    k = split_heads(_project(x, w_k), n_heads)
    v = split_heads(_project(x, w_v), n_heads)
    out, weights = attention(q, k, v, causal=causal)
    assert weights.shape[1] == n_heads
    return _project(merge_heads(out), w_o), weights


# ---- cell 6: entropy ---------------------------------------------------------
def attention_entropy(weights):
    p = weights
    log_p = torch.log(torch.clamp(p, min=torch.finfo(p.dtype).tiny))
    return -(p * log_p).sum(dim=-1)


# ---- cell 7: check against the worked example -------------------------------
_q = torch.tensor([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0]])
_k = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
_v = torch.tensor([[3.0, 0.0], [0.0, 3.0], [1.0, 1.0]])
_out, _w = attention(_q, _k, _v)
assert torch.allclose(_w[1], torch.tensor([0.5, 0.5, 0.0]))
assert torch.allclose(_out[0], torch.tensor([3.0, 0.0]))
