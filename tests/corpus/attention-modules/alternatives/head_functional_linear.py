# expect: full
# assignment: attention-modules
# why: SelfAttentionHead's forward uses F.linear with the submodules' weights and F.dropout(p=self.attn_dropout.p, training=self.training)

import math
import torch
from torch import nn
import torch.nn.functional as F


class SelfAttentionHead(SelfAttentionHead):  # noqa: F811 - builds on the reference's layers
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__(d_model, head_size, context_length, dropout)
        del self.dropout  # this case names its dropout module differently
        self.attn_dropout = nn.Dropout(dropout)

    def forward(self, x):
        T = x.shape[-2]
        q = F.linear(x, self.query.weight)
        k = F.linear(x, self.key.weight)
        v = F.linear(x, self.value.weight)
        wei = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        wei = F.dropout(wei, p=self.attn_dropout.p, training=self.training)
        return torch.bmm(wei, v)
