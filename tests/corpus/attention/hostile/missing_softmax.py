# expect: below_full
# assignment: attention
# base: none
# message: `softmax` is not defined
# failing_only: softmax
# why: a complete solution that never defines softmax (attention normalises inline); only softmax's checks fail, each saying "`softmax` is not defined", every other function earns full marks

"""Attention from scratch: reference solution.

Every function takes tensors with any leading dims ``...`` (zero included),
keeps their device and floating dtype, never writes into its inputs, and is
differentiable.

Worked example from the lesson: the sentence "fluffy blue cat", and the
question "which earlier words should cat listen to?".

>>> import torch
>>> q_cat = torch.tensor([[1., 1.]])                      # (1, d=2)
>>> k = torch.tensor([[1., 1.], [1., 1.], [0., 0.]])      # fluffy, blue, cat
>>> v = torch.tensor([[2., 1.], [1., 2.], [1., 1.]])      # (S=3, d_v=2)
>>> s = attention_scores(q_cat, k)
>>> s.tolist()
[[2.0, 2.0, 0.0]]
>>> w = softmax(scale_scores(s, 2))
>>> [round(x, 3) for x in w[0].tolist()]
[0.446, 0.446, 0.108]
>>> new_cat = mix_values(w, v)
>>> [round(x, 3) for x in new_cat[0].tolist()]
[1.446, 1.446]
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
    m = scores.detach().amax(dim=-1, keepdim=True)
    m = m.masked_fill(m == float("-inf"), 0.0)
    e = torch.exp(scores - m)
    weights = e / e.sum(dim=-1, keepdim=True)
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
