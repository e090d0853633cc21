# expect: full
# assignment: attention-modules
# why: tril buffer built from an arange comparison (bool), sliced per forward, with additive -inf masking

import math
import torch
from torch import nn


class SelfAttentionHead(SelfAttentionHead):  # noqa: F811 - builds on the reference's layers
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__(d_model, head_size, context_length, dropout)
        idx = torch.arange(context_length)
        self.register_buffer("tril", idx[:, None] >= idx[None, :])  # a bool buffer this time
        self.scale = 1.0 / math.sqrt(head_size)

    def forward(self, x):
        B, T, C = x.shape
        att = (self.query(x) @ self.key(x).transpose(-2, -1)) * self.scale
        bias = torch.zeros(T, T, dtype=att.dtype, device=att.device)
        bias = bias.masked_fill(~self.tril[:T, :T], float("-inf"))
        att = torch.softmax(att + bias, dim=-1)
        return self.dropout(att) @ self.value(x)
