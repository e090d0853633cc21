# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: dropout=0\.0|rate
# clause: MultiHeadAttention.dropout_rate
# diagnosis: mha_dropout_rate_fixed
# why: the dropout after proj uses a fixed rate of 0.2 (F.dropout(..., 0.2, self.training)) instead of the dropout argument; eval mode and dropout=0.5 look right, only dropout=0.0 in training mode shows it
# may_fail: MultiHeadAttention::test_no_dropout_at_rate_zero_in_training_mode*
# replace: return self.dropout(self.proj(out)) ==> return nn.functional.dropout(self.proj(out), 0.2, self.training)  # a fixed rate
