# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: ValueError|divisible
# diagnosis: mha_no_valueerror
# why: no divisibility check: d_model % n_heads != 0 silently builds heads of size d_model // n_heads
# replace: if d_model % n_heads != 0: ==> if False:  # no check
