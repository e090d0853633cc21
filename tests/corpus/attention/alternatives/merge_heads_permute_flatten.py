# expect: full
# assignment: attention
# why: merge_heads with permute(0, 2, 1, 3) + flatten(2) instead of transpose + contiguous + view

import torch


def merge_heads(x):
    return x.permute(0, 2, 1, 3).flatten(2)
