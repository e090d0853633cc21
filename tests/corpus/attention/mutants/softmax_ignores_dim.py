# expect: lose
# assignment: attention
# exercise: softmax
# message: dim
# diagnosis: softmax_ignores_dim
# why: softmax ignores its dim argument and always normalises over the last axis
# may_fail: softmax::test_softmax_uses_the_dim_argument

import torch


def softmax(scores, dim=-1):
    m = scores.amax(dim=-1, keepdim=True)
    e = torch.exp(scores - m)
    return e / e.sum(dim=-1, keepdim=True)
