# source: public code (code-search hit; the index does not name the repository): "wei = (queries @ keys.transpose(-2, -1)) / values.shape[-1] ** 0.5"
# exercise: attention
# accept: d_v|value (dim|size)|v\.shape|values?.? (last )?dim|instead of (the )?(key|query) dim|key dim|query dim
# why: scales by sqrt of the value dim d_v instead of the query/key dim d
# base: correct_chunk_entr

def attention(q, k, v, causal=True, scale=True):
    T = q.shape[-2]
    logits = attention_scores(q, k)
    if scale:
        logits = scale_scores(logits, v.shape[-1])
    if causal:
        logits = apply_mask(logits, causal_mask(T, device=logits.device))
    probs = softmax(logits, dim=-1)
    return mix_values(probs, v), probs
