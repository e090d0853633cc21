# expect: lose
# assignment: attention
# exercise: softmax
# message: stab|NaN|1e4
# diagnosis: softmax_global_max
# why: softmax subtracts the max of the whole tensor, not of each row: rows far below the global max underflow to 0/0 = NaN
# may_fail: softmax::test_stable_for_large_scores

import torch


def softmax(scores, dim=-1):
    e = torch.exp(scores - scores.max())
    return e / e.sum(dim=dim, keepdim=True)
