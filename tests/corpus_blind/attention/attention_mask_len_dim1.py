# source: classic (no public example found)
# exercise: attention
# accept: shape\[1\]|size\(1\)|dim(ension)? 1|second (dim|axis)|length|\bT\b|mask (size|shape)|size of the mask|batch.first|wrong (size|length)
# why: sizes the causal mask with q.shape[1], which is T only for a (B, T, d) input: a plain (T, d) input gives a d x d mask, (B, H, T, d) heads an H x H one
# base: base_terse

def attention(q, k, v, causal=True, scale=True):
    s = attention_scores(q, k)
    s = scale_scores(s, q.shape[-1]) if scale else s
    s = apply_mask(s, causal_mask(q.shape[1], q.device)) if causal else s
    w = softmax(s)
    return mix_values(w, v), w
