# expect: lose
# assignment: attention
# exercise: causal_mask
# message: device
# diagnosis: causal_mask_ignores_device
# why: causal_mask accepts device but never passes it on, so the mask is always on the CPU

import torch


def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, dtype=torch.bool))
