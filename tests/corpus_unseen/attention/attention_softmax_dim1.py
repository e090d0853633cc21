# source: https://github.com/nerminnuraydogan/vision-transformer/issues/1
# exercise: attention
# accept: dim ?=? ?1|wrong (axis|dim|dimension)|over (the )?quer|columns? sum|quer(y|ies) axis|axis 1
# why: calls softmax(scores, dim=1): the key axis only for 2-D input; for (B, T, T) it normalises over queries
# base: correct_dot_product_loops

def attention(q, k, v, causal=True, scale=True):
    d_k = q.shape[-1]
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, d_k)
    if causal:
        scores = apply_mask(scores, causal_mask(scores.shape[-2], device=scores.device))
    weights = softmax(scores, dim=1)
    return mix_values(weights, v), weights
