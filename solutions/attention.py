"""Attention from scratch: reference solution.

Every function takes tensors with any leading dims ``...`` (zero included),
keeps their device and floating dtype, never writes into its inputs, and is
differentiable.

The lesson's worked example (fluffy / blue / cat) lives in the docstring of
``exercises/attention.py``; ``tests/test_reference_and_stubs.py`` runs it
against this file.
"""

import math

import torch


def attention_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Raw dot products of every query with every key: ``q @ kᵀ``.

    q: (..., T, d), k: (..., S, d) -> (..., T, S). No scaling here.
    """
    return q @ k.transpose(-2, -1)  # (..., T, d) @ (..., d, S) -> (..., T, S)


def scale_scores(scores: torch.Tensor, head_size: int) -> torch.Tensor:
    """Divide the scores by ``sqrt(head_size)`` so their spread does not grow with d."""
    return scores / math.sqrt(head_size)


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Bool (T, T) mask, True where token t may attend to token s (s <= t).

    Built directly on ``device`` (CPU when None).
    """
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()  # (T, T)


def apply_mask(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """New tensor: ``scores`` with ``-inf`` wherever ``mask`` is False.

    scores: (..., T, S), mask: bool, broadcastable -> (..., T, S).
    """
    return scores.masked_fill(~mask, float("-inf"))


def softmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Numerically stable softmax along ``dim``, by hand.

    Shifting by the max changes nothing mathematically but keeps exp() from
    overflowing; exp(-inf) = 0, so masked positions get weight exactly 0.
    """
    row_max = scores.detach().amax(dim=dim, keepdim=True)  # (..., 1, ...)
    # A row whose max is -inf would give -inf - (-inf) = NaN: shift it by 0.
    row_max = row_max.masked_fill(row_max == float("-inf"), 0.0)
    e = torch.exp(scores - row_max)  # all in [0, 1]
    return e / e.sum(dim=dim, keepdim=True)


def mix_values(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Weighted sum of the values: weights (..., T, S) @ v (..., S, d_v) -> (..., T, d_v)."""
    return weights @ v


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = True,
    scale: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product self-attention.

    q, k: (..., T, d), v: (..., T, d_v) -> (out (..., T, d_v), weights (..., T, T)).
    Order: scores, scale, mask, softmax, mix.
    """
    scores = attention_scores(q, k)  # (..., T, T)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)  # (..., T, T), rows sum to 1
    return mix_values(weights, v), weights  # (..., T, d_v), (..., T, T)


def bag_of_past(v: torch.Tensor) -> torch.Tensor:
    """Uniform-attention baseline: row t is the mean of v[..., :t+1, :].

    v: (..., T, d) -> (..., T, d). Same as attention with weight 1/(t+1) on
    every allowed position.
    """
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, device=v.device, dtype=v.dtype)  # (T,) = 1..T
    return v.cumsum(dim=-2) / counts.unsqueeze(-1)  # (..., T, d) / (T, 1)


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(B, T, C) -> (B, H, T, C // H); head h holds channels h*d:(h+1)*d."""
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError(
            f"split_heads: C={C} channels cannot be split evenly into n_heads={n_heads}"
        )
    d_head = C // n_heads
    return x.view(B, T, n_heads, d_head).transpose(1, 2)  # (B, H, T, d_head)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, H, T, d_head) -> (B, T, H * d_head), the exact inverse of split_heads."""
    B, H, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d_head)  # (B, T, C)


def multi_head_attention(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    w_o: torch.Tensor,
    n_heads: int,
    causal: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Multi-head self-attention with (C, C) weight matrices applied as ``x @ w``.

    x: (B, T, C) -> (out (B, T, C), weights (B, H, T, T)); each head is
    scaled by sqrt(C // H).
    """
    q = split_heads(x @ w_q, n_heads)  # (B, H, T, d_head)
    k = split_heads(x @ w_k, n_heads)  # (B, H, T, d_head)
    v = split_heads(x @ w_v, n_heads)  # (B, H, T, d_head)
    out, weights = attention(q, k, v, causal=causal)  # (B, H, T, d_head), (B, H, T, T)
    return merge_heads(out) @ w_o, weights  # (B, T, C), (B, H, T, T)


def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of each attention row: -(p * log p).sum(-1).

    weights: (..., T, S) -> (..., T). Zero weights count as 0 · log 0 = 0;
    clamping before the log keeps both the value and the gradient finite.
    """
    p = weights
    log_p = torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))  # finite where p == 0
    return -(p * log_p).sum(dim=-1)
