# source: classic (no public example found)
# exercise: softmax
# accept: in.?place|modif|overwrit|changes? (its|the) input|sub_|exp_|mutat
# why: uses sub_ and exp_ on the scores themselves, overwriting the caller's tensor (and breaking autograd on a leaf)
# base: base_functional
def softmax(scores: torch.Tensor, dim: int = -1) -> torch.Tensor:
    m = scores.amax(dim=dim, keepdim=True)
    m = torch.nan_to_num(m, neginf=0.0).detach()
    e = scores.sub_(m).exp_()  # in place: no extra T x T copies
    return e / e.sum(dim=dim, keepdim=True)
