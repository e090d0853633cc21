# expect: full
# assignment: attention
# why: scale_scores multiplies by head_size ** -0.5 instead of dividing by sqrt (equal up to rounding)

import torch


def scale_scores(scores, head_size):
    return scores * head_size ** -0.5
