# source: classic (no public example found)
# exercise: multi_head_attention
# accept: swap|w_q and w_k|w_k and w_q|quer\w* .*w_k|keys? .*w_q|exchang
# why: queries are projected with w_k and keys with w_q, which transposes every head's scores
# base: correct_dot_product_loops

def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q_all = x @ w_k
    k_all = x @ w_q
    v_all = x @ w_v
    q = split_heads(q_all, n_heads)
    k = split_heads(k_all, n_heads)
    v = split_heads(v_all, n_heads)
    o, w = attention(q, k, v, causal=causal)
    return merge_heads(o) @ w_o, w
