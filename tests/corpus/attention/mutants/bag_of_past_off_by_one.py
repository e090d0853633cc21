# expect: lose
# assignment: attention
# exercise: bag_of_past
# message: mean|NaN|inf
# diagnosis: bag_of_past_off_by_one
# why: bag_of_past divides by torch.arange(T) (0..T-1) instead of 1..T: row 0 becomes inf/NaN, the others are too big
# may_fail: none

import torch


def bag_of_past(v):
    T = v.shape[-2]
    counts = torch.arange(T, device=v.device, dtype=v.dtype).unsqueeze(-1)
    return v.cumsum(dim=-2) / counts
