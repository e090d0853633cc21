"""Assignment ``attention-modules``: attention as nn.Modules.

This file is graded on its own: import torch here, not your attention.py.
Inside these modules you may use ``torch.softmax``.
"""

import torch
import torch.nn as nn


class SelfAttentionHead(nn.Module):
    """One causal self-attention head: (B, T, d_model) -> (B, T, head_size)."""

    def __init__(
        self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0
    ) -> None:
        """Create the layers and the causal mask.

        ``query``, ``key``, ``value``: nn.Linear(d_model, head_size, bias=False).
        ``tril``: (context_length, context_length) lower-triangular ones, stored
        with ``self.register_buffer("tril", ...)``. It must be a registered
        buffer so .to() moves it and state_dict saves it; a plain attribute
        stays on the CPU. Also an nn.Dropout(dropout) for the weights.
        """
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d_model) with T <= context_length -> (B, T, head_size).

        Scores q @ kᵀ scaled by head_size ** -0.5, masked with tril[:T, :T]
        (slice it: T may be shorter than context_length), softmax, dropout,
        then @ v. Dropout acts on the weights only in training mode; in
        eval mode the output must be deterministic.
        """
        raise NotImplementedError


class MultiHeadAttention(nn.Module):
    """n_heads heads side by side: (B, T, d_model) -> (B, T, d_model)."""

    def __init__(
        self, d_model: int, n_heads: int, context_length: int, dropout: float = 0.0
    ) -> None:
        """Create the heads, the output projection and dropout.

        ``heads``: nn.ModuleList of n_heads SelfAttentionHead(d_model,
        d_model // n_heads, context_length, dropout); a plain Python list
        hides their parameters from .parameters() and .to().
        ``proj``: nn.Linear(d_model, d_model). Raise ValueError if d_model is
        not divisible by n_heads.
        """
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, d_model) -> (B, T, d_model).

        Concatenate the heads' outputs along the last dim, in head order,
        then apply proj, then dropout (active only in training mode).
        """
        raise NotImplementedError
