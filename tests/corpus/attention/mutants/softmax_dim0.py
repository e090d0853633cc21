# expect: lose
# assignment: attention
# exercise: softmax
# message: dim|sum to 1
# diagnosis: softmax_dim0
# why: softmax hard-codes dim=0 (max and sum over the first axis) instead of using the dim argument

import torch


def softmax(scores, dim=-1):
    m = scores.amax(dim=0, keepdim=True)
    e = torch.exp(scores - m)
    return e / e.sum(dim=0, keepdim=True)
