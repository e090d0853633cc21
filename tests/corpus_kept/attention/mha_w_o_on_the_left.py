# source: classic (no public example found)
# exercise: multi_head_attention
# accept: left|right|order|w_o ?@|side|transpos
# why: multiplies w_o @ merged instead of merged @ w_o: the projection is applied from the wrong side
# base: base_shapes
def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    # x (B, T, C), w_* (C, C)
    B, T, C = x.shape
    assert w_q.shape == (C, C) and w_o.shape == (C, C)
    q = split_heads(x @ w_q, n_heads)          # (B, H, T, d_head)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    outs, weights = [], []
    for h in range(n_heads):
        o_h, w_h = attention(q[:, h], k[:, h], v[:, h], causal=causal)   # (B, T, d_head), (B, T, T)
        outs.append(o_h)
        weights.append(w_h)
    out = torch.stack(outs, dim=1)             # (B, H, T, d_head)
    wei = torch.stack(weights, dim=1)          # (B, H, T, T)
    y = w_o @ merge_heads(out)                 # (B, T, C)
    return y, wei
