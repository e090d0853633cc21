# expect: full
# assignment: attention-modules
# why: SelfAttentionHead keeps the tril buffer but calls F.scaled_dot_product_attention with it as a bool mask (dropout_p = the Dropout submodule's p, only in training)

import torch
from torch import nn
import torch.nn.functional as F


class SelfAttentionHead(SelfAttentionHead):  # noqa: F811 - the reference's __init__, another forward

    def forward(self, x):
        T = x.shape[1]
        mask = self.tril[:T, :T] != 0
        return F.scaled_dot_product_attention(
            self.query(x), self.key(x), self.value(x),
            attn_mask=mask, dropout_p=self.dropout.p if self.training else 0.0,
        )
