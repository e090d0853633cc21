# source: classic (no public example found)
# exercise: attention
# accept: keys? instead of (the )?values?|mix(es|ing)? (the )?keys|\bk\b instead of \bv\b|values? (are|is) (never|not) used|\bv\b (is )?never used|weights @ k
# why: mixes the keys instead of the values (copy-paste of k for v), so v is never used
# base: base_shapes
def attention(q, k, v, causal=True, scale=True):
    # q, k (..., T, d)   v (..., T, d_v)
    T, d = q.shape[-2], q.shape[-1]
    scores = attention_scores(q, k)                   # (..., T, T)
    if scale:
        scores = scale_scores(scores, d)
    if causal:
        scores = apply_mask(scores, causal_mask(T, device=q.device))
    weights = softmax(scores, dim=-1)                 # (..., T, T)
    out = mix_values(weights, k)                      # (..., T, d_v)
    assert out.shape[-2] == T and weights.shape[-2:] == (T, T)
    return out, weights
