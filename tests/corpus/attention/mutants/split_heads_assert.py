# expect: lose
# assignment: attention
# exercise: split_heads
# message: ValueError
# diagnosis: split_heads_assert
# why: split_heads checks divisibility with assert (AssertionError) instead of raising ValueError
# may_fail: split_heads::test_split_rejects_indivisible_channels

import torch


def split_heads(x, n_heads):
    B, T, C = x.shape
    assert C % n_heads == 0, "C must be divisible by n_heads"
    return x.view(B, T, n_heads, C // n_heads).transpose(1, 2)
