# source: https://github.com/facebookresearch/fairseq/issues/2598
# exercise: merge_heads
# accept: contiguous|view|stride|reshape
# why: .view on the permuted (non-contiguous) tensor raises "view size is not compatible with input tensor's size and stride"
# base: correct_additive_mask

def merge_heads(x):
    B, H, T, hd = x.shape
    return x.permute(0, 2, 1, 3).view(B, T, H * hd)
