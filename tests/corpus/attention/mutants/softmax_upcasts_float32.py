# expect: lose
# assignment: attention
# exercise: softmax
# message: dtype|float16|half
# diagnosis: softmax_upcasts_float32
# why: softmax computes in float32 for precision but forgets to cast back, so float16/bfloat16 input returns float32
# may_fail: none

import torch


def softmax(scores, dim=-1):
    x = scores.float()
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)
