# expect: lose
# assignment: attention
# exercise: multi_head_attention
# message: causal
# diagnosis: multi_head_attention_ignores_causal
# why: multi_head_attention never forwards its causal flag, so causal=False is still masked
# may_fail: multi_head_attention::test_causal_false_*

import torch


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    out, weights = attention(q, k, v)
    return merge_heads(out) @ w_o, weights
