# source: classic (no public example found)
# exercise: none
# accept: -
# why: correct submission: bool tril buffer turned into an additive 0/-inf bias in forward, hand-written scale, dropout named attn_drop

import math

import torch
from torch import nn


class SelfAttentionHead(nn.Module):
    """A single causal head: (B, T, d_model) -> (B, T, head_size)."""

    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        allowed = torch.ones(context_length, context_length, dtype=torch.bool).tril()
        self.register_buffer("tril", allowed)
        self.attn_drop = nn.Dropout(dropout)
        self.scale = 1.0 / math.sqrt(head_size)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)  # each (B, T, hs)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale  # (B, T, T)
        bias = torch.zeros(T, T, dtype=scores.dtype, device=scores.device)
        bias = bias.masked_fill(~self.tril[:T, :T], float("-inf"))
        att = torch.softmax(scores + bias, dim=-1)
        att = self.attn_drop(att)
        return torch.matmul(att, v)  # (B, T, hs)


class MultiHeadAttention(nn.Module):
    """Several heads in parallel, concatenated and projected back to d_model."""

    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be a multiple of n_heads ({n_heads})")
        head_size = d_model // n_heads
        heads = [SelfAttentionHead(d_model, head_size, context_length, dropout) for _ in range(n_heads)]
        self.heads = nn.ModuleList(heads)
        self.proj = nn.Linear(d_model, d_model)
        self.out_drop = nn.Dropout(dropout)

    def forward(self, x):
        outs = [head(x) for head in self.heads]
        y = torch.cat(outs, dim=-1)  # (B, T, d_model)
        y = self.proj(y)
        return self.out_drop(y)
