# source: https://github.com/jsbaan/transformer-from-scratch/pull/6
# exercise: merge_heads
# accept: transpos|permute|mix|scrambl|tokens?|order|swap
# why: reshapes (B, H, T, d) to (B, T, H*d) without swapping H and T back first
# base: base_loops


def merge_heads(x):
    B, H, T, d = x.shape
    return x.reshape(B, T, H * d)
