# expect: lose
# assignment: attention-modules
# exercise: MultiHeadAttention
# message: manual_seed
# clause: MultiHeadAttention.dropout_after_proj
# diagnosis: mha_seed_in_forward
# why: MultiHeadAttention's forward calls torch.manual_seed(1337) before running its heads: every call draws the same dropout masks, and the caller's random state is reset
# may_fail: MultiHeadAttention::test_dropout_active_in_training_mode*
# replace: out = torch.cat([h(x) for h in self.heads], dim=-1)  # (B, T, d_model) ==> torch.manual_seed(1337); out = torch.cat([h(x) for h in self.heads], dim=-1)  # the same masks on every call
