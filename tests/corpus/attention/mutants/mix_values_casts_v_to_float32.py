# expect: lose
# assignment: attention
# exercise: mix_values
# message: dtype|Half|Double|BFloat16|float
# clause: general.dtype
# diagnosis: mix_values_casts_v_to_float32
# why: mix_values casts v to float32 "to be safe", so float16, bfloat16 and float64 inputs fail with a dtype mismatch in the matmul
# may_fail: none

# The reference's definition(s) with this case's change, whole: they replace the reference's.
def mix_values(weights: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Weighted sum of the values: weights (..., T, S) @ v (..., S, d_v) -> (..., T, d_v)."""
    return weights @ v.float()
