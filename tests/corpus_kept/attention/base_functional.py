# source: classic (no public example found)
# exercise: none
# accept: -
# why: correct submission in a functional style: einsum and torch.matmul, small private helpers, F imported for nothing
"""Attention assignment -- functional version.

Every product is an einsum or torch.matmul; shapes carried by '...'.
"""
import math

import torch
import torch.nn.functional as F  # noqa: F401  (used in an earlier draft)

NEG_INF = float("-inf")


def _last_two_swapped(t: torch.Tensor) -> torch.Tensor:
    return t.transpose(-1, -2)


def attention_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return torch.einsum("...td,...sd->...ts", q, k)


def scale_scores(scores: torch.Tensor, head_size: int) -> torch.Tensor:
    return scores * (1.0 / math.sqrt(head_size))


def causal_mask(T: int, device=None) -> torch.Tensor:
    rows = torch.arange(T, device=device).unsqueeze(1)
    cols = torch.arange(T, device=device).unsqueeze(0)
    return cols <= rows


def apply_mask(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    fill = torch.full_like(scores, NEG_INF)
    return torch.where(mask, scores, fill)


def softmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = scores.amax(dim=dim, keepdim=True)
    m = torch.nan_to_num(m, neginf=0.0).detach()
    e = (scores - m).exp()
    return e / e.sum(dim=dim, keepdim=True)


def mix_values(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return torch.matmul(weights, v)


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights


def bag_of_past(v: torch.Tensor) -> torch.Tensor:
    T = v.shape[-2]
    w = causal_mask(T, device=v.device).to(v.dtype)
    w = w / w.sum(dim=-1, keepdim=True)
    return torch.einsum("ts,...sd->...td", w, v)


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("C must be divisible by n_heads")
    return x.unflatten(-1, (n_heads, C // n_heads)).permute(0, 2, 1, 3)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, H, T, D = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, H * D)


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q, k, v = (split_heads(torch.matmul(x, w), n_heads) for w in (w_q, w_k, w_v))
    out, weights = attention(q, k, v, causal=causal)
    return torch.matmul(merge_heads(out), w_o), weights


def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    tiny = torch.finfo(weights.dtype).tiny
    return -(weights * weights.clamp(min=tiny).log()).sum(-1)
