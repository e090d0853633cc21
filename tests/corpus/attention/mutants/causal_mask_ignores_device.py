# expect: lose
# assignment: attention
# exercise: causal_mask
# message: device
# diagnosis: causal_mask_ignores_device
# why: causal_mask accepts device but never passes it on, so the mask is always on the CPU
# may_fail: causal_mask::test_mask_is_built_on_the_requested_device, callers::test_stays_on*, callers::test_cuda_matches_cpu*
# may_fail: callers::test_stays_on*, callers::test_cuda_matches_cpu*

import torch


def causal_mask(T, device=None):
    return torch.tril(torch.ones(T, T, dtype=torch.bool))
