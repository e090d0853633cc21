# expect: lose
# assignment: attention
# exercise: attention_scores
# message: transpose|k\.T
# diagnosis: attention_scores_k_T
# why: attention_scores uses k.T, which on a batched tensor reverses all dims instead of swapping the last two

import torch


def attention_scores(q, k):
    return q @ k.T
