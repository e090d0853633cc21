# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: weights
# clause: SelfAttentionHead.dropout_on_weights
# diagnosis: head_dropout_on_output
# why: the head applies dropout to its output (wei @ v) instead of to the attention weights
# may_fail: SelfAttentionHead::test_dropout_acts_on_the_weights
# replace: wei = self.dropout(wei)  # active only in training mode ==> pass  # no dropout on the weights...
# replace: return wei @ v  # (B, T, hs) ==> return self.dropout(wei @ v)  # ...but on the output
