# source: classic (no public example found)
# exercise: multi_head_attention
# accept: scal|sqrt|√|d_head|head size
# why: calls attention with scale=False, so no head's scores are divided by sqrt(C // n_heads)
# base: base_functional
def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q, k, v = (split_heads(torch.matmul(x, w), n_heads) for w in (w_q, w_k, w_v))
    out, weights = attention(q, k, v, causal=causal, scale=False)
    return torch.matmul(merge_heads(out), w_o), weights
