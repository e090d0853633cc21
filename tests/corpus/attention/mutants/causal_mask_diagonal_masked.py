# expect: lose
# assignment: attention
# exercise: causal_mask
# message: diagonal|itself
# diagnosis: causal_mask_diagonal_masked
# why: causal_mask uses tril(diagonal=-1), so a token may not attend to itself (and row 0 is all False)
# may_fail: callers::test_weights_lower_triangular, callers::test_weights_rows_sum_to_one

import torch


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(diagonal=-1)
