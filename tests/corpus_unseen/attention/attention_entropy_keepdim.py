# source: classic (no public example found)
# exercise: attention_entropy
# accept: keepdim|shape|extra (dim|axis)|squeeze|\(\.\.\., ?t, ?1\)
# why: sums with keepdim=True, returning shape (..., T, 1) instead of (..., T)
# base: correct_uniform_attention

def attention_entropy(weights):
    is_zero = (weights == 0).to(weights.dtype)
    return -(weights * torch.log(weights + is_zero)).sum(-1, keepdim=True)
