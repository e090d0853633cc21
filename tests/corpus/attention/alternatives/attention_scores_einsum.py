# expect: full
# assignment: attention
# why: attention_scores written with torch.einsum over any leading dims instead of q @ k.transpose

import torch


def attention_scores(q, k):
    return torch.einsum("...td,...sd->...ts", q, k)
