# expect: lose
# assignment: attention
# exercise: attention_scores
# message: differs|out of bounds|index
# diagnosis: attention_scores_one_dot_per_position
# why: attention_scores computes one dot product per position, q[i] . k[i], for every key j, instead of q[i] . k[j]
# may_fail: callers::*

import torch


def attention_scores(q, k):
    T, S = q.shape[-2], k.shape[-2]
    rows = [torch.stack([(q[..., i, :] * k[..., i, :]).sum(-1) for j in range(S)], dim=-1) for i in range(T)]
    return torch.stack(rows, dim=-2)
