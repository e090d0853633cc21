# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: context_length
# clause: SelfAttentionHead.tril_shape
# diagnosis: head_tril_fixed_block_size
# why: tril is built at a hard-coded block size of 8 instead of context_length; right at context_length 8, but longer inputs crash
# may_fail: *::test_tril_is_built_at_context_length*
# replace: self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length))) ==> self.register_buffer("tril", torch.tril(torch.ones(8, 8)))  # BLOCK_SIZE
