# source: classic (no public example found)
# exercise: multi_head_attention
# accept: w_o|output projection|before (the )?merg|per[- ]head|block|mix(es|ing)? (the )?heads
# why: applies only the diagonal block of w_o to each head before merging, so the output projection never mixes heads
# base: correct_head_loop

def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(x @ w_q, n_heads)
    k = split_heads(x @ w_k, n_heads)
    v = split_heads(x @ w_v, n_heads)
    hs = q.shape[-1]
    heads = []
    weights = []
    for h in range(n_heads):
        out_h, wei_h = attention(q[:, h], k[:, h], v[:, h], causal=causal)
        w_o_h = w_o[h * hs:(h + 1) * hs, h * hs:(h + 1) * hs]  # this head's part of w_o
        heads.append(out_h @ w_o_h)
        weights.append(wei_h)
    out = merge_heads(torch.stack(heads, dim=1))
    return out, torch.stack(weights, dim=1)
