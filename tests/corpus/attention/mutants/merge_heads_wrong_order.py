# expect: lose
# assignment: attention
# exercise: merge_heads
# message: undo|differs
# diagnosis: merge_heads_wrong_order
# why: merge_heads permutes to (B, T, d, H) before flattening, interleaving the heads' channels
# may_fail: none

import torch


def merge_heads(x):
    B, H, T, d = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, H * d)
