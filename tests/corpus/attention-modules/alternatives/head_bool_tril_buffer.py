# expect: full
# assignment: attention-modules
# why: SelfAttentionHead keeps tril as a bool buffer and masks with ~tril[:T, :T]

import math
import torch
from torch import nn


class SelfAttentionHead(SelfAttentionHead):  # noqa: F811 - builds on the reference's layers
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__(d_model, head_size, context_length, dropout)
        self.register_buffer("tril", torch.ones(context_length, context_length, dtype=torch.bool).tril())

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        wei = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        wei = wei.masked_fill(~self.tril[:T, :T], float("-inf"))
        wei = self.dropout(torch.softmax(wei, dim=-1))
        return wei @ v
