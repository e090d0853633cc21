# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: T <|shorter|context|shape
# diagnosis: head_tril_not_sliced
# why: masks with the full (context_length, context_length) tril instead of tril[:T, :T], so any T < context_length breaks
# replace: self.tril[:T, :T] == 0 ==> self.tril == 0
