# expect: lose
# assignment: attention
# exercise: causal_mask
# message: bool|dtype
# diagnosis: causal_mask_float
# why: causal_mask returns the float 0/1 tril matrix (GPT-tutorial style) instead of a bool tensor

import torch


def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, device=device))
