# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: differs|Concatenate
# clause: MultiHeadAttention.concat_in_order
# diagnosis: mha_cat_reversed
# why: concatenates the heads' outputs in reverse order, so head 0's channels land where proj expects the last head's
# may_fail: none
# replace: for h in self.heads], dim=-1) ==> for h in reversed(self.heads)], dim=-1)
