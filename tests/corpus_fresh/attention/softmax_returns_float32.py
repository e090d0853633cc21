# source: https://github.com/tinygrad/tinygrad/pull/5100
# exercise: softmax
# accept: dtype|float32|half|float16|bfloat16|precision|cast
# why: upcasts to float32 for stability and never casts back to the input dtype
# base: base_where


def softmax(scores, dim=-1):
    s = scores.float()
    m = s.amax(dim=dim, keepdim=True).detach()
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    num = torch.exp(s - m)
    return num / num.sum(dim=dim, keepdim=True)
