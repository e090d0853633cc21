# source: https://github.com/pytorch/pytorch/issues/34537
# exercise: multi_head_attention
# accept: average|mean|per.head|each head|n_heads|shape|one (set|map)
# why: returns the weights averaged over heads (B, T, T) instead of per head
# base: base_where


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    qh = split_heads(torch.matmul(x, w_q), n_heads)
    kh = split_heads(torch.matmul(x, w_k), n_heads)
    vh = split_heads(torch.matmul(x, w_v), n_heads)
    out, w = attention(qh, kh, vh, causal=causal)
    return torch.matmul(merge_heads(out), w_o), w.mean(dim=1)
