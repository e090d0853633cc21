# expect: full
# assignment: attention-modules
# why: MultiHeadAttention keeps the ModuleList of heads for its parameters but computes all heads at once from their stacked weights

import math
import torch
from torch import nn


class SelfAttentionHead(SelfAttentionHead):  # noqa: F811 - the reference's __init__, another forward

    def forward(self, x):
        T = x.shape[1]
        wei = self.query(x) @ self.key(x).transpose(-2, -1) / math.sqrt(self.key.out_features)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        return self.dropout(torch.softmax(wei, dim=-1)) @ self.value(x)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        if d_model % n_heads:
            raise ValueError("d_model must be divisible by n_heads")
        self.n_heads = n_heads
        self.head_size = d_model // n_heads
        self.heads = nn.ModuleList(
            [SelfAttentionHead(d_model, self.head_size, context_length, dropout) for _ in range(n_heads)]
        )
        self.proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        # (H, hs, C) stacks of the heads' weights -> (B, H, T, hs)
        wq = torch.stack([h.query.weight for h in self.heads])
        wk = torch.stack([h.key.weight for h in self.heads])
        wv = torch.stack([h.value.weight for h in self.heads])
        q = torch.einsum("btc,hsc->bhts", x, wq)
        k = torch.einsum("btc,hsc->bhts", x, wk)
        v = torch.einsum("btc,hsc->bhts", x, wv)
        wei = q @ k.transpose(-2, -1) / math.sqrt(self.head_size)
        tril = self.heads[0].tril[:T, :T]
        wei = wei.masked_fill(tril == 0, float("-inf"))
        wei = self.attn_dropout(torch.softmax(wei, dim=-1))
        out = (wei @ v).transpose(1, 2).reshape(B, T, C)  # heads in order along the last dim
        return self.dropout(self.proj(out))
