# source: https://github.com/gazelle93/Transformer-Various-Positional-Encoding/issues/1
# exercise: merge_heads
# accept: unpack|order|\(B, ?H, ?T|\(B, ?T, ?H|mislabel|swap|which (dim|axis)
# why: unpacks x.shape as (B, T, H, d_head) although x is (B, H, T, d_head), so the final reshape uses the wrong sizes and mixes heads and tokens
# base: base_shapes
def merge_heads(x):
    # (B, T, H, d_head) -> (B, T, H * d_head)
    B, T, H, d_head = x.shape
    x4 = x.permute(0, 2, 1, 3)
    out = x4.reshape(B, T, H * d_head)         # (B, T, C)
    assert out.shape == (B, T, H * d_head)
    return out
