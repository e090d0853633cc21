# source: https://github.com/thegregyang/NTK4A/issues/3
# exercise: scale_scores
# accept: by (d|head_size)\b|1 ?/ ?d\b|not (its|the) (square )?root|instead of (its |the )?(sqrt|square root)|without (the )?(sqrt|square root)|head_size itself
# why: divides by head_size itself (the 1/d scaling) instead of by its square root
# base: correct_logsumexp

def scale_scores(scores: torch.Tensor, head_size: int) -> torch.Tensor:
    return scores * (1.0 / head_size)
