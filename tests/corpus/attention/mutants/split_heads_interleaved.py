# expect: lose
# assignment: attention
# exercise: split_heads
# message: channel|head
# diagnosis: split_heads_interleaved
# why: split_heads views the channels as (d_head, H) so head h gets channels h, h+H, h+2H, ... instead of a contiguous block
# may_fail: none

import torch


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("C must be divisible by n_heads")
    return x.reshape(B, T, C // n_heads, n_heads).permute(0, 3, 1, 2)
