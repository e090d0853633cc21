# source: https://github.com/karpathy/nanoGPT/blob/HEAD/model.py
# exercise: split_heads
# accept: valueerror|assert|raise|indivisible|divisib|error
# why: checks C % n_heads with assert (AssertionError, as nanoGPT's config check does) instead of raising ValueError
# base: correct_head_loop

def split_heads(x, n_heads):
    B, T, C = x.shape
    assert C % n_heads == 0
    head_size = C // n_heads
    return x.view(B, T, n_heads, head_size).transpose(1, 2)  # (B, nh, T, hs)
