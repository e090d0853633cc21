# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: proj|concatenate
# diagnosis: mha_proj_defined_not_applied
# why: creates proj but forgets to apply it in forward
# may_fail: none
# replace: return self.dropout(self.proj(out)) ==> return self.dropout(out)
