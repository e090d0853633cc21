# expect: lose
# assignment: attention
# exercise: softmax
# message: sum to 1|rows?
# diagnosis: softmax_sum_over_all
# why: softmax divides by the sum of the whole tensor instead of the sum along dim, so rows do not sum to 1
# may_fail: softmax::test_rows_sum_to_one, softmax::test_softmax_uses_the_dim_argument, callers::test_weights_rows_sum_to_one
# may_fail: callers::test_future_tokens*

import torch


def softmax(scores, dim=-1):
    e = torch.exp(scores - scores.amax(dim=dim, keepdim=True))
    return e / e.sum()
