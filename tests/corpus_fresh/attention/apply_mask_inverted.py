# source: https://github.com/hkproj/pytorch-transformer/issues/19
# exercise: apply_mask
# accept: invert|opposite|true|allowed|~|not\b|flip|wrong (positions|side)
# why: fills -inf where the mask is True (the allowed positions) instead of where it is False
# base: base_einsum


def apply_mask(scores, mask):
    return scores.masked_fill(mask, float("-inf"))
