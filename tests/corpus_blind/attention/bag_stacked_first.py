# source: classic (no public example found)
# exercise: bag_of_past
# accept: stack|dim(ension)? 0|first (dim|axis)|shape|order of (the )?(dims|axes)|batch|leading|\(T, ?B
# why: averages v[..., :t+1, :] in a loop and torch.stack()s the rows on dim 0: a plain (T, d) input is fine, but batched input comes back (T, B, d)
# base: base_defensive

def bag_of_past(v: Tensor) -> Tensor:
    _check_float("v", v)
    T = v.shape[-2]
    rows = []
    for t in range(T):
        rows.append(v[..., : t + 1, :].mean(dim=-2))  # (..., d): mean of positions 0..t
    return torch.stack(rows)
