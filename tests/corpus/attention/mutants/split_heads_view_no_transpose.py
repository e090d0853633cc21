# expect: lose
# assignment: attention
# exercise: split_heads
# message: shape|transpose|head
# diagnosis: split_heads_view_no_transpose
# why: split_heads views x as (B, H, T, d) directly without the transpose, scrambling tokens and channels
# may_fail: callers::test_future_tokens*, callers::test_causal_false_*

import torch


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("C must be divisible by n_heads")
    return x.view(B, n_heads, T, C // n_heads)
