# source: public code (code-search hit; a nanoGPT-style model.py): "torch.tril(torch.ones(config.block_size, config.block_size)).view(1, 1, config.block_size, config.block_size)"
# exercise: causal_mask
# accept: shape|\(1, ?1, ?T, ?T\)|4-?d|four dim|extra dim|dimensions|\(T, ?T\)|view
# why: returns the mask viewed as (1, 1, T, T), as the GPT buffer is, instead of a (T, T) mask
# base: base_functional
def causal_mask(T: int, device=None) -> torch.Tensor:
    rows = torch.arange(T, device=device).unsqueeze(1)
    cols = torch.arange(T, device=device).unsqueeze(0)
    # shaped like the GPT buffer so it lines up with (B, H, T, T) scores
    return (cols <= rows).view(1, 1, T, T)
