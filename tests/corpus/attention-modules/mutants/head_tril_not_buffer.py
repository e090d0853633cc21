# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: buffer|state_dict|device
# diagnosis: head_tril_not_buffer
# why: tril is a plain tensor attribute, not a registered buffer: not in state_dict and not moved by .to()
# may_fail: *::test_tril_is_a_registered_buffer*, *::test_moves_to_the_inputs_device*
# replace: self.register_buffer("tril", torch.tril(torch.ones(context_length, context_length))) ==> self.tril = torch.tril(torch.ones(context_length, context_length))
