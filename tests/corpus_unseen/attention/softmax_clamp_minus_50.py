# source: public code (code-search hit; the index does not name the repository): "x = torch.clamp(x, min=-50.0)  # clamp to avoid exp underflow -> nan"
# exercise: softmax
# accept: clamp|-50|exactly (0|zero)|non-?zero weight|e ?\*\* ?-50|leak
# why: clamps the shifted scores at -50, so a -inf position gets weight e**-50 instead of exactly 0

# attention from scratch -- my solutions
import math
import torch


def attention_scores(q, k):
    # (..., T, d) @ (..., d, S) -> (..., T, S)
    return q @ k.transpose(-2, -1)


def scale_scores(scores, head_size):
    return scores * head_size ** -0.5


def causal_mask(T, device=None):
    tril = torch.tril(torch.ones(T, T, device=device))
    return tril.bool()


def apply_mask(scores, mask):
    wei = scores.masked_fill(mask == 0, float('-inf'))
    return wei


def softmax(scores, dim=-1):
    x = scores - scores.max(dim=dim, keepdim=True).values
    x = torch.clamp(x, min=-50.0)  # avoid exp underflow
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def mix_values(weights, v):
    return weights @ v


def attention(q, k, v, causal=True, scale=True):
    T = q.shape[-2]
    hs = q.shape[-1]
    wei = attention_scores(q, k)
    if scale:
        wei = scale_scores(wei, hs)
    if causal:
        wei = apply_mask(wei, causal_mask(T, device=q.device))
    wei = softmax(wei, dim=-1)
    out = mix_values(wei, v)
    return out, wei


def bag_of_past(v):
    T = v.shape[-2]
    wei = torch.tril(torch.ones(T, T, device=v.device, dtype=v.dtype))
    wei = wei / wei.sum(1, keepdim=True)
    xbow = wei @ v
    return xbow


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("n_heads must divide C")
    hs = C // n_heads
    return x.view(B, T, n_heads, hs).transpose(1, 2)


def merge_heads(x):
    B, nh, T, hs = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, nh * hs)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    out, wei = attention(q, k, v, causal=causal)
    y = merge_heads(out) @ w_o
    return y, wei


def attention_entropy(weights):
    p = weights
    safe = torch.where(p > 0, p, torch.ones_like(p))
    return -(p * torch.log(safe)).sum(-1)
