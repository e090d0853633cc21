# expect: lose
# assignment: attention
# exercise: attention_entropy
# message: NaN|0 ?\S* ?log ?0|zero
# diagnosis: attention_entropy_nan_on_zeros
# why: attention_entropy computes plain p * log(p), which is 0 * -inf = NaN on masked (zero) weights
# may_fail: attention_entropy::test_entropy_finite_on_masked_zeros, attention_entropy::test_entropy_falls_when_unscaled_weights_saturate

import torch


def attention_entropy(weights):
    return -(weights * torch.log(weights)).sum(dim=-1)
