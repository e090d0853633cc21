# source: https://github.com/Kyubyong/transformer/issues/117
# exercise: multi_head_attention
# accept: w_o|output projection|project|W_?O|final linear
# why: returns the merged heads without multiplying by w_o
# base: base_einsum


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(torch.einsum("btc,cd->btd", x, w_q), n_heads)
    k = split_heads(torch.einsum("btc,cd->btd", x, w_k), n_heads)
    v = split_heads(torch.einsum("btc,cd->btd", x, w_v), n_heads)
    out, weights = attention(q, k, v, causal=causal)
    return merge_heads(out), weights
