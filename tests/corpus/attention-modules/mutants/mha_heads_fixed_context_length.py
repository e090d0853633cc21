# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: context_length
# clause: MultiHeadAttention.heads
# diagnosis: mha_heads_fixed_context_length
# why: MultiHeadAttention builds its heads with a hard-coded context length of 8 instead of passing its context_length on
# may_fail: MultiHeadAttention::test_tril_is_built_at_context_length*
# replace: SelfAttentionHead(d_model, head_size, context_length, dropout) ==> SelfAttentionHead(d_model, head_size, 8, dropout)
