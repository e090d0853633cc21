# expect: lose
# assignment: attention
# exercise: multi_head_attention
# message: shape|weights|head
# diagnosis: multi_head_attention_weights_averaged
# why: multi_head_attention returns the weights averaged over heads, (B, T, T), instead of (B, n_heads, T, T)
# may_fail: multi_head_attention::test_returns*, multi_head_attention::test_scores_scaled*, multi_head_attention::test_future_tokens*
# may_fail: multi_head_attention::test_causal_false_*

import torch


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    out, weights = attention(q, k, v, causal=causal)
    return merge_heads(out) @ w_o, weights.mean(dim=1)
