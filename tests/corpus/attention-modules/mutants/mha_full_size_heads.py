# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: head_size|d_model // n_heads|shape
# diagnosis: mha_full_size_heads
# why: each head gets head_size=d_model instead of d_model // n_heads, and proj is widened to Linear(n_heads * d_model, d_model) to fit
# may_fail: MultiHeadAttention::*
# replace: head_size = d_model // n_heads ==> head_size = d_model
