# expect: full
# assignment: attention
# why: split_heads with unflatten + movedim instead of view + transpose

import torch


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads:
        raise ValueError(f"C={C} is not divisible by n_heads={n_heads}")
    return x.unflatten(-1, (n_heads, C // n_heads)).movedim(-2, 1)
