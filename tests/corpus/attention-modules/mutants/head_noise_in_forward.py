# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: eval|random
# diagnosis: head_noise_in_forward
# nondeterministic: true
# why: forward adds torch.randn noise to its output on every call, in eval mode too; only the checks of eval mode and of the output may fail, never causality, gradients, dtype, device or the gate
# may_fail: *::test_output_matches_reference_for_any_length*, *::test_no_dropout_in_eval_mode*, *::test_no_dropout_at_rate_zero_in_training_mode*, *::test_dropout_drops_at_the_asked_rate*, *::test_dropout_acts_on_the_weights, MultiHeadAttention::test_dropout_reaches_the_heads
# replace: return wei @ v  # (B, T, hs) ==> return wei @ v + 0.01 * torch.randn_like(v)  # noise on every call
