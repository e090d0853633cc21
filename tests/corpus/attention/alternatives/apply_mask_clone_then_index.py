# expect: full
# assignment: attention
# why: apply_mask clones the scores first and then writes -inf in place into the copy with boolean indexing

import torch


def apply_mask(scores, mask):
    out = scores.clone()
    out[~mask.expand_as(out)] = float("-inf")
    return out
