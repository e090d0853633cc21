# expect: full
# assignment: attention-modules
# why: SelfAttentionHead with a hand-written stable softmax and masked scores filled with finfo(dtype).min

import math
import torch
from torch import nn


class SelfAttentionHead(SelfAttentionHead):  # noqa: F811 - builds on the reference's layers
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__(d_model, head_size, context_length, dropout)
        del self.dropout  # this case names its dropout module differently
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        T = x.size(1)
        q, k, v = self.query(x), self.key(x), self.value(x)
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(k.size(-1))
        s = s.masked_fill(self.tril[:T, :T] == 0, torch.finfo(s.dtype).min)
        s = s - s.amax(dim=-1, keepdim=True)
        e = s.exp()
        w = e / e.sum(dim=-1, keepdim=True)
        return self.drop(w) @ v
