# source: https://github.com/ikostrikov/pytorch-a2c-ppo-acktr-gail/issues/97
# exercise: multi_head_attention
# accept: stack|dim(ension)? 0|first (dim|axis)|batch|order|heads? and (the )?batch|swap|shape|\(H, ?B
# why: runs attention head by head and torch.stack()s the results on dim 0: (H, B, T, d) where merge_heads expects (B, H, T, d), so heads and batch are mixed up
# base: base_colab_cells

def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    outs, maps = [], []
    for h in range(n_heads):
        o, w = attention(q[:, h], k[:, h], v[:, h], causal=causal)
        outs.append(o)
        maps.append(w)
    out = torch.stack(outs)
    weights = torch.stack(maps)
    return merge_heads(out) @ w_o, weights
