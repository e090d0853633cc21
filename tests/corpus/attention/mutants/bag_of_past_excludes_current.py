# expect: lose
# assignment: attention
# exercise: bag_of_past
# message: mean|NaN|differs
# diagnosis: bag_of_past_excludes_current
# why: bag_of_past averages v[:t], the positions before t, leaving position t itself out (row 0 averages nothing: NaN)
# may_fail: none

import torch


def bag_of_past(v):
    T = v.shape[-2]
    rows = [v[..., :t, :].mean(dim=-2) for t in range(T)]
    return torch.stack(rows, dim=-2)
