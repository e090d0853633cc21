# source: https://github.com/facebookresearch/xformers/issues/103
# exercise: attention
# accept: mask|causal|future|never applied|unused
# why: builds the causal mask but never applies it: every token sees the future
# base: base_notebook


def attention(q, k, v, causal=True, scale=True):
    assert q.shape[-2] == k.shape[-2] == v.shape[-2], "self-attention: one T"
    T, head_size = q.shape[-2], q.shape[-1]
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, head_size)
    if causal:
        mask = causal_mask(T, device=q.device)
    weights = softmax(scores, dim=-1)
    out = mix_values(weights, v)
    return out, weights
