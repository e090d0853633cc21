# source: https://github.com/TransformerLensOrg/TransformerLens/issues/284
# exercise: causal_mask
# accept: invert|inverse|opposite|upper|triu|future|blocked|flipped|true where|negat
# why: returns triu(diagonal=1), the positions to block (True = future), the opposite of True = allowed
# base: correct_additive_mask

def causal_mask(T, device=None):
    return torch.triu(torch.ones(T, T, device=device), diagonal=1).bool()
