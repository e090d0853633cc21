# source: https://github.com/facebookresearch/fairseq2/pull/59
# exercise: multi_head_attention
# accept: causal|flag|not passed|ignor|passed on|forward(s|ed)? the
# why: calls attention(q, k, v) without passing causal on, so causal=False still masks the future
# base: base_notebook_plt
def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    out, wei = attention(q, k, v)
    return merge_heads(out) @ w_o, wei
