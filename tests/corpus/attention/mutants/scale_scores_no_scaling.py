# expect: lose
# assignment: attention
# exercise: scale_scores
# message: sqrt|scal
# diagnosis: scale_scores_no_scaling
# why: scale_scores forgets the scaling and returns the raw scores (its input handed back, so the placeholder gate withholds its property checks too)
# may_fail: callers::test_scores_scaled*, callers::test_unscaled_weights_saturate
# may_fail: scale_scores::*

import torch


def scale_scores(scores, head_size):
    return scores
