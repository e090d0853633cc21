# source: https://github.com/hyunwoongko/transformer/issues/15
# exercise: split_heads
# accept: transpos|permute|mix\w* (tokens|time)|scrambl|interleav|order
# why: views straight to (B, n_heads, T, hs) without the transpose, so heads mix tokens and channels
# base: correct_tril_matmul

def split_heads(x, n_heads):
    B, T, C = x.shape
    if C % n_heads != 0:
        raise ValueError("n_heads must divide C")
    hs = C // n_heads
    return x.view(B, n_heads, T, hs)
