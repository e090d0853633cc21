# expect: lose
# assignment: attention
# exercise: multi_head_attention
# message: scale|sqrt|d_head
# diagnosis: multi_head_attention_scale_by_d_model
# why: multi_head_attention scales by sqrt(C) (d_model) instead of sqrt(C // n_heads) (d_head)
# may_fail: multi_head_attention::test_scores_scaled*

import math
import torch


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    B, T, C = x.shape
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    scores = scale_scores(attention_scores(q, k), C)
    if causal:
        scores = apply_mask(scores, causal_mask(T, device=x.device))
    weights = softmax(scores, dim=-1)
    return merge_heads(mix_values(weights, v)) @ w_o, weights
