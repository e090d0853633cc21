"""Assignment ``attention``: attention from scratch.

Fill in each function below; each one raises ``NotImplementedError`` until
you do. Every function must accept any leading dims ``...`` (a plain
``(T, d)`` tensor included), keep the device and floating dtype of its
inputs, never modify its inputs in place, and stay differentiable. Use
plain tensor operations: ``torch.softmax``, ``F.softmax`` and
``log_softmax`` are off limits in ``softmax``.

Worked example from the lesson, three tokens "fluffy blue cat" with d = 2:
each token looks back at itself and the words before it. Once your functions
work, this runs (``python -m doctest -v attention.py``):

>>> import torch
>>> q = torch.tensor([[0., 1.], [0., 1.], [2., 0.]])   # queries: fluffy, blue, cat
>>> k = torch.tensor([[1., 0.], [1., 0.], [0., 1.]])   # keys
>>> v = torch.tensor([[3., 0.], [0., 3.], [1., 1.]])   # values
>>> s = scale_scores(attention_scores(q, k), 2)
>>> [round(x, 3) for x in s[2].tolist()]              # cat's scores, divided by sqrt(2)
[1.414, 1.414, 0.0]
>>> w = softmax(apply_mask(s, causal_mask(3)))
>>> [[round(x, 3) for x in row] for row in w.tolist()]
[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.446, 0.446, 0.108]]
>>> [[round(x, 3) for x in row] for row in mix_values(w, v).tolist()]
[[3.0, 0.0], [1.5, 1.5], [1.446, 1.446]]
"""

import math

import torch


def attention_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """Raw dot products of every query with every key.

    q: (..., T, d), k: (..., S, d) -> (..., T, S).
    Multiply q by k with its last two dims swapped (``k.transpose(-2, -1)``,
    not ``k.T``, which reverses *all* dims once there is a batch).
    No scaling here: that is ``scale_scores``' job.
    """
    raise NotImplementedError


def scale_scores(scores: torch.Tensor, head_size: int) -> torch.Tensor:
    """Divide the scores by the square root of ``head_size``.

    scores: any shape -> same shape and dtype.
    Dividing by sqrt(d) keeps the scores' spread from growing with d, so
    softmax does not saturate. Divide by sqrt(head_size), not by head_size.
    """
    raise NotImplementedError


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Bool (T, T) mask: True where token t may attend to token s, i.e. s <= t.

    -> bool (T, T), lower triangle including the diagonal (row t: columns 0..t).
    Build it on ``device`` (CPU when None), e.g. ``torch.ones(...,
    device=device)``: a mask made on the CPU breaks on a GPU.
    """
    raise NotImplementedError


def apply_mask(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Set every score where ``mask`` is False to ``-inf``.

    scores: (..., T, S), mask: bool, broadcastable -> (..., T, S).
    Use ``masked_fill`` on the positions where the mask is *False*.
    Return a new tensor: ``masked_fill_`` would change the caller's scores.
    Use -inf, not a big negative number or 0: softmax then gives exactly 0.
    """
    raise NotImplementedError


def softmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax along ``dim``, written by hand: exp, then divide by the sum.

    scores: any float tensor -> same shape; slices along ``dim`` sum to 1.
    Subtract the max along ``dim`` first (keepdim=True) or exp(1e4)
    overflows to inf and you get NaN. A -inf score must give weight
    exactly 0. No torch.softmax / F.softmax / log_softmax.
    """
    raise NotImplementedError


def mix_values(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Each token's new vector: the weighted sum of the values.

    weights: (..., T, S), v: (..., S, d_v) -> (..., T, d_v).
    One matrix product: row t of the result is sum_s weights[t, s] * v[s].
    """
    raise NotImplementedError


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = True,
    scale: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product self-attention, built from the functions above.

    q, k: (..., T, d), v: (..., T, d_v) -> (out (..., T, d_v), weights (..., T, T)).
    Scores, then scale by sqrt(d) (if ``scale``), then mask (if ``causal``,
    with the mask built on q's device), then softmax, then mix.
    Scale, then mask, then softmax: never zero weights after softmax,
    or the rows no longer sum to 1.
    """
    raise NotImplementedError


def bag_of_past(v: torch.Tensor) -> torch.Tensor:
    """The uniform-attention baseline: each token averages itself and its past.

    v: (..., T, d) -> (..., T, d), with out[..., t, :] = mean(v[..., :t+1, :]).
    A running sum along the T dim (``cumsum``) divided by the counts 1..T
    does it without a loop. Divide row t by t+1, not by T.
    """
    raise NotImplementedError


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Cut the channels into heads.

    x: (B, T, C) -> (B, n_heads, T, C // n_heads); head h holds channels
    h*d_head : (h+1)*d_head. View as (B, T, H, d_head), then swap T and H.
    A bare view to (B, H, T, d_head) without the transpose mixes tokens and heads.
    Raise ValueError if C is not divisible by n_heads.
    """
    raise NotImplementedError


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Glue the heads back together: the exact inverse of ``split_heads``.

    x: (B, H, T, d_head) -> (B, T, H * d_head).
    Swap H and T back first, then reshape. After the transpose the tensor is
    not contiguous, so ``view`` fails: use ``reshape`` (or ``.contiguous()``).
    """
    raise NotImplementedError


def multi_head_attention(
    x: torch.Tensor,
    w_q: torch.Tensor,
    w_k: torch.Tensor,
    w_v: torch.Tensor,
    w_o: torch.Tensor,
    n_heads: int,
    causal: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Multi-head self-attention with plain weight matrices.

    x: (B, T, C), each w_*: (C, C) -> (out (B, T, C), weights (B, n_heads, T, T)).
    q = x @ w_q (same for k, v); split each into heads; run ``attention``
    on all heads at once; merge the heads; multiply by w_o.
    Scale by sqrt(C // n_heads), the head size, not by sqrt(C).
    """
    raise NotImplementedError


def attention_entropy(weights: torch.Tensor) -> torch.Tensor:
    """How spread out each row of attention is, in nats: -(p * log p).sum(-1).

    weights: (..., T, S) -> (..., T).
    Masked positions have p = 0 and 0 · log 0 must be 0, not NaN
    (torch.log(0) = -inf and 0 * -inf = NaN). Keep the gradient finite too,
    e.g. take the log of p clamped to a tiny positive number.
    """
    raise NotImplementedError
