# source: https://github.com/huggingface/pytorch-image-models/pull/2236
# exercise: attention
# accept: after (the )?softmax|before (the )?softmax|order|sum to (1|one)|renormali|zero(ed|s)? (the )?weights
# why: softmax first, then zeroes the future weights: rows no longer sum to 1
# base: base_loops


def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if scale:
        scores = scale_scores(scores, q.shape[-1])
    weights = softmax(scores, dim=-1)
    if causal:
        T = q.shape[-2]
        weights = weights * causal_mask(T, device=q.device)
    out = mix_values(weights, v)
    return out, weights
