# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: eval|dropout|training
# diagnosis: head_dropout_in_eval
# nondeterministic: true
# why: uses F.dropout(wei, p, training=True), so dropout stays on in eval mode
# may_fail: *::test_no_dropout_in_eval_mode*
# replace: wei = self.dropout(wei) ==> wei = nn.functional.dropout(wei, self.dropout.p, training=True)
