# source: classic (no public example found)
# exercise: bag_of_past
# accept: column|sum\(0\)|dim ?=? ?0|rows? (do not|don.t) sum|normali[sz]\w* .*(column|wrong)
# why: normalises the tril matrix by its column sums (wei.sum(0)) instead of its row sums
# base: correct_tril_matmul

def bag_of_past(v):
    T = v.shape[-2]
    wei = torch.tril(torch.ones(T, T, device=v.device, dtype=v.dtype))
    wei = wei / wei.sum(0, keepdim=True)
    xbow = wei @ v
    return xbow
