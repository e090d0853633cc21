# source: classic (no public example found)
# exercise: multi_head_attention
# accept: w_k|keys? .*(w_q|query)|query (projection|weights?) .*keys?|copy|same (weights?|projection)|never used
# why: copy-paste slip: the keys are computed with w_q, so w_k is never used
# base: correct_einsum

def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    Q = split_heads(torch.einsum('btc,cd->btd', x, w_q), n_heads)
    K = split_heads(torch.einsum('btc,cd->btd', x, w_q), n_heads)
    V = split_heads(torch.einsum('btc,cd->btd', x, w_v), n_heads)
    heads, attn = attention(Q, K, V, causal=causal)
    out = torch.einsum('btc,cd->btd', merge_heads(heads), w_o)
    return out, attn
