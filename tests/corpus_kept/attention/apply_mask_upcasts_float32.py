# source: https://github.com/huggingface/transformers/pull/17437
# exercise: apply_mask
# accept: dtype|float32|float64|double|precision|\.float\(\)|half|float16|keep
# why: masks a .float() copy of the scores: float64 and float16 scores come back as float32
# base: base_shapes
def apply_mask(scores, mask):
    # scores (..., T, S), mask broadcastable, False -> -inf
    assert mask.dtype == torch.bool
    # mask in float32 so -inf is safe even for half precision
    out = scores.float().masked_fill(~mask, float("-inf"))
    assert out.shape == scores.shape
    return out
