# source: https://github.com/skyzh/tiny-llm/issues/41
# exercise: multi_head_attention
# accept: transpos|F\.linear|linear|x ?@ ?w|orientation|w\.T|w_\w+\.T
# why: uses torch.nn.functional.linear(x, w), which computes x @ wᵀ, not x @ w
# base: base_loops


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    lin = torch.nn.functional.linear
    q = split_heads(lin(x, w_q), n_heads)
    k = split_heads(lin(x, w_k), n_heads)
    v = split_heads(lin(x, w_v), n_heads)
    out, weights = attention(q, k, v, causal=causal)
    out = lin(merge_heads(out), w_o)
    return out, weights
