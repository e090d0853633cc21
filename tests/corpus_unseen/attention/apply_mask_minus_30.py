# source: classic (no public example found)
# exercise: apply_mask
# accept: -30|finite|not -inf|instead of -inf|(large|big|small) negative|fill value|exactly (0|zero)|non-?zero weight
# why: fills with -30 instead of -inf, so masked positions keep a small non-zero weight
# base: correct_logsumexp

def apply_mask(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return scores.masked_fill(~mask, -30.0)
