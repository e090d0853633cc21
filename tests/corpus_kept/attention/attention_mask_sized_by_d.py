# source: classic (no public example found)
# exercise: attention
# accept: length|tokens|positions|causal_mask\(d|\bd\b instead of \bT\b|mask (size|shape)|size of the mask|head size|feature
# why: builds the causal mask with the feature size d instead of the sequence length T, so it only fits when d == T
# base: base_shapes
def attention(q, k, v, causal=True, scale=True):
    # q, k (..., T, d)   v (..., T, d_v)
    T, d = q.shape[-2], q.shape[-1]
    scores = attention_scores(q, k)                   # (..., T, T)
    if scale:
        scores = scale_scores(scores, d)
    if causal:
        scores = apply_mask(scores, causal_mask(d, device=q.device))
    weights = softmax(scores, dim=-1)                 # (..., T, T)
    out = mix_values(weights, v)                      # (..., T, d_v)
    assert out.shape[-2] == T and weights.shape[-2:] == (T, T)
    return out, weights
