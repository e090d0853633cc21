# source: classic (no public example found)
# exercise: merge_heads
# accept: flatten|shape|\(B, ?T ?\*|time|tokens|two dims|2-?d|T ?\* ?C|start_dim|too many
# why: calls .flatten(1) instead of .flatten(2) after the transpose, folding time into the channels: (B, T*H*d_head) instead of (B, T, H*d_head)
# base: base_terse

def merge_heads(x):
    return x.transpose(1, 2).flatten(1)
