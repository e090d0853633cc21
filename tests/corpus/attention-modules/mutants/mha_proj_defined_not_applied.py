# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: proj|concatenate
# why: creates proj but forgets to apply it in forward

import torch
from torch import nn
import torch.nn.functional as F


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        head_size = d_model // n_heads
        self.heads = nn.ModuleList(
            [SelfAttentionHead(d_model, head_size, context_length, dropout) for _ in range(n_heads)]
        )
        self.proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        return self.dropout(out)
