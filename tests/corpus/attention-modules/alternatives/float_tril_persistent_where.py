# expect: full
# assignment: attention-modules
# why: float tril registered with an explicit persistent=True, masking via torch.where on tril[:T, :T] == 0

import math
import torch
from torch import nn


class SelfAttentionHead(nn.Module):
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.head_size = head_size
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer(
            "tril", torch.tril(torch.ones(context_length, context_length)), persistent=True
        )
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        B, T, C = x.shape
        scores = self.query(x) @ self.key(x).mT / math.sqrt(self.head_size)
        neg_inf = torch.full_like(scores, float("-inf"))
        scores = torch.where(self.tril[:T, :T] == 0, neg_inf, scores)
        weights = torch.softmax(scores, dim=-1)
        return self.dropout(weights) @ self.value(x)
