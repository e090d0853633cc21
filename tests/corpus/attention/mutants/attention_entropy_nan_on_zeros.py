# expect: lose
# assignment: attention
# exercise: attention_entropy
# message: NaN|0 ?\S* ?log ?0|zero
# diagnosis: attention_entropy_nan_on_zeros
# why: attention_entropy computes plain p * log(p), which is 0 * -inf = NaN on masked (zero) weights

import torch


def attention_entropy(weights):
    return -(weights * torch.log(weights)).sum(dim=-1)
