# expect: lose
# assignment: attention
# exercise: merge_heads
# message: undo|transpose|reshape
# diagnosis: merge_heads_no_permute
# why: merge_heads reshapes (B, H, T, d) straight to (B, T, H*d) without moving the head axis back first
# may_fail: callers::test_future_tokens*, callers::test_causal_false_*

import torch


def merge_heads(x):
    B, H, T, d = x.shape
    return x.reshape(B, T, H * d)
