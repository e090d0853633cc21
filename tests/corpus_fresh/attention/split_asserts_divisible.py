# source: public code (code-search hit; ramzd18/deepseek-sae src/transformer.py): "assert d_model % num_heads == 0, \"d_model must be divisible by num_heads\""
# exercise: split_heads
# accept: ValueError|assert|raise|divisib|indivisible|exception
# why: checks divisibility with assert (AssertionError) instead of raising ValueError
# base: base_einsum


def split_heads(x, n_heads):
    B, T, C = x.shape
    assert C % n_heads == 0, "C must be divisible by n_heads"
    return torch.einsum("bthd->bhtd", x.reshape(B, T, n_heads, C // n_heads))
