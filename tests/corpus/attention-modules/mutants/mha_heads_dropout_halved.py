# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: rate|dropout
# diagnosis: mha_heads_dropout_halved
# why: MultiHeadAttention builds its heads with half its dropout rate (dropout / 2); every other check passes, only the measured rate of each head shows it
# may_fail: MultiHeadAttention::test_dropout_drops_at_the_asked_rate*
# replace: SelfAttentionHead(d_model, head_size, context_length, dropout) ==> SelfAttentionHead(d_model, head_size, context_length, dropout / 2)
