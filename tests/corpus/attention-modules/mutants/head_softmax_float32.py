# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: float64|dtype|Double|Float
# clause: modules.dtype
# diagnosis: head_softmax_float32
# why: forward takes the softmax with dtype=torch.float32 "for stability", so a module moved to float64 mixes float32 weights with float64 values
# may_fail: *::test_follows_module_dtype*, *::test_gradients_flow_to_the_input*
# replace: wei = torch.softmax(wei, dim=-1) ==> wei = torch.softmax(wei, dim=-1, dtype=torch.float32)
