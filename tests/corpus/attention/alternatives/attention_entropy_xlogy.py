# expect: full
# assignment: attention
# why: attention_entropy via torch.special.xlogy(p, p), which defines 0 * log 0 = 0

import torch


def attention_entropy(weights):
    return -torch.special.xlogy(weights, weights).sum(dim=-1)
