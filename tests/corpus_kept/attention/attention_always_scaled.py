# source: classic (no public example found)
# exercise: attention
# accept: scale ?= ?False|scale flag|flag|ignor|always scal|even when|scale argument|unscaled
# why: scales the scores whatever the scale flag says: scale=False still divides by sqrt(d)
# base: base_functional
def attention(q, k, v, causal=True, scale=True):
    scores = scale_scores(attention_scores(q, k), q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-1)
    return mix_values(weights, v), weights
