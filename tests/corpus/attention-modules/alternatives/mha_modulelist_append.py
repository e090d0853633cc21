# expect: full
# assignment: attention-modules
# why: MultiHeadAttention builds its ModuleList with append in a loop and concatenates with torch.concat

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, context_length, dropout=0.0):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"{d_model} % {n_heads} != 0")
        self.heads = nn.ModuleList()
        for _ in range(n_heads):
            self.heads.append(SelfAttentionHead(d_model, d_model // n_heads, context_length, dropout))
        self.proj = nn.Linear(d_model, d_model, bias=True)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        outs = []
        for head in self.heads:
            outs.append(head(x))
        y = torch.concat(outs, dim=2)
        y = self.proj(y)
        return self.drop(y)
