# expect: lose
# assignment: attention
# exercise: mix_values
# message: dtype|Half|Double|BFloat16|float
# clause: general.dtype
# diagnosis: mix_values_casts_v_to_float32
# why: mix_values casts v to float32 "to be safe", so float16, bfloat16 and float64 inputs fail with a dtype mismatch in the matmul
# may_fail: none
# replace: return weights @ v ==> return weights @ v.float()
