# source: classic (no public example found)
# exercise: mix_values
# accept: transpos|v\.T|vᵀ|swap|d_v|last two dims
# why: copies the scores pattern and multiplies by v with its last two dims swapped: weights @ vᵀ only lines up when d_v == S, and is the wrong product then
# base: base_shapes
def mix_values(weights, v):
    # weights (..., T, S)   v (..., S, d_v)   ->   (..., T, d_v)
    v_t = v.transpose(-2, -1)                  # (..., d_v, S)
    assert weights.shape[-1] == v_t.shape[-2]
    out = torch.matmul(weights, v_t)
    return out
