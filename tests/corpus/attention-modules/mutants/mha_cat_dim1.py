# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: concat|shape|last dim
# diagnosis: mha_cat_dim1
# why: concatenates the heads' outputs along dim 1 (time) instead of the last dim
# replace: for h in self.heads], dim=-1) ==> for h in self.heads], dim=1)
