# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: heads.*dropout|dropout.*heads
# clause: MultiHeadAttention.heads_get_dropout
# diagnosis: mha_heads_without_dropout
# why: MultiHeadAttention builds its heads without passing dropout on, so the heads' attention weights are never dropped; the dropout after proj still acts, which hides the gap from every other dropout check
# may_fail: MultiHeadAttention::test_dropout_reaches_the_heads, MultiHeadAttention::test_dropout_drops_at_the_asked_rate*
# replace: SelfAttentionHead(d_model, head_size, context_length, dropout) ==> SelfAttentionHead(d_model, head_size, context_length)
