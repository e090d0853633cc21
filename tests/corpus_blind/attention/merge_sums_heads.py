# source: https://github.com/pbloem/former/issues/23
# exercise: merge_heads
# accept: \bsum|\badd|averag|mean|concat|side by side|H ?\* ?d|collaps|shape
# why: adds the heads together (x.sum(dim=1)) instead of placing them side by side: (B, T, d_head) instead of (B, T, H*d_head)
# base: base_colab_cells

def merge_heads(x):
    # combine the heads back into one representation per token
    return x.sum(dim=1)
