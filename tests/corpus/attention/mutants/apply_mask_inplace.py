# expect: lose
# assignment: attention
# exercise: apply_mask
# message: modif|in place|in-place|input
# diagnosis: apply_mask_inplace
# why: apply_mask uses masked_fill_ and overwrites the caller's scores tensor in place
# may_fail: apply_mask::test_inputs_are_not_modified*

import torch


def apply_mask(scores, mask):
    return scores.masked_fill_(~mask, float("-inf"))
