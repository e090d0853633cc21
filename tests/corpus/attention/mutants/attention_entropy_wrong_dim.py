# expect: lose
# assignment: attention
# exercise: attention_entropy
# message: dim|shape|row
# diagnosis: attention_entropy_wrong_dim
# why: attention_entropy sums over dim -2 (the queries) instead of -1 (each row's keys)
# may_fail: none

import torch


def attention_entropy(weights):
    p = weights
    log_p = torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))
    return -(p * log_p).sum(dim=-2)
