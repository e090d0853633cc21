# source: https://github.com/Kyubyong/transformer/issues/55
# exercise: split_heads
# accept: dim(ension)? 0|first (dim|axis)|\(H, ?B|heads? (first|before the batch|in front)|batch|order|shape|stack
# why: chunks the channels into heads and torch.stack()s them on dim 0, giving (H, B, T, d_head) instead of (B, H, T, d_head)
# base: base_defensive

def split_heads(x: Tensor, n_heads: int) -> Tensor:
    _check_float("x", x)
    assert x.dim() == 3, "split_heads takes (B, T, C)"
    B, T, C = x.shape
    if n_heads <= 0 or C % n_heads != 0:
        raise ValueError(f"cannot split C={C} into {n_heads} equal heads")
    pieces = torch.chunk(x, n_heads, dim=-1)  # n_heads tensors of (B, T, d_head)
    return torch.stack(pieces)
