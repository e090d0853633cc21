# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: dropout
# clause: SelfAttentionHead.dropout_only_in_training
# diagnosis: head_never_drops
# why: the head builds its nn.Dropout but never applies it, so training mode has no dropout on the weights
# may_fail: SelfAttentionHead::test_dropout_active_in_training_mode*, SelfAttentionHead::test_dropout_acts_on_the_weights, *::test_dropout_drops_at_the_asked_rate*
# replace: wei = self.dropout(wei)  # active only in training mode ==> pass  # self.dropout is never used
