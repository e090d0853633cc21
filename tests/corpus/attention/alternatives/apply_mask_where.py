# expect: full
# assignment: attention
# why: apply_mask with torch.where and a -inf scalar tensor of the scores' dtype/device instead of masked_fill

import torch


def apply_mask(scores, mask):
    neg_inf = torch.full((), float("-inf"), dtype=scores.dtype, device=scores.device)
    return torch.where(mask, scores, neg_inf)
