# expect: lose
# assignment: attention
# exercise: scale_scores
# message: sqrt|scal
# diagnosis: scale_scores_by_d
# why: scale_scores divides by head_size instead of sqrt(head_size)
# may_fail: callers::test_scores_scaled*

import torch


def scale_scores(scores, head_size):
    return scores / head_size
