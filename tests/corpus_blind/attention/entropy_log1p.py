# source: classic (no public example found)
# exercise: attention_entropy
# accept: log1p|log\(1 ?\+ ?p\)|log of 1 ?\+|1 ?\+ ?p|log\(p ?\+ ?1\)
# why: uses torch.log1p(p), log(1 + p), instead of log(p): no NaN, but the values are not the entropy
# base: base_defensive

def attention_entropy(weights: Tensor) -> Tensor:
    _check_float("weights", weights)
    log_p = torch.log1p(weights)  # log1p is the numerically safe log near 0
    return -torch.sum(weights * log_p, dim=-1)  # (..., T)
