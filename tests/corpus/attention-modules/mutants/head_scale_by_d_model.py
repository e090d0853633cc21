# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: scal|sqrt|head_size
# diagnosis: head_scale_by_d_model
# why: scales by C ** -0.5 (d_model, the input width) instead of head_size ** -0.5
# may_fail: none
# replace: wei = q @ k.transpose(-2, -1) * self.head_size**-0.5 ==> wei = q @ k.transpose(-2, -1) * C**-0.5
