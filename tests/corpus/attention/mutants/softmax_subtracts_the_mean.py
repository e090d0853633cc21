# expect: lose
# assignment: attention
# exercise: softmax
# message: NaN|nan|inf|differs|sum
# diagnosis: softmax_subtracts_the_mean
# why: softmax shifts by the row mean instead of the row max: exp still overflows, and a row holding -inf gets -inf - (-inf) = NaN
# may_fail: softmax::test_stable_for_large_scores, softmax::test_minus_inf_gets_exactly_zero, callers::*

import torch


def softmax(scores, dim=-1):
    e = torch.exp(scores - scores.mean(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)
