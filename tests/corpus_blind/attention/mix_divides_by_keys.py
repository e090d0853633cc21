# source: classic (no public example found)
# exercise: mix_values
# accept: divid|averag|mean|number of (keys|positions|tokens|columns)|\bby S\b|/ ?S\b|shape\[-1\]
# why: divides weights @ v by S, the number of keys, as if averaging: the weights already sum to 1, so every output is S times too small
# base: base_defensive

def mix_values(weights: Tensor, v: Tensor) -> Tensor:
    _check_float("weights", weights)
    _check_float("v", v)
    assert weights.shape[-1] == v.shape[-2], "weights (..., T, S) need v (..., S, d_v)"
    S = weights.shape[-1]
    return torch.matmul(weights, v) / S  # average over the S keys
