# source: classic (no public example found)
# exercise: multi_head_attention
# accept: first head|head 0|one head|only (one|the first)|\[:, ?0\]|per head|every head|all (the )?heads|\(B, ?T, ?T\)|n_heads
# why: returns w[:, 0], only the first head's weights (B, T, T), as plotted in the notebook, instead of every head's (B, n_heads, T, T)
# base: base_terse

def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q, k, v = (split_heads(x @ w, n_heads) for w in (w_q, w_k, w_v))
    out, w = attention(q, k, v, causal=causal)
    return merge_heads(out) @ w_o, w[:, 0]
