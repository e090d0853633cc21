# expect: lose
# assignment: attention
# exercise: attention_entropy
# message: nats|natural|log
# diagnosis: attention_entropy_log2
# why: attention_entropy uses log2 (bits) instead of the natural log (nats)
# may_fail: none

import torch


def attention_entropy(weights):
    return -torch.special.xlogy(weights, weights).sum(dim=-1) / torch.log(torch.tensor(2.0, dtype=weights.dtype, device=weights.device))
