# source: classic (no public example found)
# exercise: split_heads
# accept: channel|interleav|strid|contiguous (block|slice|range)|order|every (H|n_heads)|\(B, ?T, ?(d_head|hs|D), ?(H|n_heads)\)|reshape
# why: reshapes to (B, T, d_head, H) and moves the last axis forward: head h gets channels h, h+H, h+2H, ... instead of the block h*d_head:(h+1)*d_head
# base: base_shapes
def split_heads(x, n_heads):
    # (B, T, C) -> (B, H, T, C // H)
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError(f"C={C} is not a multiple of n_heads={n_heads}")
    d_head = C // n_heads
    x4 = x.reshape(B, T, d_head, n_heads)      # (B, T, d_head, H)
    out = x4.permute(0, 3, 1, 2)               # (B, H, T, d_head)
    assert out.shape == (B, n_heads, T, d_head)
    return out
