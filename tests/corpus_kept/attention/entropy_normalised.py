# source: public code (code-search hit; a row-wise attention entropy helper): "return torch.where(normalization > 0, entropy / normalization, 0)"
# exercise: attention_entropy
# accept: normali[sz]|divid|log ?\(?S|log of the (number|length)|max(imum)? entropy|between 0 and 1
# why: divides each row's entropy by log(S) (a normalised entropy between 0 and 1) instead of returning it in nats
# base: base_shapes
def attention_entropy(weights):
    # (..., T, S) -> (..., T)
    logp = torch.log(torch.where(weights > 0, weights, torch.ones_like(weights)))
    h = -(weights * logp).sum(dim=-1)
    h = h / math.log(weights.shape[-1])        # 0 = one-hot, 1 = uniform
    assert h.shape == weights.shape[:-1]
    return h
