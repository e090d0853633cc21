# expect: full
# assignment: attention
# why: softmax subtracting torch.max(...).values (not detached) and normalising by the sum

import torch


def softmax(scores, dim=-1):
    shifted = scores - torch.max(scores, dim=dim, keepdim=True).values
    e = shifted.exp()
    return e / torch.sum(e, dim=dim, keepdim=True)
