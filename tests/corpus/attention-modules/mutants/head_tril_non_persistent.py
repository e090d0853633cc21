# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: state_dict|buffer|saved
# diagnosis: head_tril_non_persistent
# why: tril registered with persistent=False, so it is missing from state_dict
# may_fail: *::test_tril_is_a_registered_buffer*
# replace: torch.ones(context_length, context_length))) ==> torch.ones(context_length, context_length)), persistent=False)
