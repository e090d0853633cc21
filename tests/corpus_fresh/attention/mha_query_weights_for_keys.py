# source: public code (code-search hit; Manikanta5112/custom_tiny_gpt v2.py): "self.query = nn.Linear(n_embd, head_size, bias=False)" written twice, the second line meant for another projection
# exercise: multi_head_attention
# accept: w_k|w_q|\bkeys?\b|quer|same (weight|matrix|projection)|copy|two roles
# why: projects the keys with w_q (copy-paste), so w_k is never used
# base: base_notebook


def multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=True):
    q = split_heads(_project(x, w_q), n_heads)
    k = split_heads(_project(x, w_q), n_heads)
    v = split_heads(_project(x, w_v), n_heads)
    out, weights = attention(q, k, v, causal=causal)
    assert weights.shape[1] == n_heads
    return _project(merge_heads(out), w_o), weights
