# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: ValueError
# diagnosis: mha_assert_divisible
# why: MultiHeadAttention signals d_model % n_heads != 0 with an AssertionError (what a failing assert raises) instead of ValueError
# replace: raise ValueError( ==> raise AssertionError(
