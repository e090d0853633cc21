# source: classic (no public example found)
# exercise: softmax
# accept: \bdim\b|axis|along
# why: takes the max along the last axis but sums along dim: for any other dim the shift is not constant along dim and the result is wrong
# base: base_functional
def softmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = scores.amax(dim=-1, keepdim=True)  # row max
    m = torch.nan_to_num(m, neginf=0.0).detach()
    e = (scores - m).exp()
    return e / e.sum(dim=dim, keepdim=True)
