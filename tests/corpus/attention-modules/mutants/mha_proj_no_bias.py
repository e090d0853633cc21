# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: proj|bias
# diagnosis: mha_proj_no_bias
# why: proj is nn.Linear(d_model, d_model, bias=False) although the contract's proj has a bias
# may_fail: MultiHeadAttention::test_weights_load_under_contract_names*, MultiHeadAttention::test_proj_is_a_linear_d_model_to_d_model
# replace: self.proj = nn.Linear(d_model, d_model) ==> self.proj = nn.Linear(d_model, d_model, bias=False)
