# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: rate|dropout
# diagnosis: mha_heads_dropout_from_n_heads
# why: MultiHeadAttention builds its heads with a rate taken from another argument (1 / n_heads) instead of dropout
# may_fail: MultiHeadAttention::test_dropout_drops_at_the_asked_rate*, MultiHeadAttention::test_no_dropout_at_rate_zero_in_training_mode*, MultiHeadAttention::test_dropout_reaches_the_heads
# replace: SelfAttentionHead(d_model, head_size, context_length, dropout) ==> SelfAttentionHead(d_model, head_size, context_length, 1 / n_heads)
