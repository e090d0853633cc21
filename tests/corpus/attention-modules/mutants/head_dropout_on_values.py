# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: values
# clause: SelfAttentionHead.dropout_on_weights
# diagnosis: head_dropout_on_values
# why: the head applies its dropout to the values v = value(x) instead of to the attention weights
# may_fail: *::test_dropout_acts_on_the_weights*, *::test_dropout_drops_at_the_asked_rate*
# replace: v = self.value(x)  # (B, T, hs) ==> v = self.dropout(self.value(x))  # dropout on the values...
# replace: wei = self.dropout(wei)  # active only in training mode ==> pass  # ...not on the weights
