# expect: full
# assignment: attention
# why: split_heads with reshape + permute(0, 2, 1, 3) (works on non-contiguous input)

import torch


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("d_model must be divisible by n_heads")
    d_head = C // n_heads
    return x.reshape(B, T, n_heads, d_head).permute(0, 2, 1, 3)
