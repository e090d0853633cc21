# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: dropout=0\.0|rate
# clause: SelfAttentionHead.dropout_rate
# diagnosis: head_dropout_rate_fixed
# why: the head drops its weights with a fixed rate of 0.1 (F.dropout(wei, 0.1, self.training)) instead of its dropout argument; eval mode and dropout=0.5 look right, only dropout=0.0 in training mode shows it
# may_fail: *::test_no_dropout_at_rate_zero_in_training_mode*, *::test_dropout_drops_at_the_asked_rate*
# replace: wei = self.dropout(wei)  # active only in training mode ==> wei = nn.functional.dropout(wei, 0.1, self.training)  # a fixed rate, not the dropout argument
