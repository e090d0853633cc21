# expect: placeholder
# assignment: attention
# base: every_function_fills.py.in
# why: every function returns ones of the right shape, dtype and device: computes nothing

import torch


def fill(like, shape):
    return torch.ones(shape, dtype=like.dtype, device=like.device)
