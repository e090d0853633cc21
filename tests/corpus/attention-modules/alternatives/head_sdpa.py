# expect: full
# assignment: attention-modules
# why: SelfAttentionHead keeps the tril buffer but calls F.scaled_dot_product_attention with it as a bool mask (dropout_p = the Dropout submodule's p, only in training)

import torch
from torch import nn
import torch.nn.functional as F


class SelfAttentionHead(nn.Module):
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        T = x.shape[1]
        mask = self.tril[:T, :T] != 0
        return F.scaled_dot_product_attention(
            self.query(x), self.key(x), self.value(x),
            attn_mask=mask, dropout_p=self.dropout.p if self.training else 0.0,
        )
