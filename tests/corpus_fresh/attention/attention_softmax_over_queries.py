# source: https://github.com/labmlai/annotated_deep_learning_paper_implementations/issues/282
# exercise: attention
# accept: dim|axis|column|-2|over (the )?(queries|rows)|wrong (axis|direction)
# why: softmax over dim=-2 (the queries) instead of over each row's keys
# base: base_einsum


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    if causal:
        scores = apply_mask(scores, causal_mask(q.shape[-2], device=q.device))
    weights = softmax(scores, dim=-2)
    return mix_values(weights, v), weights
