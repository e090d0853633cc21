# source: classic (no public example found)
# exercise: none
# accept: -
# why: correct submission with a bool causal buffer named tril, torch.where masking, a hand-kept scale factor and an explicit loop over heads
import math

import torch
from torch import nn


class SelfAttentionHead(nn.Module):
    def __init__(self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        allowed = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("tril", allowed)
        self.scale = 1.0 / math.sqrt(head_size)
        self.attn_drop = nn.Dropout(p=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, T, _ = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.matmul(q, k.transpose(1, 2)) * self.scale
        allowed = self.tril[:T, :T]
        scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
        weights = scores.softmax(dim=-1)
        weights = self.attn_drop(weights)
        return torch.matmul(weights, v)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} does not split into {n_heads} heads")
        hs = d_model // n_heads
        self.heads = nn.ModuleList()
        for _ in range(n_heads):
            self.heads.append(SelfAttentionHead(d_model, hs, context_length, dropout))
        self.proj = nn.Linear(d_model, d_model)
        self.out_drop = nn.Dropout(p=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pieces = []
        for head in self.heads:
            pieces.append(head(x))
        y = torch.cat(pieces, dim=-1)
        return self.out_drop(self.proj(y))
