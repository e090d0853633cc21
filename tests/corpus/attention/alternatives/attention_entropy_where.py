# expect: full
# assignment: attention
# why: attention_entropy with torch.where replacing p*log(p) by 0 where p == 0 (log of a safe value, so no NaN gradient)

import torch


def attention_entropy(weights):
    positive = weights > 0
    safe = torch.where(positive, weights, torch.ones_like(weights))
    plogp = torch.where(positive, weights * torch.log(safe), torch.zeros_like(weights))
    return -plogp.sum(dim=-1)
