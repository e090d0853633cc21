# expect: full
# assignment: attention
# why: attention_scores and mix_values return non-contiguous views (transpose of the transposed product); values are identical

import torch


def attention_scores(q, k):
    # (k @ q^T)^T == q @ k^T, returned as a transposed (non-contiguous) view
    return (k @ q.transpose(-2, -1)).transpose(-2, -1)


def mix_values(weights, v):
    # (v^T @ w^T)^T == w @ v, returned as a transposed (non-contiguous) view
    return (v.mT @ weights.mT).mT
