# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: device
# diagnosis: head_mask_built_in_forward
# why: registers tril but masks with a fresh CPU torch.tril(torch.ones(T, T)) built in forward, which fails off the CPU
# may_fail: *::test_moves_to_the_inputs_device*
# replace: wei.masked_fill(self.tril[:T, :T] == 0, ==> wei.masked_fill(torch.tril(torch.ones(T, T)) == 0,
