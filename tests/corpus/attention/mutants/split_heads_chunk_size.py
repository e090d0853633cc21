# expect: lose
# assignment: attention
# exercise: split_heads
# message: shape|differs|divisible
# diagnosis: split_heads_chunk_size
# why: split_heads uses x.split(n_heads, dim=-1), which cuts chunks OF n_heads channels, not n_heads chunks
# may_fail: callers::*

import torch


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError(f"split_heads: C={C} is not divisible by n_heads={n_heads}")
    return torch.stack(x.split(n_heads, dim=-1), dim=1)
