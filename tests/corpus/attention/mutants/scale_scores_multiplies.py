# expect: lose
# assignment: attention
# exercise: scale_scores
# message: sqrt|divid|scal
# diagnosis: scale_scores_multiplies
# why: scale_scores multiplies by sqrt(head_size) instead of dividing
# may_fail: callers::test_unscaled_weights_saturate, callers::test_scores_scaled*

import math
import torch


def scale_scores(scores, head_size):
    return scores * math.sqrt(head_size)
