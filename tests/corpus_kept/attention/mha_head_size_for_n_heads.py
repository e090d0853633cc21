# source: classic (no public example found)
# exercise: multi_head_attention
# accept: number of heads|n_heads|head size|d_head|swap|wrong number
# why: passes the head size C // n_heads to split_heads where the number of heads belongs, so the model is split into the wrong number of heads
# base: base_functional
def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    d_head = x.shape[-1] // n_heads
    q, k, v = (split_heads(torch.matmul(x, w), d_head) for w in (w_q, w_k, w_v))
    out, weights = attention(q, k, v, causal=causal)
    return torch.matmul(merge_heads(out), w_o), weights
