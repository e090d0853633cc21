# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: ModuleList|parameters|registered
# diagnosis: mha_heads_python_list
# why: heads kept in a plain Python list: their parameters and buffers are not registered, .to() and state_dict miss them
# may_fail: MultiHeadAttention::test_heads_are_a_modulelist_of_self_attention_heads, MultiHeadAttention::test_weights_load_under_contract_names*
# may_fail: MultiHeadAttention::test_tril_is_a_registered_buffer*, MultiHeadAttention::test_moves_to_the_inputs_device*
# may_fail: MultiHeadAttention::test_follows_module_dtype*, MultiHeadAttention::test_gradients_flow_to_the_input*
# may_fail: MultiHeadAttention::test_no_dropout_in_eval_mode*
# replace: self.heads = nn.ModuleList( ==> self.heads = list(
