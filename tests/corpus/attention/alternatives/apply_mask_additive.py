# expect: full
# assignment: attention
# why: apply_mask adds a float mask that is 0 where allowed and -inf where masked (x + 0 keeps kept scores exactly)

import torch


def apply_mask(scores, mask):
    additive = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)
    additive = additive.masked_fill(~mask, float("-inf"))
    return scores + additive
