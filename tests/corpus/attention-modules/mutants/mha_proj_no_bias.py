# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: proj|bias
# diagnosis: mha_proj_no_bias
# why: proj is nn.Linear(d_model, d_model, bias=False) although the contract's proj has a bias
# replace: self.proj = nn.Linear(d_model, d_model) ==> self.proj = nn.Linear(d_model, d_model, bias=False)
