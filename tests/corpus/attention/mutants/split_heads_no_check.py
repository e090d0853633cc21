# expect: lose
# assignment: attention
# exercise: split_heads
# message: ValueError
# diagnosis: split_heads_no_check
# why: split_heads never checks C % n_heads, so a bad n_heads dies with a RuntimeError from view, not ValueError
# may_fail: split_heads::test_split_rejects_indivisible_channels

import torch


def split_heads(x, n_heads):
    B, T, C = x.shape
    return x.view(B, T, n_heads, C // n_heads).transpose(1, 2)
