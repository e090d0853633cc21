# source: https://github.com/lucidrains/halonet-pytorch/issues/4
# exercise: apply_mask
# accept: invert|revers|opposite|~mask|where (the )?mask is true|allowed|flipped|swap
# why: torch.where arguments swapped: -inf goes where the mask is True (allowed) and the blocked scores are kept
# base: correct_einsum

def apply_mask(scores, mask):
    neg_inf = torch.full_like(scores, float('-inf'))
    return torch.where(mask, neg_inf, scores)
