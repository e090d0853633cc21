# expect: lose
# assignment: attention
# exercise: multi_head_attention
# message: w_o|output projection
# diagnosis: multi_head_attention_no_w_o
# why: multi_head_attention forgets the output projection and returns merge_heads(out) without @ w_o
# may_fail: none

import torch


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    out, weights = attention(q, k, v, causal=causal)
    return merge_heads(out), weights
