# expect: lose
# assignment: attention
# exercise: attention_entropy
# message: shape|differs
# diagnosis: attention_entropy_one_number
# why: attention_entropy averages the rows' entropies into one number instead of returning one per row
# may_fail: attention_entropy::*

import torch


def attention_entropy(weights):
    p = weights
    log_p = torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))
    return -(p * log_p).sum(dim=-1).mean()
