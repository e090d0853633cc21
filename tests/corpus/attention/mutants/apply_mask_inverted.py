# expect: lose
# assignment: attention
# exercise: apply_mask
# message: -inf|False|mask
# diagnosis: apply_mask_inverted
# why: apply_mask sets -inf where the mask is True (the allowed positions) instead of where it is False

import torch


def apply_mask(scores, mask):
    return scores.masked_fill(mask, float("-inf"))
