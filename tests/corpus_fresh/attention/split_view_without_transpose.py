# source: https://github.com/reczoo/FuxiCTR/issues/30
# exercise: split_heads
# accept: transpos|view|mix|tokens? and heads|reshape|permute
# why: views (B, T, C) straight as (B, H, T, d): tokens and heads get mixed
# base: base_notebook


def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError(f"C={C} is not a multiple of n_heads={n_heads}")
    d_head = C // n_heads
    return x.reshape(B, n_heads, T, d_head)
