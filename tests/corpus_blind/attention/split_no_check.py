# source: classic (no public example found)
# exercise: split_heads
# accept: valueerror|divisib|not divisible|no check|never checks|remainder|%|evenly
# why: never checks C % n_heads: an uneven split fails inside reshape with a RuntimeError instead of raising ValueError
# base: base_colab_cells

# Step 8: heads -- (B, T, C) -> (B, T, H, d) -> (B, H, T, d)
def split_heads(x, n_heads):
    B, T, C = x.shape
    return x.reshape(B, T, n_heads, C // n_heads).transpose(1, 2)
