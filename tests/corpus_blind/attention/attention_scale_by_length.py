# source: https://github.com/cneuralnetwork/solving-ml-papers/issues/1
# exercise: attention
# accept: length|\bT\b|number of (tokens|positions)|sequence|shape\[-2\]|time
# why: scales by sqrt(q.shape[-2]), the sequence length T, instead of the query/key size d
# base: base_terse

def attention(q, k, v, causal=True, scale=True):
    s = attention_scores(q, k)
    s = scale_scores(s, q.shape[-2]) if scale else s
    s = apply_mask(s, causal_mask(q.shape[-2], q.device)) if causal else s
    w = softmax(s)
    return mix_values(w, v), w
