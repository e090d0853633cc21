# expect: lose
# assignment: attention
# exercise: softmax
# message: stab|overflow|NaN|inf|1e4
# diagnosis: softmax_no_max_subtraction
# why: softmax without subtracting the row max: exp overflows to inf for scores of magnitude 1e4, giving NaN
# may_fail: softmax::test_stable_for_large_scores

import torch


def softmax(scores, dim=-1):
    e = torch.exp(scores)
    return e / e.sum(dim=dim, keepdim=True)
