# source: https://github.com/pytorch/examples/issues/649
# exercise: causal_mask
# accept: triu|upper|future|flip|invert|transpos|lower.?triang|wrong (side|triangle)
# why: builds the upper triangle: each token may look at the future, not the past
# base: base_notebook


def causal_mask(T, device=None):
    full = torch.ones((T, T), dtype=torch.bool, device=device)
    mask = torch.triu(full)
    assert mask.dtype == torch.bool
    return mask
