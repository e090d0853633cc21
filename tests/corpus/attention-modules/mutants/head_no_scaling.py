# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: scal|sqrt
# diagnosis: head_no_scaling
# why: forward forgets to scale the scores by 1/sqrt(head_size)
# may_fail: none
# replace: wei = q @ k.transpose(-2, -1) * self.head_size**-0.5 ==> wei = q @ k.transpose(-2, -1)
