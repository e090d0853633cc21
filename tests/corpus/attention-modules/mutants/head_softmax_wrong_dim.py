# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: dim|sum to 1|causal
# diagnosis: head_softmax_wrong_dim
# why: softmax over dim=1 (the query axis) instead of the last dim
# replace: wei = torch.softmax(wei, dim=-1) ==> wei = torch.softmax(wei, dim=1)
