# source: https://github.com/pbloem/former/issues/10
# exercise: causal_mask
# accept: diagonal|itself|own (position|token)|strict|offset
# why: tril with diagonal=-1: a token may not attend to itself
# base: base_where


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(diagonal=-1)
