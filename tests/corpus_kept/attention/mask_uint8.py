# source: https://github.com/kimiyoung/transformer-xl/issues/115
# exercise: causal_mask
# accept: bool|uint8|byte|dtype|0/1|ones and zeros|integer
# why: builds the old-style uint8 (byte) 0/1 mask instead of a bool mask
# base: base_shapes
def causal_mask(T, device=None):
    # (T, T), 1 where row t may look at column s
    mask = torch.tril(torch.ones(T, T, dtype=torch.uint8, device=device))
    assert mask.shape == (T, T)
    return mask
