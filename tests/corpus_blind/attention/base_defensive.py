# source: classic (no public example found)
# exercise: none
# accept: -
# why: correct submission in a defensive style: type hints, named intermediate shapes and asserts on every input

"""Attention from scratch -- defensive version with checks on every input."""

from __future__ import annotations

import math
from typing import Optional, Tuple

import torch
from torch import Tensor


def _check_float(name: str, t: Tensor) -> None:
    assert isinstance(t, torch.Tensor), f"{name} must be a tensor"
    assert t.is_floating_point(), f"{name} must be a floating tensor, got {t.dtype}"


def attention_scores(q: Tensor, k: Tensor) -> Tensor:
    _check_float("q", q)
    _check_float("k", k)
    assert q.dim() >= 2 and k.dim() >= 2, "q and k need at least (T, d)"
    assert q.shape[-1] == k.shape[-1], "q and k must share the feature size d"
    k_t = torch.transpose(k, -2, -1)  # (..., d, S)
    scores = torch.matmul(q, k_t)  # (..., T, S)
    return scores


def scale_scores(scores: Tensor, head_size: int) -> Tensor:
    _check_float("scores", scores)
    assert int(head_size) > 0, "head_size must be positive"
    factor = 1.0 / math.sqrt(head_size)
    return scores * factor


def causal_mask(T: int, device: Optional[torch.device | str] = None) -> Tensor:
    assert int(T) >= 0, "T must be a non-negative length"
    full = torch.ones((T, T), dtype=torch.bool, device=device)
    mask = torch.tril(full, diagonal=0)  # row t: columns 0..t
    assert mask.dtype == torch.bool
    return mask


def apply_mask(scores: Tensor, mask: Tensor) -> Tensor:
    _check_float("scores", scores)
    assert mask.dtype == torch.bool, "mask must be bool (True = may attend)"
    neg_inf = torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device)
    masked = torch.where(mask, scores, neg_inf)
    assert masked.shape == scores.shape, "the mask must broadcast to the scores"
    return masked


def softmax(scores: Tensor, dim: int = -1) -> Tensor:
    _check_float("scores", scores)
    with torch.no_grad():
        shift = torch.amax(scores, dim=dim, keepdim=True)
        shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
    numer = torch.exp(scores - shift)
    denom = torch.sum(numer, dim=dim, keepdim=True)
    return numer / denom


def mix_values(weights: Tensor, v: Tensor) -> Tensor:
    _check_float("weights", weights)
    _check_float("v", v)
    assert weights.shape[-1] == v.shape[-2], "weights (..., T, S) need v (..., S, d_v)"
    return torch.matmul(weights, v)  # (..., T, d_v)


def attention(
    q: Tensor, k: Tensor, v: Tensor, causal: bool = True, scale: bool = True
) -> Tuple[Tensor, Tensor]:
    assert q.shape[-2] == k.shape[-2] == v.shape[-2], "self-attention: one length T"
    T, d = q.shape[-2], q.shape[-1]
    scores = attention_scores(q, k)  # (..., T, T)
    if scale:
        scores = scale_scores(scores, d)
    if causal:
        scores = apply_mask(scores, causal_mask(T, device=q.device))
    weights = softmax(scores, dim=-1)  # (..., T, T)
    out = mix_values(weights, v)  # (..., T, d_v)
    return out, weights


def bag_of_past(v: Tensor) -> Tensor:
    _check_float("v", v)
    T = v.shape[-2]
    lower = causal_mask(T, device=v.device).to(v.dtype)  # (T, T) of 0/1
    uniform = lower / lower.sum(dim=-1, keepdim=True)  # row t: 1/(t+1) on 0..t
    return torch.matmul(uniform, v)  # (..., T, d)


def split_heads(x: Tensor, n_heads: int) -> Tensor:
    _check_float("x", x)
    assert x.dim() == 3, "split_heads takes (B, T, C)"
    B, T, C = x.shape
    if n_heads <= 0 or C % n_heads != 0:
        raise ValueError(f"cannot split C={C} into {n_heads} equal heads")
    d_head = C // n_heads
    per_head = x.reshape(B, T, n_heads, d_head)  # (B, T, H, d_head)
    return per_head.permute(0, 2, 1, 3)  # (B, H, T, d_head)


def merge_heads(x: Tensor) -> Tensor:
    _check_float("x", x)
    assert x.dim() == 4, "merge_heads takes (B, H, T, d_head)"
    B, H, T, d_head = x.shape
    side_by_side = x.permute(0, 2, 1, 3)  # (B, T, H, d_head)
    return side_by_side.reshape(B, T, H * d_head)  # (B, T, C)


def multi_head_attention(
    x: Tensor,
    w_q: Tensor,
    w_k: Tensor,
    w_v: Tensor,
    w_o: Tensor,
    n_heads: int,
    causal: bool = True,
) -> Tuple[Tensor, Tensor]:
    assert x.dim() == 3, "x must be (B, T, C)"
    C = x.shape[-1]
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v), ("w_o", w_o)):
        assert w.shape == (C, C), f"{name} must be ({C}, {C})"
    q = split_heads(x @ w_q, n_heads)  # (B, H, T, d_head)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    heads_out, weights = attention(q, k, v, causal=causal)  # (B, H, T, d_head), (B, H, T, T)
    out = merge_heads(heads_out) @ w_o  # (B, T, C)
    return out, weights


def attention_entropy(weights: Tensor) -> Tensor:
    _check_float("weights", weights)
    tiny = torch.finfo(weights.dtype).tiny
    log_p = torch.log(torch.clamp(weights, min=tiny))  # finite where p == 0
    return -torch.sum(weights * log_p, dim=-1)  # (..., T)
