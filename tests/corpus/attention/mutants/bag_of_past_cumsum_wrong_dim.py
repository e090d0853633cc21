# expect: lose
# assignment: attention
# exercise: bag_of_past
# message: mean|average|dim
# diagnosis: bag_of_past_cumsum_wrong_dim
# why: bag_of_past takes the running sum over the channel dim (-1) instead of the time dim (-2)
# may_fail: none

import torch


def bag_of_past(v):
    T = v.shape[-2]
    counts = torch.arange(1, T + 1, device=v.device, dtype=v.dtype).unsqueeze(-1)
    return v.cumsum(dim=-1) / counts
