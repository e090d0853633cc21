# source: classic (no public example found)
# exercise: multi_head_attention
# accept: gradient|\bgrad|no_grad|autograd|differentiab
# why: computes the q, k, v projections inside torch.no_grad(): the output is right but w_q, w_k, w_v and x get no gradient through them
# base: base_shapes
def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    # x (B, T, C), w_* (C, C)
    B, T, C = x.shape
    assert w_q.shape == (C, C) and w_o.shape == (C, C)
    with torch.no_grad():                      # projections are only set-up
        q = split_heads(x @ w_q, n_heads)      # (B, H, T, d_head)
        k = split_heads(x @ w_k, n_heads)
        v = split_heads(x @ w_v, n_heads)
    outs, weights = [], []
    for h in range(n_heads):
        o_h, w_h = attention(q[:, h], k[:, h], v[:, h], causal=causal)   # (B, T, d_head), (B, T, T)
        outs.append(o_h)
        weights.append(w_h)
    out = torch.stack(outs, dim=1)             # (B, H, T, d_head)
    wei = torch.stack(weights, dim=1)          # (B, H, T, T)
    y = merge_heads(out) @ w_o                 # (B, T, C)
    assert y.shape == (B, T, C) and wei.shape == (B, n_heads, T, T)
    return y, wei
