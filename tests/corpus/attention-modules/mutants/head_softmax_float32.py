# expect: lose
# assignment: attention-modules
# exercise: SelfAttentionHead
# message: float64|dtype|Double|Float
# clause: modules.dtype
# diagnosis: head_softmax_float32
# why: forward takes the softmax with dtype=torch.float32 "for stability", so a module moved to float64 mixes float32 weights with float64 values
# replace: wei = torch.softmax(wei, dim=-1) ==> wei = torch.softmax(wei, dim=-1, dtype=torch.float32)
