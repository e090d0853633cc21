# source: https://github.com/jsbaan/transformer-from-scratch/pull/6
# exercise: merge_heads
# accept: permute|transpos|order|scrambl|mix|tokens?
# why: reshapes (B, H, T, D) straight to (B, T, H*D) without moving the heads next to the channels, mixing tokens
# base: correct_einsum

def merge_heads(x):
    B, H, T, D = x.shape
    return x.reshape(B, T, H * D)
