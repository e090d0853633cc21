# expect: full
# assignment: attention
# why: causal_mask built by broadcasting a comparison of two aranges (col <= row) instead of torch.tril

import torch


def causal_mask(T, device=None):
    idx = torch.arange(T, device=device)
    return idx[None, :] <= idx[:, None]
