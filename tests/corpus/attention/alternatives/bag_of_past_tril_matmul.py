# expect: full
# assignment: attention
# why: bag_of_past as a row-normalised lower-triangular matrix (built on v's device and dtype) times v

import torch


def bag_of_past(v):
    T = v.shape[-2]
    w = torch.tril(torch.ones(T, T, dtype=v.dtype, device=v.device))
    w = w / w.sum(dim=-1, keepdim=True)
    return w @ v
