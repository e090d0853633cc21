# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: ValueError
# diagnosis: mha_assert_divisible
# why: MultiHeadAttention signals d_model % n_heads != 0 with an AssertionError (what a failing assert raises) instead of ValueError
# may_fail: MultiHeadAttention::test_rejects_d_model_not_divisible_by_n_heads
# replace: raise ValueError( ==> raise AssertionError(
