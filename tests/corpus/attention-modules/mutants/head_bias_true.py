# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: bias
# diagnosis: head_bias_true
# why: query/key/value are nn.Linear with the default bias=True
# may_fail: SelfAttentionHead::test_query_key_value_are_linears_without_bias, *::test_weights_load_under_contract_names*
# replace: self.query = nn.Linear(d_model, head_size, bias=False) ==> self.query = nn.Linear(d_model, head_size, bias=True)
# replace: self.key = nn.Linear(d_model, head_size, bias=False) ==> self.key = nn.Linear(d_model, head_size, bias=True)
# replace: self.value = nn.Linear(d_model, head_size, bias=False) ==> self.value = nn.Linear(d_model, head_size, bias=True)
