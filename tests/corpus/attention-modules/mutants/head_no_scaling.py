# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: scal|sqrt
# why: forward forgets to scale the scores by 1/sqrt(head_size)

import torch
from torch import nn
import torch.nn.functional as F


class SelfAttentionHead(nn.Module):
    def __init__(self, d_model, head_size, context_length, dropout=0.0):
        super().__init__()
        self.head_size = head_size
        self.query = nn.Linear(d_model, head_size, bias=False)
        self.key = nn.Linear(d_model, head_size, bias=False)
        self.value = nn.Linear(d_model, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length)))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.query(x), self.key(x), self.value(x)
        wei = q @ k.transpose(-2, -1)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float("-inf"))
        wei = torch.softmax(wei, dim=-1)
        wei = self.dropout(wei)
        return wei @ v
