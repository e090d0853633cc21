# expect: full
# assignment: attention
# why: mix_values written with torch.einsum instead of weights @ v

import torch


def mix_values(weights, v):
    return torch.einsum("...ts,...sd->...td", weights, v)
