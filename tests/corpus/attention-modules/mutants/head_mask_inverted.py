# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: causal|future|mask
# diagnosis: head_mask_inverted
# why: masks where tril == 1 (the past) instead of where tril == 0 (the future)
# may_fail: *::test_future_tokens_do_not_change_past_outputs*
# may_fail: *::test_causal_in_training_mode*
# replace: self.tril[:T, :T] == 0 ==> self.tril[:T, :T] == 1
