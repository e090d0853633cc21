# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: proj
# diagnosis: mha_missing_proj
# why: never creates or applies the proj Linear: returns the concatenated heads directly
# may_fail: MultiHeadAttention::test_weights_load_under_contract_names*, MultiHeadAttention::test_proj_is_a_linear_d_model_to_d_model
# replace: self.proj = nn.Linear(d_model, d_model) ==> self.projection = nn.Linear(d_model, d_model)
# replace: self.dropout(self.proj(out)) ==> self.dropout(self.projection(out))
