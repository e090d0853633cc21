# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: eval|random|rate
# diagnosis: head_dropout_always_on_fixed
# nondeterministic: true
# why: the head drops its weights with F.dropout(wei, p=0.1, training=True): its dropout argument and eval mode are both ignored, so every call draws new noise; only the checks of dropout and of the output in eval mode may fail, never causality, gradients, dtype, device or the gate
# may_fail: *::test_output_matches_reference_for_any_length*, *::test_no_dropout_in_eval_mode*, *::test_no_dropout_at_rate_zero_in_training_mode*, *::test_dropout_drops_at_the_asked_rate*, MultiHeadAttention::test_dropout_reaches_the_heads
# replace: wei = self.dropout(wei)  # active only in training mode ==> wei = nn.functional.dropout(wei, p=0.1, training=True)
