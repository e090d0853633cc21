# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: ValueError|divisible
# diagnosis: mha_no_valueerror
# why: no divisibility check: d_model % n_heads != 0 silently builds heads of size d_model // n_heads
# may_fail: MultiHeadAttention::test_rejects_d_model_not_divisible_by_n_heads
# replace: if d_model % n_heads != 0: ==> if False:  # no check
