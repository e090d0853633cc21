# source: https://github.com/reczoo/FuxiCTR/issues/30
# exercise: split_heads
# accept: transpos|permute|swap|\(B, ?T, ?(H|n_heads)|order of (the )?dim|heads? (axis|dim)
# why: reshapes to (B, T, H, d_head) and returns that: the heads and time axes are never swapped to (B, H, T, d_head)
# base: base_notebook_plt
# step 8: heads
def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads:
        raise ValueError(f"can't split {C} channels into {n_heads} heads")
    hs = C // n_heads
    return x.reshape(B, T, n_heads, hs)
