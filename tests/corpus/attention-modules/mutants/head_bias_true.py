# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: bias
# diagnosis: head_bias_true
# why: query/key/value are nn.Linear with the default bias=True
# replace: self.query = nn.Linear(d_model, head_size, bias=False) ==> self.query = nn.Linear(d_model, head_size, bias=True)
# replace: self.key = nn.Linear(d_model, head_size, bias=False) ==> self.key = nn.Linear(d_model, head_size, bias=True)
# replace: self.value = nn.Linear(d_model, head_size, bias=False) ==> self.value = nn.Linear(d_model, head_size, bias=True)
