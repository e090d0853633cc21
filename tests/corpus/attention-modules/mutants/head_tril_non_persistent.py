# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: state_dict|buffer|saved
# diagnosis: head_tril_non_persistent
# why: tril registered with persistent=False, so it is missing from state_dict
# replace: torch.ones(context_length, context_length))) ==> torch.ones(context_length, context_length)), persistent=False)
