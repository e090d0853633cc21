# source: classic (no public example found)
# exercise: bag_of_past
# accept: \bdim\b|axis|channel|feature|time|positions|cumsum
# why: takes the running sum along the last dim (the channels) instead of along time (dim -2)
# base: base_shapes
def bag_of_past(v):
    # v (..., T, d) -> (..., T, d), row t = mean of rows 0..t
    T = v.shape[-2]
    running = torch.cumsum(v, dim=-1)                                  # (..., T, d)
    n = torch.arange(1, T + 1, dtype=v.dtype, device=v.device)          # (T,)
    out = running / n.reshape(T, 1)                                     # (..., T, d)
    assert out.shape == v.shape
    return out
