# source: https://github.com/hmdolatabadi/denoising_diffusion/issues/1
# exercise: multi_head_attention
# accept: w_v|value (projection|weights?)|values? .*(not|never|un)projected|raw (input|x)
# why: forgets w_v: the values are the raw input split into heads
# base: correct_tril_matmul

def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x, n_heads)
    out, wei = attention(q, k, v, causal=causal)
    y = merge_heads(out) @ w_o
    return y, wei
