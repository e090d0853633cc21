# expect: placeholder
# assignment: attention
# base: every_function_fills.py.in
# why: every function returns random values of the right shape, dtype and device: computes nothing

import torch


def fill(like, shape):
    return torch.rand(shape, dtype=like.dtype, device=like.device)
