# expect: lose
# assignment: attention
# exercise: causal_mask
# message: triu|upper
# diagnosis: causal_mask_triu
# why: causal_mask uses triu instead of tril, so each token attends to the future instead of the past
# may_fail: callers::test_weights_lower_triangular, callers::test_future_tokens*, callers::test_huge_future*
# may_fail: callers::test_future_tokens*

import torch


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu()
