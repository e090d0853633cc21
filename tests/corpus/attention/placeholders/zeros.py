# expect: placeholder
# assignment: attention
# base: every_function_fills.py.in
# why: every function returns zeros of the right shape, dtype and device: computes nothing

import torch


def fill(like, shape):
    return torch.zeros(shape, dtype=like.dtype, device=like.device)
