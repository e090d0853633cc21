# source: https://github.com/RVC-Boss/GPT-SoVITS/issues/965
# exercise: causal_mask
# accept: diagonal|itself|self|own position|off[- ]by[- ]one|current
# why: tril with diagonal=-1 drops the diagonal, so no token may attend to itself (row 0 allows nothing)
# base: correct_tril_matmul

def causal_mask(T, device=None):
    tril = torch.tril(torch.ones(T, T, device=device), diagonal=-1)
    return tril.bool()
