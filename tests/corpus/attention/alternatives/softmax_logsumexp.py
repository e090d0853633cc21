# expect: full
# assignment: attention
# why: softmax as exp(x - logsumexp(x)); logsumexp is stable and exp(-inf) is exactly 0

import torch


def softmax(scores, dim=-1):
    return torch.exp(scores - torch.logsumexp(scores, dim=dim, keepdim=True))
