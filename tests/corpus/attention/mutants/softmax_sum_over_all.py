# expect: lose
# assignment: attention
# exercise: softmax
# message: sum to 1|rows?
# diagnosis: softmax_sum_over_all
# why: softmax divides by the sum of the whole tensor instead of the sum along dim, so rows do not sum to 1

import torch


def softmax(scores, dim=-1):
    e = torch.exp(scores - scores.amax(dim=dim, keepdim=True))
    return e / e.sum()
