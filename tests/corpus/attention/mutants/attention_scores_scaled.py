# expect: lose
# assignment: attention
# exercise: attention_scores
# message: scal|raw|sqrt
# diagnosis: attention_scores_scaled
# why: attention_scores already divides by sqrt(d) although the contract asks for raw dot products
# may_fail: callers::test_scale_false_does_not_divide, callers::test_unscaled_weights_saturate, callers::test_scores_scaled*

import math
import torch


def attention_scores(q, k):
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
