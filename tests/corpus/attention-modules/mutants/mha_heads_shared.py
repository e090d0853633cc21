# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: parameters|independent|distinct|heads
# diagnosis: mha_heads_shared
# why: nn.ModuleList([SelfAttentionHead(...)] * n_heads) repeats ONE head n_heads times, so all heads share weights
# may_fail: MultiHeadAttention::test_heads_are_a_modulelist_of_self_attention_heads
# replace: SelfAttentionHead(d_model, head_size, context_length, dropout) ==> [SelfAttentionHead(d_model, head_size, context_length, dropout)]
# replace: for _ in range(n_heads) ==> * n_heads
