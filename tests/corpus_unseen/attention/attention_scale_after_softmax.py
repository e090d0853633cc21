# source: https://github.com/FrancescoSaverioZuppichini/ViT/issues/2
# exercise: attention
# accept: after (the )?softmax|order|scal\w* .*softmax|softmax.*scal|rows? (do not|don.t) sum
# why: divides the weights by sqrt(d) after the softmax instead of scaling the scores before it
# base: correct_loops

def attention(q, k, v, causal=True, scale=True):
    scores = attention_scores(q, k)
    if causal:
        T = scores.shape[-1]
        scores = apply_mask(scores, causal_mask(T, device=scores.device))
    weights = softmax(scores, dim=-1)
    if scale:
        head_size = k.shape[-1]
        weights = scale_scores(weights, head_size)
    out = mix_values(weights, v)
    return out, weights
