# source: https://github.com/CSSLab/maia2/pull/14
# exercise: apply_mask
# accept: -inf|minus infinity|negative infinity|zero|exp\(0\)|still get (a )?weight|non-?zero weight|future
# why: puts 0 at the blocked positions instead of -inf, so after the softmax the future still gets weight exp(0)
# base: base_functional
def apply_mask(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    # blocked positions get a score of 0
    return torch.where(mask, scores, torch.zeros_like(scores))
