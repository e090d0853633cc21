# expect: lose
# assignment: attention
# exercise: apply_mask
# message: -inf|inf
# diagnosis: apply_mask_zero_fill
# why: apply_mask fills masked positions with 0 instead of -inf, so they still get weight after softmax

import torch


def apply_mask(scores, mask):
    return scores.masked_fill(~mask, 0.0)
