# expect: full
# assignment: attention
# why: softmax subtracts the row max taken over every position, -inf included, and shifts an all -inf row by 0 with torch.where (no NaN), then exp / sum; attention is the reference's, so masked rows reach it with -inf

import torch


def softmax(scores, dim=-1):
    m = scores.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isinf(m) & (m < 0), torch.zeros_like(m), m)
    e = torch.exp(scores - m)
    return e / e.sum(dim=dim, keepdim=True)
