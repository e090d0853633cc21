# source: public code (code-search hit; Charmaineem/Hands-On-LLMs Transformer/layers.py): "d_k = k.dim()"
# exercise: attention
# accept: dim\(\)|number of dim|ndim|rank|head.?size|last dim|sqrt\(d|wrong (size|quantity|number)
# why: passes q.dim() (the number of tensor dims) as the head size to scale by
# base: base_notebook


def attention(q, k, v, causal=True, scale=True):
    assert q.shape[-2] == k.shape[-2] == v.shape[-2], "self-attention: one T"
    T = q.shape[-2]
    head_size = q.dim()
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, head_size)
    if causal:
        scores = apply_mask(scores, causal_mask(T, device=q.device))
    weights = softmax(scores, dim=-1)
    out = mix_values(weights, v)
    return out, weights
