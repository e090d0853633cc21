# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: eval|dropout|training
# diagnosis: mha_dropout_in_eval
# nondeterministic: true
# why: output dropout via F.dropout(..., training=True), so it stays on in eval mode
# may_fail: MultiHeadAttention::test_no_dropout_in_eval_mode*
# replace: return self.dropout(self.proj(out)) ==> return nn.functional.dropout(self.proj(out), self.dropout.p, training=True)
