# expect: lose
# assignment: attention
# exercise: attention_entropy
# message: minus|negative
# diagnosis: attention_entropy_missing_minus
# why: attention_entropy forgets the minus sign, so every entropy is negative
# may_fail: attention_entropy::test_entropy_falls_when_unscaled_weights_saturate

import torch


def attention_entropy(weights):
    p = weights
    return (p * torch.log(p.clamp_min(torch.finfo(p.dtype).tiny))).sum(dim=-1)
