# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: dropout.*proj|proj.*dropout
# clause: MultiHeadAttention.dropout_after_proj
# diagnosis: mha_no_output_dropout
# why: forward returns proj(out) without the dropout after the projection; the heads' own dropout hides the gap from the training-mode check
# may_fail: MultiHeadAttention::test_dropout_after_the_projection_in_training_mode
# replace: return self.dropout(self.proj(out)) ==> return self.proj(out)
