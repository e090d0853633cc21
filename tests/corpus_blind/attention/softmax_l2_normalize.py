# source: classic (no public example found)
# exercise: softmax
# accept: l2|euclidean|p ?= ?2|squares|square root|sqrt|length|vector norm|2-norm
# why: normalises the exponentials with F.normalize, whose default p=2 divides by the Euclidean length of the row, not by its sum
# base: base_defensive

import torch.nn.functional as F


def softmax(scores: Tensor, dim: int = -1) -> Tensor:
    _check_float("scores", scores)
    with torch.no_grad():
        shift = torch.amax(scores, dim=dim, keepdim=True)
        shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
    numer = torch.exp(scores - shift)
    return F.normalize(numer, dim=dim)  # scale each row so it is normalised
