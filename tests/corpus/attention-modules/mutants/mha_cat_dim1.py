# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: concat|shape|last dim
# diagnosis: mha_cat_dim1
# why: concatenates the heads' outputs along dim 1 (time) instead of the last dim
# may_fail: MultiHeadAttention::test_future_tokens*, MultiHeadAttention::test_moves_to*, MultiHeadAttention::test_follows_module_dtype*
# may_fail: MultiHeadAttention::test_causal_in_training_mode*
# may_fail: MultiHeadAttention::test_gradients_flow*, MultiHeadAttention::test_no_dropout*, MultiHeadAttention::test_dropout_*
# may_fail: MultiHeadAttention::test_tril_is_built_at_context_length*
# replace: for h in self.heads], dim=-1) ==> for h in self.heads], dim=1)
