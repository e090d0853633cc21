# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: T <|shorter|context|shape
# diagnosis: head_tril_not_sliced
# why: masks with the full (context_length, context_length) tril instead of tril[:T, :T], so any T < context_length breaks
# may_fail: *::test_future_tokens*, *::test_moves_to*, *::test_follows_module_dtype*, *::test_gradients_flow*, *::test_no_dropout*, *::test_dropout_*
# may_fail: *::test_causal_in_training_mode*
# may_fail: *::test_tril_is_built_at_context_length*
# replace: self.tril[:T, :T] == 0 ==> self.tril == 0
