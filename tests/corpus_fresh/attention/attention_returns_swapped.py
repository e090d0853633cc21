# source: classic (no public example found)
# exercise: attention
# accept: order|swap|tuple|return|\(weights, out\)
# why: returns (weights, out) instead of (out, weights)
# base: base_where


def attention(q, k, v, causal=True, scale=True):
    T, d = q.shape[-2], q.shape[-1]
    s = attention_scores(q, k)
    if scale:
        s = scale_scores(s, d)
    if causal:
        s = apply_mask(s, causal_mask(T, device=q.device))
    w = softmax(s, dim=-1)
    return w, mix_values(w, v)
