# expect: lose
# assignment: attention
# exercise: softmax
# message: dim|sum to 1
# diagnosis: softmax_dim0
# why: softmax hard-codes dim=0 (max and sum over the first axis) instead of using the dim argument
# may_fail: softmax::test_rows_sum_to_one, softmax::test_softmax_uses_the_dim_argument, callers::test_weights_rows_sum_to_one
# may_fail: callers::test_weights_lower_triangular, callers::test_future_tokens*

import torch


def softmax(scores, dim=-1):
    m = scores.amax(dim=0, keepdim=True)
    e = torch.exp(scores - m)
    return e / e.sum(dim=0, keepdim=True)
