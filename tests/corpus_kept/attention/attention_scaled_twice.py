# source: https://github.com/karpathy/minGPT/pull/55
# exercise: attention
# accept: twice|double|two times|both|divided by \bd\b|by \bd\b instead|1 ?/ ?d\b|again
# why: divides q by sqrt(d) (the cheaper place to scale) and then also calls scale_scores, so the scores are divided by d in all
# base: base_functional
def attention(q, k, v, causal=True, scale=True):
    d = q.shape[-1]
    if scale:
        q = q / math.sqrt(d)  # cheaper to scale q than the T x T table
        scores = scale_scores(attention_scores(q, k), d)
    else:
        scores = attention_scores(q, k)
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights
