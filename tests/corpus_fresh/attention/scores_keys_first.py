# source: https://github.com/brain-research/self-attention-gan/issues/17
# exercise: attention_scores
# accept: transpos|swap|k @ q|q and k|order|rows? and columns?|\(S, ?T\)
# why: computes k @ qᵀ: the score table comes out transposed (row = key, column = query)
# base: base_einsum


def attention_scores(q, k):
    return torch.einsum("...sd,...td->...st", k, q)
