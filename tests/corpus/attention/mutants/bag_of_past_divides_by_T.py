# expect: lose
# assignment: attention
# exercise: bag_of_past
# message: mean|average
# diagnosis: bag_of_past_divides_by_T
# why: bag_of_past divides the running sum by T instead of by t + 1
# may_fail: none

import torch


def bag_of_past(v):
    return v.cumsum(dim=-2) / v.shape[-2]
