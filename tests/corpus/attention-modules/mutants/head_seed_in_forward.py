# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: manual_seed
# clause: SelfAttentionHead.dropout_only_in_training
# diagnosis: head_seed_in_forward
# why: forward calls torch.manual_seed(1337): dropout is applied to the weights, but every call draws the same mask, and the caller's random state is reset
# may_fail: *::test_dropout_active_in_training_mode*
# replace: B, T, C = x.shape ==> torch.manual_seed(1337); B, T, C = x.shape  # the same dropout mask on every call
