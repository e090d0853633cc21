# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: dim|sum to 1|causal
# diagnosis: head_softmax_wrong_dim
# why: softmax over dim=1 (the query axis) instead of the last dim
# may_fail: *::test_future_tokens_do_not_change_past_outputs*
# may_fail: *::test_causal_in_training_mode*
# replace: wei = torch.softmax(wei, dim=-1) ==> wei = torch.softmax(wei, dim=1)
