# expect: full
# assignment: attention
# why: bag_of_past as uniform causal attention: masked all-zero scores, softmax, then mix_values

import torch


def bag_of_past(v):
    T = v.shape[-2]
    zeros = torch.zeros(T, T, dtype=v.dtype, device=v.device)
    weights = softmax(apply_mask(zeros, causal_mask(T, device=v.device)), dim=-1)
    return mix_values(weights, v)
