# expect: lose
# assignment: attention
# exercise: merge_heads
# message: shape|differs
# diagnosis: merge_heads_concat_time
# why: merge_heads concatenates the heads along time: (B, H*T, d_head) instead of (B, T, H*d_head)
# may_fail: callers::*

import torch


def merge_heads(x):
    B, H, T, d_head = x.shape
    return torch.cat([x[:, h] for h in range(H)], dim=1)
