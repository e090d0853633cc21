# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: concat|shape|last dim
# why: concatenates the heads' outputs along dim 1 (time) instead of the last dim
# replace: for h in self.heads], dim=-1) ==> for h in self.heads], dim=1)
