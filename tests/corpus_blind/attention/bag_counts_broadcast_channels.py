# source: classic (no public example found)
# exercise: bag_of_past
# accept: channel|last (dim|axis)|broadcast|feature|column|\bd\b|unsqueeze|\[:, ?None\]|shape|\(T, ?1\)
# why: divides the running sums by a plain (T,) tensor of counts: it broadcasts along the channels, not the positions, and only lines up when d == T
# base: base_terse

def bag_of_past(v):
    return v.cumsum(-2) / torch.arange(1, v.shape[-2] + 1, dtype=v.dtype, device=v.device)
