# expect: full
# assignment: attention-modules
# why: both modules name their dropout submodule differently (attn_drop, resid_drop); the name is free

import torch
from torch import nn
import torch.nn.functional as F


class SelfAttentionHead(SelfAttentionHead):  # noqa: F811 - builds on the reference's layers
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__(d_model, head_size, context_length, dropout)
        del self.dropout  # the point of this case: another name for the dropout module
        self.attn_drop = nn.Dropout(dropout)

    def forward(self, x):
        T = x.shape[1]
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(1, 2) * k.shape[-1] ** -0.5
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = self.attn_drop(wei)
        return wei @ self.value(x)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        self.heads = nn.ModuleList(
            [SelfAttentionHead(d_model, d_model // n_heads, context_length, dropout) for _ in range(n_heads)]
        )
        self.proj = nn.Linear(d_model, d_model)
        self.resid_drop = nn.Dropout(dropout)

    def forward(self, x):
        return self.resid_drop(self.proj(torch.cat([head(x) for head in self.heads], dim=-1)))
