# source: classic (no public example found)
# exercise: none
# accept: -
# why: correct: scales q before the product, bag of past as attention with zero scores

# attention.py
import math
import torch


def attention_scores(q, k):
    return torch.einsum("...id,...jd->...ij", q, k)


def scale_scores(scores, head_size):
    return scores / math.sqrt(float(head_size))


def causal_mask(T, device=None):
    i = torch.arange(T, device=device)
    return i.view(-1, 1) >= i.view(1, -1)


def apply_mask(scores, mask):
    return scores.masked_fill(mask.eq(False), float("-inf"))


def softmax(scores, dim=-1):
    m, _ = torch.max(scores, dim=dim, keepdim=True)
    ex = torch.exp(scores - m)
    return ex / ex.sum(dim=dim, keepdim=True)


def mix_values(weights, v):
    return torch.einsum("...ij,...jd->...id", weights, v)


def attention(q, k, v, causal=True, scale=True):
    d = q.shape[-1]
    if scale:
        # dividing q first is the same as dividing the scores
        q = scale_scores(q, d)
    s = attention_scores(q, k)
    if causal:
        s = apply_mask(s, causal_mask(s.shape[-1], device=s.device))
    w = softmax(s, dim=-1)
    return mix_values(w, v), w


def bag_of_past(v):
    # uniform attention: all scores equal, so each row averages its past
    zeros = torch.zeros_like(v)
    out, _ = attention(zeros, zeros, v, causal=True, scale=False)
    return out


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads:
        raise ValueError("n_heads does not divide C")
    return x.view(B, T, n_heads, C // n_heads).permute(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, D = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, H * D)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    out, w = attention(split_heads(x @ w_q, n_heads),
                       split_heads(x @ w_k, n_heads),
                       split_heads(x @ w_v, n_heads), causal=causal)
    return merge_heads(out) @ w_o, w


def attention_entropy(weights):
    is_zero = (weights == 0).to(weights.dtype)
    return -(weights * torch.log(weights + is_zero)).sum(-1)
