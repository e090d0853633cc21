# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: ModuleList|parameters|registered
# diagnosis: mha_heads_python_list
# why: heads kept in a plain Python list: their parameters and buffers are not registered, .to() and state_dict miss them
# replace: self.heads = nn.ModuleList( ==> self.heads = list(
