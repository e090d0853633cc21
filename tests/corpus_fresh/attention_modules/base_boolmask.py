# source: classic (no public example found); written for this corpus: bool tril buffer, explicit sqrt, named dropouts
# exercise: none
# accept: -
# why: correct submission in a second style: bool causal buffer, torch.softmax, per-head loop in the multi-head module
import math

import torch
from torch import nn


class SelfAttentionHead(nn.Module):
    def __init__(self, d_model: int, head_size: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        causal = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("tril", causal)
        self.attn_drop = nn.Dropout(p=dropout)
        self.scale = 1.0 / math.sqrt(head_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        scores = torch.matmul(q, k.transpose(1, 2)) * self.scale
        allowed = self.tril[:T, :T]
        scores = scores.masked_fill(~allowed, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        weights = self.attn_drop(weights)
        return torch.matmul(weights, v)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int, context_length: int, dropout: float = 0.0):
        super().__init__()
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"{d_model=} is not divisible by {n_heads=}")
        self.heads = nn.ModuleList()
        for _ in range(n_heads):
            self.heads.append(SelfAttentionHead(d_model, d_model // n_heads, context_length, dropout))
        self.proj = nn.Linear(d_model, d_model)
        self.resid_drop = nn.Dropout(p=dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outputs = []
        for head in self.heads:
            outputs.append(head(x))
        joined = torch.cat(outputs, dim=-1)
        return self.resid_drop(self.proj(joined))
